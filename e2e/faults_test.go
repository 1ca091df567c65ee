package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/handlers"
)

// TestAPIServerOutage: a replica whose connection to the API server goes
// away (its own proxy closes every connection, watches included, and
// refuses new ones, as a restarting or unreachable API server would).
// Within cache.maxStaleness (2s here) it keeps deciding; beyond it /readyz
// fails, the mutating webhook admits Shoots without a seed and warns, and
// the capacity webhook refuses seed changes. A Seed created meanwhile is
// not seen. Once the API server is back, the informers watch again, /readyz
// passes, and the replica places onto that Seed: the cache caught up with a
// change made while its watch was down.
func TestAPIServerOutage(t *testing.T) {
	st := need(t)
	st.logOnFailure(t)
	ctx := context.Background()
	const (
		maxStaleness = 2 * time.Second
		label        = "e2e.seedwarden.io/outage-test"
		newSeed      = "e2e-outage"
	)

	proxy, err := startProxy(st.webhookUser)
	require.NoError(t, err)
	t.Cleanup(proxy.Close)
	kubeconfig := filepath.Join(st.work, "kubeconfig-outage")
	require.NoError(t, st.writeKubeconfigFile(kubeconfig, proxy))
	ca, err := newTestCA()
	require.NoError(t, err)
	r := st.startReplicaWith(t, "outage", ca, 10, replicaOptions{
		kubeconfig: kubeconfig,
		config:     fmt.Sprintf("cache:\n  maxStaleness: %s\n", maxStaleness),
	})
	require.NoError(t, waitReplicaReady(r, 60*time.Second))
	hc, err := tlsClient(ca.pem)
	require.NoError(t, err)
	base := "https://" + r.webhookAddr()
	readyz := fmt.Sprintf("http://127.0.0.1:%d/readyz", r.ports.health)

	regular := newShoot(t.Name(), withName("e2e-outage-regular"))
	selective := newShoot(t.Name(), withName("e2e-outage-selective"), func(u *unstructured.Unstructured) {
		must(unstructured.SetNestedStringMap(u.Object, map[string]string{label: "true"}, "spec", "seedSelector", "matchLabels"))
	})
	place := func(t *testing.T, u *unstructured.Unstructured) *admissionv1.AdmissionResponse {
		raw, err := json.Marshal(u.Object)
		require.NoError(t, err)
		return review(t, hc, base+"/mutate-shoots", &admissionv1.AdmissionRequest{
			UID:       types.UID("outage-" + u.GetName()),
			Kind:      metav1.GroupVersionKind{Group: api.GroupName, Version: "v1beta1", Kind: "Shoot"},
			Resource:  metav1.GroupVersionResource{Group: api.GroupName, Version: "v1beta1", Resource: "shoots"},
			Name:      u.GetName(),
			Namespace: projectNamespace,
			Operation: admissionv1.Create,
			DryRun:    ptrTo(true),
			Object:    k8sruntime.RawExtension{Raw: raw},
		})
	}
	staleWarning := func(resp *admissionv1.AdmissionResponse) bool {
		for _, w := range resp.Warnings {
			if strings.HasPrefix(w, handlers.StaleCacheWarningPrefix) {
				return true
			}
		}
		return false
	}

	// Before: places the regular Shoot, no seed takes the selective one.
	resp := place(t, regular)
	require.True(t, resp.Allowed)
	require.Contains(t, string(resp.Patch), "/spec/seedName", "placed while watching")
	resp = place(t, selective)
	require.True(t, resp.Allowed)
	require.NotContains(t, string(resp.Patch), "/spec/seedName", "no seed carries %s yet", label)

	cut := time.Now()
	proxy.Cut()
	restored := false
	defer func() {
		if !restored {
			_ = proxy.Restore()
		}
	}()

	// A seed that only the selective Shoot selects, created while the
	// replica cannot watch.
	var tmpl api.Seed
	require.NoError(t, st.c.Get(ctx, keyOf("", "aws-eu2"), &tmpl))
	sd := &api.Seed{
		ObjectMeta: metav1.ObjectMeta{Name: newSeed, Labels: map[string]string{label: "true", testLabel: labelValue(t.Name())}},
		Spec:       *tmpl.Spec.DeepCopy(),
		Status:     *tmpl.Status.DeepCopy(),
	}
	sd.Status.Allocatable = corev1.ResourceList{api.ResourceShoots: *resource.NewQuantity(10, resource.DecimalSI)}
	require.NoError(t, createWithStatus(ctx, st.c, sd))
	t.Cleanup(func() {
		if err := st.c.Delete(context.Background(), &api.Seed{ObjectMeta: metav1.ObjectMeta{Name: newSeed}}); client.IgnoreNotFound(err) != nil {
			t.Errorf("deleting seed %s: %v", newSeed, err)
		}
	})

	// Not ready once stale beyond the bound, and not before it.
	var notReadyAfter time.Duration
	var body string
	eventually(t, 20*time.Second, func() error {
		var code int
		code, body = httpStatus(readyz + "?verbose")
		if code == http.StatusOK {
			return fmt.Errorf("/readyz still 200 %s after the cut", time.Since(cut).Round(time.Millisecond))
		}
		notReadyAfter = time.Since(cut)
		return nil
	}, "the replica stays ready without a watch")
	t.Logf("not ready %s after the cut:\n%s", notReadyAfter.Round(time.Millisecond), strings.TrimSpace(body))
	assert.GreaterOrEqual(t, notReadyAfter, maxStaleness, "not ready before the bound")
	assert.Contains(t, body, "cache-freshness")

	// Beyond the bound: admitted without a seed, with the warning.
	resp = place(t, regular)
	assert.True(t, resp.Allowed, "the mutating webhook admits while stale")
	assert.NotContains(t, string(resp.Patch), "/spec/seedName", "placed from a stale cache")
	assert.True(t, staleWarning(resp), "no stale-cache warning: %v", resp.Warnings)

	// The capacity webhook refuses a seed change (fail closed).
	if path, ok := st.registered[webhookCapacity]; ok {
		manual := newShoot(t.Name(), withName("e2e-outage-manual"), withSeed("aws-eu2"))
		raw, err := json.Marshal(manual.Object)
		require.NoError(t, err)
		resp = review(t, hc, base+path, &admissionv1.AdmissionRequest{
			UID:       "outage-manual",
			Kind:      metav1.GroupVersionKind{Group: api.GroupName, Version: "v1beta1", Kind: "Shoot"},
			Resource:  metav1.GroupVersionResource{Group: api.GroupName, Version: "v1beta1", Resource: "shoots"},
			Name:      manual.GetName(),
			Namespace: projectNamespace,
			Operation: admissionv1.Create,
			DryRun:    ptrTo(true),
			Object:    k8sruntime.RawExtension{Raw: raw},
		})
		assert.False(t, resp.Allowed, "the capacity webhook checks a seed against a stale cache")
		if resp.Result != nil {
			assert.Contains(t, resp.Result.Message, "placement cache is stale")
		}
	}

	// Back: ready again once the informers watch again, and the Seed
	// created meanwhile is in the cache.
	back := time.Now()
	require.NoError(t, proxy.Restore())
	restored = true
	var readyAfter time.Duration
	eventually(t, 90*time.Second, func() error {
		if code, body := httpStatus(readyz); code != http.StatusOK {
			return fmt.Errorf("/readyz: %d %s", code, strings.TrimSpace(body))
		}
		readyAfter = time.Since(back)
		return nil
	}, "the replica does not become ready after the API server is back")
	t.Logf("ready %s after the API server came back (outage of %s)", readyAfter.Round(time.Millisecond), back.Sub(cut).Round(time.Millisecond))

	resp = place(t, selective)
	require.True(t, resp.Allowed)
	assert.False(t, staleWarning(resp), "still stale: %v", resp.Warnings)
	assert.Contains(t, string(resp.Patch), `"value":"`+newSeed+`"`, "the Seed created during the outage is not in the cache")
	resp = place(t, regular)
	assert.Contains(t, string(resp.Patch), "/spec/seedName", "places again")
}
