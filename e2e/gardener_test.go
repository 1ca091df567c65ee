package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// gardenerSkips are the tests of the CRD target that the gardener target
// skips, and why (e2e/README.md lists them too). Every other test runs on
// both targets.
var gardenerSkips = map[string]string{
	"TestFullSeedRejectsManualPlacement":                  "it expects seedwarden's capacity webhook to deny; gardener-apiserver's ShootValidator refuses the Shoot before any validating webhook is called (TestGardenerFullSeedBindingRefused checks the outcome there)",
	"TestShootValidatorEmulation":                         "it checks the ValidatingAdmissionPolicy that stands in for ShootValidator on the CRD target; the gardener target has the real one",
	"TestBindingRBAC":                                     "it expects refusals of spec.seedName changes through the Shoot itself to come from seedwarden's binding webhook or the policy; gardener-apiserver refuses every such change, for every user (\"use the shoots/binding subresource\")",
	"TestSeedUnchangedUpdatesSkipShootGuards":             "it changes spec.seedName through the Shoot, which gardener-apiserver refuses for every user",
	"TestInstallRenderingsAcceptedByAPIServer":            "it installs CRDs of its own into the API server; mode-independent, the CRD target runs it",
	"TestDocumentedUninstallLeavesNoWebhookConfiguration": "it starts API servers of its own; mode-independent, the CRD target runs it",
	"TestLiveExplainMatchesDump":                          "it builds a landscape of its own from api types (Seeds without ingress and DNS); the CRD target runs it",
	"TestBinPackingProfile":                               "it creates Seeds from api types (no ingress and DNS, refused by gardener-apiserver); the CRD target runs it",
	"TestEnforcementWarnAndDeny":                          "it creates a Seed from api types (no ingress and DNS, refused by gardener-apiserver); the guards' enforcement does not depend on which API server serves Shoots, the CRD target runs it",
	"TestDeletingSeedNeverChosen":                         "it creates a Seed from api types (no ingress and DNS, refused by gardener-apiserver); the CRD target runs it",
	"TestSelfHostedShootNeverBound":                       "its Shoot lives in the project namespace with a control-plane pool of 1-3; TestGardenerSelfHostedShootNeverBound uses namespace garden and min = max = 1, as gardener-apiserver requires",
	"TestNamespaceDeletion":                               "its Shoot lives in a namespace of its own, which is no Project's; gardener-apiserver admits Shoots only in a Project's namespace",
	"TestForgedReviewsRefusedByClientAuthentication":      "it calls the webhook directly, without an API server in between; the CRD target runs it",
	"TestSecondReplica":                                   "webhook-process behaviour, independent of the API server; the CRD target runs it",
	"TestCertificateRotation":                             "webhook-process behaviour, independent of the API server; the CRD target runs it",
	"TestRestart":                                         "webhook-process behaviour, independent of the API server; the CRD target runs it",
	"TestCapacityAcrossReplicas":                          "webhook-process behaviour across replicas; TestConcurrentCreatesNeverOverfill checks capacity on the gardener target",
	"TestAdmissionLatency":                                "it reads kube-apiserver's webhook metrics; gardener-apiserver calls the Shoot webhooks and its metrics are not exposed",
	"TestAPIServerOutage":                                 "webhook-process behaviour behind the suite's proxy; the CRD target runs it",
	"TestShutdownUnderLoad":                               "webhook-process behaviour, independent of the API server; the CRD target runs it",
	"TestCreateToBoundLatency":                            "a benchmark; the CRD target runs it",
	"TestCreateLatencyWebhooks":                           "a benchmark that reads kube-apiserver's webhook metrics; the CRD target runs it",
}

// needGardener returns the suite, or skips t unless it runs on the gardener
// target.
func needGardener(t *testing.T) *suite {
	t.Helper()
	st := need(t)
	if !onGardener() {
		t.Skipf("gardener target only (%s=%s)", GardenEnv, targetGardener)
	}
	return st
}

// isGardenerRefusal says whether err is gardener-apiserver's own refusal
// (validation or an admission plugin such as ShootValidator), not a
// webhook's.
func isGardenerRefusal(err error) bool {
	if err == nil || !onGardener() || strings.Contains(err.Error(), "admission webhook") {
		return false
	}
	return apierrors.IsForbidden(err) || apierrors.IsInvalid(err) || apierrors.IsBadRequest(err)
}

// shootDNSDomain is spec.dns.domain of a stored Shoot.
func (st *suite) shootDNSDomain(t *testing.T, key types.NamespacedName) string {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(shootGVK)
	require.NoError(t, st.c.Get(context.Background(), key, u))
	d, _, _ := unstructured.NestedString(u.Object, "spec", "dns", "domain")
	return d
}

// seedDefaultDomain is the first spec.dns.defaults[].domain of a Seed, the
// one ShootDNS gives Shoots bound to it.
func (st *suite) seedDefaultDomain(t *testing.T, seed string) string {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(shootGVK.GroupVersion().WithKind("Seed"))
	require.NoError(t, st.c.Get(context.Background(), keyOf("", seed), u))
	defaults, _, _ := unstructured.NestedSlice(u.Object, "spec", "dns", "defaults")
	if len(defaults) == 0 {
		return ""
	}
	d, _ := defaults[0].(map[string]any)["domain"].(string)
	return d
}

// requireShootDNSDomain checks ShootDNS's domain on a Shoot bound to seed:
// <shoot>.<project>.<the seed's first default domain>.
func (st *suite) requireShootDNSDomain(t *testing.T, key types.NamespacedName, seed string) {
	t.Helper()
	def := st.seedDefaultDomain(t, seed)
	require.NotEmpty(t, def, "seed %s has no spec.dns.defaults: pick a Shoot that lands on one with them", seed)
	want := fmt.Sprintf("%s.dev.%s", key.Name, def)
	require.Equal(t, want, st.shootDNSDomain(t, key), "spec.dns.domain ShootDNS sets on the bind")
	t.Logf("Shoot %s: spec.dns.domain %s (ShootDNS, on the bind)", key, want)
}

// TestGardenerAcceptsExamples: gardener-apiserver, with
// its validation and admission plugins, accepts the Seeds and CloudProfiles
// of examples/landscape.yaml and examples/policies-landscape.yaml (the
// placement policies' annotations included) and the Shoots of
// examples/shoot*.yaml exactly as written (server-side dry-run CREATEs under
// new names; setup loaded the landscape from the first file). The Shoots of
// the landscapes are trimmed to what placement reads (the existing ones are
// completed by the suite, completeForGardener), so they are not part of
// this check.
func TestGardenerAcceptsExamples(t *testing.T) {
	st := needGardener(t)
	ctx := context.Background()
	var objs []*unstructured.Unstructured
	for _, rel := range []string{"examples/landscape.yaml", "examples/policies-landscape.yaml", "examples/shoot.yaml", "examples/shoot-unschedulable.yaml", "examples/shoot-ha.yaml"} {
		o, err := readManifestObjects(filepath.Join(st.root, rel))
		require.NoError(t, err)
		if strings.Contains(rel, "landscape") {
			o = slices.DeleteFunc(o, func(u *unstructured.Unstructured) bool { return u.GetKind() == "Shoot" })
		}
		objs = append(objs, o...)
	}
	checked := map[string]int{}
	for _, o := range objs {
		kind := o.GetKind()
		if kind != "Seed" && kind != "CloudProfile" && kind != "Shoot" {
			continue
		}
		name := o.GetName()
		o.SetName(name + "-example")
		err := st.c.Create(ctx, o, dryRunAll)
		require.NoError(t, err, "gardener-apiserver refuses %s %s of examples/", kind, name)
		checked[kind]++
	}
	require.NotZero(t, checked["Seed"], "no Seed checked")
	require.NotZero(t, checked["CloudProfile"], "no CloudProfile checked")
	require.Equal(t, 3, checked["Shoot"], "the Shoots of examples/shoot*.yaml")
	t.Logf("accepted as written: %v", checked)
}
