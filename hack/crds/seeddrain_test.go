package main

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/seedwarden/seedwarden/internal/operationsapi"
)

// The SeedDrain CRD in the kustomize base and in the chart.
var seedDrainCRDs = []string{
	"deploy/manifests/crd-seeddrains.yaml",
	"charts/seedwarden/crds/seeddrains.yaml",
}

// The committed SeedDrain CRDs are what hack/crds/seeddrain.sh generates
// from the current internal/operationsapi.
func TestSeedDrainCRDUpToDate(t *testing.T) {
	checkGenerated(t, "seeddrain.sh", seedDrainCRDs)
}

// What the controller and the cordon rely on: cluster-scoped, a status
// subresource, the short name; and the budget bounds of
// internal/operationsapi (the markers must repeat them).
func TestSeedDrainCRDShape(t *testing.T) {
	for _, name := range seedDrainCRDs {
		crd := readShippedCRD(t, name)
		if crd.Name != "seeddrains.operations.seedwarden.io" || crd.Spec.Scope != apiextensionsv1.ClusterScoped {
			t.Errorf("%s: %s, scope %s", name, crd.Name, crd.Spec.Scope)
		}
		if len(crd.Spec.Versions) != 1 || crd.Spec.Versions[0].Name != operationsapi.SchemeGroupVersion.Version ||
			crd.Spec.Versions[0].Subresources == nil || crd.Spec.Versions[0].Subresources.Status == nil {
			t.Fatalf("%s: want v1alpha1 with a status subresource", name)
		}
		if len(crd.Spec.Names.ShortNames) != 1 || crd.Spec.Names.ShortNames[0] != "sdr" {
			t.Errorf("%s: short names %v, want [sdr]", name, crd.Spec.Names.ShortNames)
		}
		spec := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
		budget := spec.Properties["budget"]
		for field, limit := range map[string]int32{"maxInFlight": operationsapi.MaxInFlightLimit, "maxPerHour": operationsapi.MaxPerHourLimit} {
			p := budget.Properties[field]
			if p.Minimum == nil || *p.Minimum != 1 || p.Maximum == nil || int32(*p.Maximum) != limit {
				t.Errorf("%s: spec.budget.%s minimum %v maximum %v, want 1 and %d", name, field, p.Minimum, p.Maximum, limit)
			}
		}
		seed := spec.Properties["seedName"]
		if len(seed.XValidations) != 1 || seed.XValidations[0].Rule != "self == oldSelf" {
			t.Errorf("%s: spec.seedName validations %v, want it immutable", name, seed.XValidations)
		}
	}
}
