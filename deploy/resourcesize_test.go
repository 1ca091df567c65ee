package manifests_test

import (
	"slices"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
)

// TestResourceSizeComponent: the resource-size webhooks are an opt-in
// Component of their own configuration, and the base registers none, since
// its configuration sets no size limit: registered without one they would
// admit every request they cost a call for (and size.seedwarden.io, failing
// closed, would refuse Secret and ConfigMap writes during an outage for
// nothing).
func TestResourceSizeComponent(t *testing.T) {
	requireComponentOf(t, resourceSizeDir, resourceSizeFile)
	var names []string
	for _, w := range resourceSizeConfiguration(t).Webhooks {
		names = append(names, w.Name)
	}
	if !slices.Equal(names, []string{"size.shoots.seedwarden.io", "size.seedwarden.io"}) {
		t.Errorf("the component registers %v, want the two resource-size webhooks", names)
	}

	cfg := shippedConfig(t)
	if len(cfg.ResourceSize.Limits) > 0 || len(cfg.ResourceSize.Counts) > 0 || cfg.ResourceAdmission != nil {
		t.Errorf("the shipped configuration sets size limits: add the %s component to the base", resourceSizeDir)
	}
	vwc := find[*admissionregistrationv1.ValidatingWebhookConfiguration](t, manifests(t), validatingConfiguration, "", "seedwarden")
	for _, w := range vwc.Webhooks {
		if p := w.ClientConfig.Service.Path; p != nil && *p == pathResourceSize {
			t.Errorf("the base registers %s on %s, though its configuration sets no size limit", w.Name, *p)
		}
	}
}
