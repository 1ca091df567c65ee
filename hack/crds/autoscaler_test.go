package main

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/seedwarden/seedwarden/internal/autoscalingapi"
)

// The SeedAutoscaler CRD in the kustomize base and in the chart.
var autoscalerCRDs = []string{
	"deploy/manifests/crd-seedautoscalers.yaml",
	"charts/seedwarden/crds/seedautoscalers.yaml",
}

// The committed SeedAutoscaler CRDs are what hack/crds/autoscaler.sh
// generates from the current internal/autoscalingapi.
func TestAutoscalerCRDUpToDate(t *testing.T) {
	checkGenerated(t, "autoscaler.sh", autoscalerCRDs)
}

// What the controller relies on: the status subresource, namespaced, the
// short name operators type.
func TestAutoscalerCRDShape(t *testing.T) {
	for _, name := range autoscalerCRDs {
		crd := readShippedCRD(t, name)
		if crd.Name != "seedautoscalers.autoscaling.seedwarden.io" || crd.Spec.Scope != apiextensionsv1.NamespaceScoped {
			t.Errorf("%s: %s, scope %s", name, crd.Name, crd.Spec.Scope)
		}
		if len(crd.Spec.Versions) != 1 || crd.Spec.Versions[0].Name != "v1alpha1" || crd.Spec.Versions[0].Subresources == nil ||
			crd.Spec.Versions[0].Subresources.Status == nil {
			t.Errorf("%s: want v1alpha1 with a status subresource", name)
		}
		if len(crd.Spec.Names.ShortNames) != 1 || crd.Spec.Names.ShortNames[0] != "sas" {
			t.Errorf("%s: short names %v, want [sas]", name, crd.Spec.Names.ShortNames)
		}
	}
}

// The CRD holds spec.metrics and spec.maxReplicas to the bounds the
// recommendation, the webhook and the file check enforce (one number, in
// internal/autoscalingapi; the markers must repeat it).
func TestAutoscalerCRDBounds(t *testing.T) {
	for _, name := range autoscalerCRDs {
		crd := readShippedCRD(t, name)
		spec := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
		metrics := spec.Properties["metrics"]
		if metrics.MaxItems == nil || *metrics.MaxItems != autoscalingapi.MaxMetrics {
			t.Errorf("%s: spec.metrics maxItems %v, want %d (autoscalingapi.MaxMetrics)", name, metrics.MaxItems, autoscalingapi.MaxMetrics)
		}
		if metrics.MinItems == nil || *metrics.MinItems != 1 {
			t.Errorf("%s: spec.metrics minItems %v, want 1", name, metrics.MinItems)
		}
		maxR := spec.Properties["maxReplicas"]
		if maxR.Maximum == nil || int32(*maxR.Maximum) != autoscalingapi.MaxReplicasLimit {
			t.Errorf("%s: spec.maxReplicas maximum %v, want %d (autoscalingapi.MaxReplicasLimit)", name, maxR.Maximum, autoscalingapi.MaxReplicasLimit)
		}
	}
}
