package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/landscapegen"
)

// Sizes the fixtures must have.
const (
	minShootBytes = 8 << 10
	maxShootBytes = 10 << 10
)

// Markers stand for the per-request UID and object name in a body template;
// every request overwrites them in a copy (see template.fill). They have the
// lengths of what replaces them, and cannot occur anywhere else.
const (
	uidMarker  = "zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz" // a UUID: 36 characters
	nameMarker = "qqqqqqqqqqq"                          // see putName: 11 characters
)

var (
	shootsGVR    = metav1.GroupVersionResource(api.ShootGVR)
	shootGVK     = metav1.GroupVersionKind(api.ShootGVK)
	configMapGVR = metav1.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	configMapGVK = metav1.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
)

// realisticShoot is landscapegen.NewShoot(name) as the kube-apiserver sends
// it to a mutating webhook on CREATE, with what a real Shoot carries beyond
// the fields seedwarden models: defaulted Kubernetes settings, addons,
// maintenance, hibernation, extensions, resources, provider configs, four
// worker pools with machines, volumes, labels and taints, labels,
// annotations and managedFields. It is a map, so that none of that is lost
// to the typed structs. No uid, resourceVersion or creationTimestamp: the
// API server sets those after admission.
//
// Long function (197 lines): one object literal, read as the Shoot it builds.
func realisticShoot(name string) (map[string]any, error) {
	var shoot map[string]any
	raw, err := json.Marshal(landscapegen.NewShoot(name))
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(raw, &shoot); err != nil {
		return nil, err
	}
	meta := shoot["metadata"].(map[string]any)
	spec := shoot["spec"].(map[string]any)
	delete(meta, "creationTimestamp") // null from the typed struct

	meta["labels"] = map[string]any{
		"app.kubernetes.io/part-of": "webshop",
		"cost-center":               "cc-4711",
		"environment":               "production",
		"team":                      "checkout",
	}
	meta["annotations"] = map[string]any{
		"gardener.cloud/created-by":                                                "alice@example.com",
		"dashboard.gardener.cloud/no-hibernation-schedule":                         "true",
		"shoot.gardener.cloud/cleanup-extended-apis-finalize-grace-period-seconds": "30",
		"custom.shoot.sapcloud.io/allow-multi-zone":                                "true",
	}
	meta["managedFields"] = []any{map[string]any{
		"manager":    "gardener-dashboard",
		"operation":  "Update",
		"apiVersion": "core.gardener.cloud/v1beta1",
		"time":       "2026-05-04T09:12:44Z",
		"fieldsType": "FieldsV1",
		"fieldsV1": map[string]any{
			"f:metadata": map[string]any{
				"f:annotations": map[string]any{".": map[string]any{}, "f:gardener.cloud/created-by": map[string]any{}, "f:dashboard.gardener.cloud/no-hibernation-schedule": map[string]any{}},
				"f:labels":      map[string]any{".": map[string]any{}, "f:app.kubernetes.io/part-of": map[string]any{}, "f:cost-center": map[string]any{}, "f:environment": map[string]any{}, "f:team": map[string]any{}},
			},
			"f:spec": map[string]any{
				"f:addons":                 map[string]any{".": map[string]any{}, "f:kubernetesDashboard": map[string]any{".": map[string]any{}, "f:enabled": map[string]any{}}, "f:nginxIngress": map[string]any{".": map[string]any{}, "f:enabled": map[string]any{}}},
				"f:cloudProfile":           map[string]any{".": map[string]any{}, "f:kind": map[string]any{}, "f:name": map[string]any{}},
				"f:credentialsBindingName": map[string]any{},
				"f:extensions":             map[string]any{},
				"f:hibernation":            map[string]any{".": map[string]any{}, "f:schedules": map[string]any{}},
				"f:kubernetes":             map[string]any{".": map[string]any{}, "f:version": map[string]any{}, "f:kubeAPIServer": map[string]any{".": map[string]any{}, "f:enableAnonymousAuthentication": map[string]any{}}},
				"f:maintenance":            map[string]any{".": map[string]any{}, "f:autoUpdate": map[string]any{".": map[string]any{}, "f:kubernetesVersion": map[string]any{}, "f:machineImageVersion": map[string]any{}}, "f:timeWindow": map[string]any{".": map[string]any{}, "f:begin": map[string]any{}, "f:end": map[string]any{}}},
				"f:networking":             map[string]any{".": map[string]any{}, "f:nodes": map[string]any{}, "f:pods": map[string]any{}, "f:services": map[string]any{}, "f:type": map[string]any{}},
				"f:provider":               map[string]any{".": map[string]any{}, "f:controlPlaneConfig": map[string]any{}, "f:infrastructureConfig": map[string]any{}, "f:type": map[string]any{}, "f:workers": map[string]any{}},
				"f:purpose":                map[string]any{},
				"f:region":                 map[string]any{},
				"f:resources":              map[string]any{},
				"f:tolerations":            map[string]any{},
			},
		},
	}}

	spec["cloudProfileName"] = "aws"
	spec["credentialsBindingName"] = "aws-prod-credentials"
	spec["schedulerName"] = "default-scheduler" // what the API server defaults it to
	spec["addons"] = map[string]any{
		"kubernetesDashboard": map[string]any{"enabled": false, "authenticationMode": "token"},
		"nginxIngress":        map[string]any{"enabled": false, "externalTrafficPolicy": "Cluster"},
	}
	spec["dns"] = map[string]any{"domain": name + ".dev.shoot.example.com"}
	spec["extensions"] = []any{
		map[string]any{"type": "shoot-dns-service", "providerConfig": map[string]any{
			"apiVersion": "service.dns.extensions.gardener.cloud/v1alpha1", "kind": "DNSConfig",
			"syncProvidersFromShootSpecDNS": true,
			"providers":                     []any{map[string]any{"type": "aws-route53", "secretName": "route53-credentials", "domains": map[string]any{"include": []any{"dev.shoot.example.com"}}}},
		}},
		map[string]any{"type": "shoot-cert-service", "providerConfig": map[string]any{
			"apiVersion": "service.cert.extensions.gardener.cloud/v1alpha1", "kind": "CertConfig",
			"shootIssuers": map[string]any{"enabled": true},
		}},
		map[string]any{"type": "shoot-networking-problemdetector"},
	}
	spec["hibernation"] = map[string]any{"enabled": false, "schedules": []any{
		map[string]any{"start": "00 20 * * 1,2,3,4,5", "end": "00 07 * * 1,2,3,4,5", "location": "Europe/Berlin"},
	}}
	spec["kubernetes"] = map[string]any{
		"version":                     "1.33.4",
		"enableStaticTokenKubeconfig": false,
		"kubeAPIServer": map[string]any{
			"enableAnonymousAuthentication":       false,
			"eventTTL":                            "1h0m0s",
			"logging":                             map[string]any{"verbosity": 2},
			"requests":                            map[string]any{"maxNonMutatingInflight": 400, "maxMutatingInflight": 200},
			"defaultNotReadyTolerationSeconds":    300,
			"defaultUnreachableTolerationSeconds": 300,
			"runtimeConfig":                       map[string]any{"batch/v2alpha1": false},
			"oidcConfig": map[string]any{
				"issuerURL": "https://oidc.accounts.example.com", "clientID": "kube-webshop-prod",
				"usernameClaim": "email", "usernamePrefix": "oidc:", "groupsClaim": "groups", "groupsPrefix": "oidc:",
				"signingAlgs": []any{"RS256", "ES256"}, "requiredClaims": map[string]any{"aud": "kube-webshop-prod"},
			},
			"serviceAccountConfig": map[string]any{
				"issuer": "https://api.webshop.dev.shoot.example.com", "extendTokenExpiration": true,
				"maxTokenExpiration": "2160h0m0s", "acceptedIssuers": []any{"https://api.webshop.dev.shoot.example.com"},
			},
			"auditConfig": map[string]any{"auditPolicy": map[string]any{"configMapRef": map[string]any{"name": "audit-policy"}}},
			"admissionPlugins": []any{
				map[string]any{"name": "PodNodeSelector", "config": map[string]any{"podNodeSelectorPluginConfig": map[string]any{"clusterDefaultNodeSelector": "workload=general"}}},
				map[string]any{"name": "AlwaysPullImages", "disabled": true},
			},
		},
		"kubeControllerManager": map[string]any{
			"nodeCIDRMaskSize":        24,
			"nodeMonitorGracePeriod":  "40s",
			"horizontalPodAutoscaler": map[string]any{"syncPeriod": "15s", "tolerance": 0.1},
			"podEvictionTimeout":      "2m0s",
		},
		"kubeScheduler": map[string]any{"profile": "balanced"},
		"kubeProxy":     map[string]any{"mode": "IPTables", "enabled": true},
		"kubelet": map[string]any{
			"failSwapOn":                  true,
			"systemReserved":              map[string]any{"cpu": "100m", "memory": "512Mi", "ephemeralStorage": "2Gi"},
			"kubeReserved":                map[string]any{"cpu": "80m", "memory": "1Gi", "pid": "20k"},
			"imageGCHighThresholdPercent": 50,
			"imageGCLowThresholdPercent":  40,
			"serializeImagePulls":         true,
			"evictionHard":                map[string]any{"memoryAvailable": "100Mi", "imageFSAvailable": "5%", "nodeFSAvailable": "5%"},
		},
		"verticalPodAutoscaler": map[string]any{"enabled": true, "evictAfterOOMThreshold": "10m0s", "evictionRateBurst": 1, "evictionRateLimit": -1, "recommendationMarginFraction": 0.15, "updaterInterval": "1m0s"},
	}
	spec["maintenance"] = map[string]any{
		"autoUpdate": map[string]any{"kubernetesVersion": true, "machineImageVersion": true},
		"timeWindow": map[string]any{"begin": "220000+0100", "end": "230000+0100"},
	}
	networking := spec["networking"].(map[string]any)
	networking["providerConfig"] = map[string]any{
		"apiVersion": "calico.networking.extensions.gardener.cloud/v1alpha1", "kind": "NetworkConfig",
		"backend": "bird", "ipam": map[string]any{"type": "host-local", "cidr": "usePodCIDR"},
		"typha": map[string]any{"enabled": true}, "overlay": map[string]any{"enabled": false},
	}
	spec["resources"] = []any{
		map[string]any{"name": "dns-credentials", "resourceRef": map[string]any{"apiVersion": "v1", "kind": "Secret", "name": "route53-credentials"}},
		map[string]any{"name": "oidc-ca", "resourceRef": map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "oidc-ca-bundle"}},
	}
	spec["systemComponents"] = map[string]any{"coreDNS": map[string]any{"autoscaling": map[string]any{"mode": "horizontal"}}, "nodeLocalDNS": map[string]any{"enabled": true}}

	provider := spec["provider"].(map[string]any)
	provider["controlPlaneConfig"] = map[string]any{
		"apiVersion": "aws.provider.extensions.gardener.cloud/v1alpha1", "kind": "ControlPlaneConfig",
		"cloudControllerManager": map[string]any{"useCustomRouteController": true},
		"storage":                map[string]any{"managedDefaultClass": true},
	}
	provider["infrastructureConfig"] = map[string]any{
		"apiVersion": "aws.provider.extensions.gardener.cloud/v1alpha1", "kind": "InfrastructureConfig",
		"enableECRAccess": true,
		"networks": map[string]any{
			"vpc": map[string]any{"cidr": "10.180.0.0/16"},
			"zones": []any{
				map[string]any{"name": "eu-west-1-a", "internal": "10.180.112.0/22", "public": "10.180.96.0/22", "workers": "10.180.0.0/19"},
				map[string]any{"name": "eu-west-1-b", "internal": "10.180.116.0/22", "public": "10.180.100.0/22", "workers": "10.180.32.0/19"},
				map[string]any{"name": "eu-west-1-c", "internal": "10.180.120.0/22", "public": "10.180.104.0/22", "workers": "10.180.64.0/19"},
			},
		},
	}
	// landscapegen's two pools keep their names and zones (what placement
	// reads); both get what real pools have, and two more pools follow.
	workers := provider["workers"].([]any)
	machines := []struct {
		typ      string
		min, max int
		volume   string
		zones    []any
		taints   []any
		arch     string
		workload string
	}{
		{"m6i.xlarge", 3, 9, "50Gi", nil, nil, "amd64", "general"},
		{"r6i.2xlarge", 1, 4, "100Gi", nil, []any{map[string]any{"key": "workload", "value": "memory", "effect": "NoSchedule"}}, "amd64", "memory"},
		{"m7g.large", 0, 6, "50Gi", []any{"eu-west-1-a", "eu-west-1-b", "eu-west-1-c"}, []any{map[string]any{"key": "kubernetes.io/arch", "value": "arm64", "effect": "NoSchedule"}}, "arm64", "batch"},
		{"g5.xlarge", 0, 2, "200Gi", []any{"eu-west-1-a"}, []any{map[string]any{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}}, "amd64", "gpu"},
	}
	for i, m := range machines {
		var w map[string]any
		if i < len(workers) {
			w = workers[i].(map[string]any)
		} else {
			w = map[string]any{"name": fmt.Sprintf("pool-%c", 'a'+i), "zones": m.zones}
			workers = append(workers, w)
		}
		w["machine"] = map[string]any{"type": m.typ, "architecture": m.arch, "image": map[string]any{"name": "gardenlinux", "version": "1592.9.0"}}
		w["minimum"], w["maximum"] = m.min, m.max
		w["maxSurge"], w["maxUnavailable"] = 1, 0
		w["volume"] = map[string]any{"type": "gp3", "size": m.volume, "encrypted": true}
		w["cri"] = map[string]any{"name": "containerd"}
		w["systemComponents"] = map[string]any{"allow": i == 0}
		w["labels"] = map[string]any{"workload": m.workload, "team": "checkout", "node.example.com/pool": w["name"]}
		w["annotations"] = map[string]any{"cluster-autoscaler.kubernetes.io/scale-down-utilization-threshold": "0.6"}
		if m.taints != nil {
			w["taints"] = m.taints
		}
		w["kubernetes"] = map[string]any{"kubelet": map[string]any{"maxPods": 110, "cpuManagerPolicy": "none"}}
		w["updateStrategy"] = "AutoRollingUpdate"
	}
	provider["workers"] = workers
	return shoot, nil
}

// template is an AdmissionReview body with markers where each request puts
// its own UID and object name.
type template struct {
	body   []byte
	uidAt  []int
	nameAt []int
	// objectBytes is the size of the object inside.
	objectBytes int
}

func newTemplate(review *admissionv1.AdmissionReview, objectBytes int) (*template, error) {
	body, err := json.Marshal(review)
	if err != nil {
		return nil, err
	}
	t := &template{body: body, uidAt: indexAll(body, uidMarker), nameAt: indexAll(body, nameMarker), objectBytes: objectBytes}
	if len(t.uidAt) != 1 || len(t.nameAt) == 0 {
		return nil, fmt.Errorf("template: %d UID and %d name markers, want 1 and at least 1", len(t.uidAt), len(t.nameAt))
	}
	return t, nil
}

func indexAll(b []byte, marker string) []int {
	var at []int
	for off := 0; ; {
		i := bytes.Index(b[off:], []byte(marker))
		if i < 0 {
			return at
		}
		at = append(at, off+i)
		off += i + len(marker)
	}
}

// fill copies the template into buf (len(buf) == len(t.body)) with uid and
// name (of the marker lengths) in place of the markers.
func (t *template) fill(buf, uid, name []byte) {
	copy(buf, t.body)
	for _, i := range t.uidAt {
		copy(buf[i:], uid)
	}
	for _, i := range t.nameAt {
		copy(buf[i:], name)
	}
}

// review is a non-dry-run CREATE AdmissionReview as the kube-apiserver
// sends it.
func review(gvk metav1.GroupVersionKind, gvr metav1.GroupVersionResource, namespace string, object []byte) *admissionv1.AdmissionReview {
	dryRun := false
	return &admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{
			UID:             uidMarker,
			Kind:            gvk,
			Resource:        gvr,
			RequestKind:     &gvk,
			RequestResource: &gvr,
			Name:            nameMarker,
			Namespace:       namespace,
			Operation:       admissionv1.Create,
			UserInfo: authenticationv1.UserInfo{
				Username: "alice@example.com",
				UID:      "7d3c5a1e-2f4b-4c8d-9e6f-0a1b2c3d4e5f",
				Groups:   []string{"garden.sapcloud.io:project:dev", "system:authenticated"},
				Extra:    map[string]authenticationv1.ExtraValue{"authentication.kubernetes.io/credential-id": {"JTI=0f9b7a3c-5e2d-4f1a-8b6c-9d0e1f2a3b4c"}},
			},
			Object:  runtime.RawExtension{Raw: object},
			DryRun:  &dryRun,
			Options: runtime.RawExtension{Raw: []byte(`{"kind":"CreateOptions","apiVersion":"meta.k8s.io/v1","fieldManager":"gardener-dashboard","fieldValidation":"Strict"}`)},
		},
	}
}

// shootTemplates are the bodies of the mutating webhook's requests: the
// realistic Shoot in each of landscapegen.Regions (region, zones), so that
// the load spreads over the landscape's seeds. A Shoot in eu-west-1 can only
// go to the 50 aws and gcp seeds there (of 1,000, zones must match), whose
// free slots the reservations of a few seconds at full load would use up.
func shootTemplates() ([]*template, error) {
	shoot, err := realisticShoot(nameMarker)
	if err != nil {
		return nil, err
	}
	obj, err := json.Marshal(shoot)
	if err != nil {
		return nil, err
	}
	const region = "eu-west-1" // landscapegen.NewShoot's
	if !bytes.Contains(obj, []byte(`"region":"`+region+`"`)) {
		return nil, fmt.Errorf("the Shoot is not in %s", region)
	}
	var out []*template
	for _, r := range landscapegen.Regions {
		o := bytes.ReplaceAll(obj, []byte(region), []byte(r))
		if len(o) < minShootBytes || len(o) > maxShootBytes {
			return nil, fmt.Errorf("the Shoot in %s is %d bytes, want %d-%d", r, len(o), minShootBytes, maxShootBytes)
		}
		t, err := newTemplate(review(shootGVK, shootsGVR, landscapegen.Namespace, o), len(o))
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// configMapTemplate is the body of the resource-size webhook's requests: a
// ConfigMap of size bytes (configuration files in its data, the last one
// cut to fit).
func configMapTemplate(size int) (*template, error) {
	data := map[string]string{}
	const line = "server.upstream.%05d = https://backend-%05d.checkout.svc.cluster.local:8443/api/v2 retries=3 timeout=2s;"
	obj, err := configMapJSON(data)
	for k := 0; err == nil && len(obj) < size-8<<10; k++ {
		var b strings.Builder
		for j := 0; j < 64; j++ {
			fmt.Fprintf(&b, line, k*64+j, j)
		}
		data[fmt.Sprintf("upstreams-%02d.conf", k)] = b.String()
		obj, err = configMapJSON(data)
	}
	if err != nil {
		return nil, err
	}
	// The padding file's value needs no escaping: each byte of it is one
	// byte of JSON.
	data["zz-padding.conf"] = ""
	if obj, err = configMapJSON(data); err != nil {
		return nil, err
	}
	if len(obj) > size {
		return nil, fmt.Errorf("ConfigMap: cannot make %d bytes", size)
	}
	data["zz-padding.conf"] = strings.Repeat("#", size-len(obj))
	if obj, err = configMapJSON(data); err != nil {
		return nil, err
	}
	return newTemplate(review(configMapGVK, configMapGVR, landscapegen.Namespace, obj), len(obj))
}

func configMapJSON(data map[string]string) ([]byte, error) {
	return json.Marshal(map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{
			"name": nameMarker, "namespace": landscapegen.Namespace,
			"labels": map[string]any{"app.kubernetes.io/name": "gateway", "app.kubernetes.io/part-of": "webshop"},
		},
		"data": data,
	})
}
