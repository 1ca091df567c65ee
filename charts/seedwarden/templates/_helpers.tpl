{{/* Labels of every object; the kustomize base carries the same two. */}}
{{- define "seedwarden.labels" -}}
app.kubernetes.io/name: seedwarden
app.kubernetes.io/part-of: seedwarden
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* Labels of the pods and of what selects them. */}}
{{- define "seedwarden.selectorLabels" -}}
app.kubernetes.io/name: seedwarden
app.kubernetes.io/component: webhook
{{- end }}

{{- define "seedwarden.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}

{{/* The issuer of the serving certificate: the chart's CA or the user's. */}}
{{- define "seedwarden.issuerRef" -}}
{{- $i := .Values.certManager.issuer -}}
group: {{ $i.group | default "cert-manager.io" }}
kind: {{ if $i.name }}{{ $i.kind | default "Issuer" }}{{ else }}Issuer{{ end }}
name: {{ $i.name | default "seedwarden-ca" }}
{{- end }}

{{/*
The configuration file: values.config with the fields that must agree with
other values or with the release namespace set from them.
*/}}
{{- define "seedwarden.config" -}}
{{- $cfg := deepCopy .Values.config -}}
{{- $_ := set $cfg "gardenNamespace" .Values.gardenNamespace -}}
{{- $placement := get $cfg "placement" | default dict -}}
{{- $_ = set $placement "mode" .Values.placementMode -}}
{{- $_ = set $placement "keyFile" "/etc/seedwarden/placement-key/key" -}}
{{- $_ = set $cfg "placement" $placement -}}
{{- if .Values.virtualGarden.enabled -}}
{{- /* seedwarden's API is the virtual garden's, where the Certificate is not: not watched */ -}}
{{- $_ = unset $cfg "certificate" -}}
{{- else -}}
{{- $cert := get $cfg "certificate" | default dict -}}
{{- $_ = set $cert "namespace" .Release.Namespace -}}
{{- $_ = set $cert "name" "seedwarden-webhook" -}}
{{- $_ = set $cfg "certificate" $cert -}}
{{- end -}}
{{- $capacity := get $cfg "capacity" | default dict -}}
{{- $_ = set $capacity "reservationNamespace" .Release.Namespace -}}
{{- $_ = set $cfg "capacity" $capacity -}}
{{- if gt (int .Values.replicas) 1 -}}
{{- if ne (get $capacity "coordination" | toString) "apiserver" -}}
{{- fail (printf "config.capacity.coordination is %q with replicas %v: more than one replica needs \"apiserver\", or together they can overfill a seed" (get $capacity "coordination" | toString) .Values.replicas) -}}
{{- end -}}
{{- end -}}
{{- if and .Values.clientAuth.enabled .Values.clientAuth.enforce -}}
{{- $server := get $cfg "server" | default dict -}}
{{- $_ = set $server "clientAuth" (dict "caFile" "/etc/seedwarden/client-ca/ca.crt" "allowedNames" .Values.clientAuth.allowedNames) -}}
{{- $_ = set $cfg "server" $server -}}
{{- end -}}
{{- toYaml $cfg -}}
{{- end }}

{{/*
namespaceSelector and objectSelector of one webhook. The default excludes the
release namespace and exemptNamespaces by kubernetes.io/metadata.name, a label
the API server sets and nobody can forge.
Call with (dict "root" $ "name" "binding").
*/}}
{{- define "seedwarden.selectors" -}}
{{- $w := index .root.Values.webhooks .name -}}
{{- if $w.namespaceSelector }}
namespaceSelector:
  {{- toYaml $w.namespaceSelector | nindent 2 }}
{{- else }}
namespaceSelector:
  matchExpressions:
  - key: kubernetes.io/metadata.name
    operator: NotIn
    values: {{ prepend .root.Values.exemptNamespaces .root.Release.Namespace | uniq | toJson }}
{{- end }}
{{- with $w.objectSelector }}
objectSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
failurePolicy: {{ $w.failurePolicy }}
timeoutSeconds: {{ $w.timeoutSeconds }}
{{- end }}

{{- define "seedwarden.clientConfig" -}}
clientConfig:
{{- if .root.Values.virtualGarden.enabled }}
  url: https://{{ include "seedwarden.webhookHost" .root }}{{ .path }}
{{- else }}
  service:
    name: seedwarden
    namespace: {{ .root.Release.Namespace }}
    path: {{ .path }}
    port: 443
{{- end }}
{{- end }}

{{/*
gardener-operator's virtual garden (virtualGarden.enabled; the kustomize
Component deploy/virtual-garden): the webhook URLs' host[:port], by default
the Service in the runtime cluster, whose names the virtual garden's API
servers resolve.
*/}}
{{- define "seedwarden.webhookHost" -}}
{{- .Values.virtualGarden.webhookHost | default (printf "seedwarden.%s.svc" .Release.Namespace) -}}
{{- end }}

{{/*
The label that says which cluster an object goes to with virtualGarden
(runtime, virtual-garden or both), as the Component sets it; nothing without.
Call with (dict "root" $ "cluster" "runtime").
*/}}
{{- define "seedwarden.clusterLabel" -}}
{{- if .root.Values.virtualGarden.enabled -}}
seedwarden.io/cluster: {{ .cluster }}
{{- end -}}
{{- end }}

{{/*
Whether an object of that cluster is rendered: always without virtualGarden
and with virtualGarden.cluster all; else only in its cluster (both: in
each). Call with (dict "root" $ "cluster" "runtime").
*/}}
{{- define "seedwarden.renders" -}}
{{- $vg := .root.Values.virtualGarden -}}
{{- if or (not $vg.enabled) (eq $vg.cluster "all") (eq .cluster "both") (eq .cluster $vg.cluster) -}}
true
{{- end -}}
{{- end }}

{{- /* What the seed-choice webhooks (seed, or binding and capacity) match. */ -}}
{{- define "seedwarden.seedChoiceRules" -}}
rules:
- apiGroups: ["core.gardener.cloud"]
  apiVersions: ["v1beta1"]
  operations: ["CREATE", "UPDATE"]
  resources: ["shoots"]
  scope: Namespaced
- apiGroups: ["core.gardener.cloud"]
  apiVersions: ["v1beta1"]
  operations: ["UPDATE"]
  resources: ["shoots/binding"]
  scope: Namespaced
matchPolicy: Equivalent
{{- end }}

{{- define "seedwarden.mayAffectSeed" -}}
- name: may-affect-seed
  expression: >-
    request.?subResource.orValue('') == 'binding' ||
    object.?spec.?seedName.orValue('') !=
    (request.operation == 'UPDATE' ? oldObject.?spec.?seedName.orValue('') : '') ||
    (request.operation == 'UPDATE' && oldObject.?spec.?seedName.orValue('') != '' &&
    (object.?spec.?seedSelector != oldObject.?spec.?seedSelector ||
    object.?spec.?controlPlane.?zones != oldObject.?spec.?controlPlane.?zones ||
    object.?spec.?region.orValue('') != oldObject.?spec.?region.orValue('')))
{{- end }}

{{- define "seedwarden.notOwnBind" -}}
- name: not-seedwardens-own-bind
  expression: request.userInfo.username != 'system:serviceaccount:{{ .Release.Namespace }}:seedwarden'
{{- end }}
