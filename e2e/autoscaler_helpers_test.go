package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	syaml "sigs.k8s.io/yaml"

	"github.com/seedwarden/seedwarden/internal/autoscalingapi"
	"github.com/seedwarden/seedwarden/internal/seedmanagement"
)

// The SeedAutoscaler end to end: its CRD (deploy/), ManagedSeedSets (a CRD
// with a scale subresource on the CRD target, gardener-apiserver's own on
// the gardener target), and the autoscaler in the webhook under test.

var managedSeedSetGVK = seedmanagement.SchemeGroupVersion.WithKind(seedmanagement.KindManagedSeedSet)

// seedAutoscalerCRD is the SeedAutoscaler CRD as deploy/ ships it.
const seedAutoscalerCRD = "deploy/manifests/crd-seedautoscalers.yaml"

// autoscalerConfig runs the autoscaler in the webhook under test, with a
// sync period short enough for tests of seconds.
const autoscalerConfig = `
autoscaler:
  enabled: true
  syncPeriod: 1s
`

// autoscalerSyncPeriod is autoscalerConfig's syncPeriod.
const autoscalerSyncPeriod = time.Second

// seedSetLabel selects a test's ManagedSeedSet: on its seeds (selector,
// template) and in its Shoots' seedSelector, so that they go nowhere else.
const seedSetLabel = "e2e.seedwarden.io/seed-set"

// installAutoscalerCRD installs the shipped SeedAutoscaler CRD and waits
// until it is served: the webhook's autoscaler watches SeedAutoscalers.
func (st *suite) installAutoscalerCRD(ctx context.Context) error {
	data, err := os.ReadFile(filepath.Join(st.root, seedAutoscalerCRD))
	if err != nil {
		return err
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := syaml.UnmarshalStrict(data, crd); err != nil {
		return fmt.Errorf("%s: %w", seedAutoscalerCRD, err)
	}
	if err := st.c.Create(ctx, crd); err != nil {
		return fmt.Errorf("%s: %w", seedAutoscalerCRD, err)
	}
	if err := poll(ctx, 30*time.Second, 100*time.Millisecond, func() error {
		var list autoscalingapi.SeedAutoscalerList
		return st.c.List(ctx, &list)
	}); err != nil {
		return fmt.Errorf("SeedAutoscaler CRD not served: %w", err)
	}
	logf("SeedAutoscaler CRD installed from %s", seedAutoscalerCRD)
	return nil
}

// createManagedSeedSet creates ManagedSeedSet garden/name with replicas
// whose Seeds are aws-eu2's (as the API server holds it) with room for
// perSeed Shoots each (the gardenlet's resources.capacity), labelled
// seedSetLabel=name; the shoot template is a Shoot like the tests' own. It
// is what gardener-apiserver validates: the namespace garden, a selector
// matching the template's, the seedConfig's and the shoot template's labels,
// a shoot template with workers. t's cleanup deletes it.
func (st *suite) createManagedSeedSet(t *testing.T, name string, replicas int32, perSeed int64) types.NamespacedName {
	t.Helper()
	ctx := context.Background()
	like := &unstructured.Unstructured{}
	like.SetGroupVersionKind(seedGVK)
	require.NoError(t, st.c.Get(ctx, keyOf("", "aws-eu2"), like))
	setLabels := map[string]any{seedSetLabel: name}
	seedLabels := map[string]any{seedSetLabel: name}
	for k, v := range like.GetLabels() {
		seedLabels[k] = v
	}
	shoot := newShoot(t.Name())
	// gardener-apiserver validates the shoot template as it stands: no
	// defaulting fills in a worker's rolling-update bounds there.
	workers, _, _ := unstructured.NestedSlice(shoot.Object, "spec", "provider", "workers")
	for _, w := range workers {
		w.(map[string]any)["maxSurge"], w.(map[string]any)["maxUnavailable"] = int64(1), int64(0)
	}
	must(unstructured.SetNestedSlice(shoot.Object, workers, "spec", "provider", "workers"))
	mss := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": name, "namespace": gardenNamespace, "labels": map[string]any{testLabel: labelValue(t.Name())}},
		"spec": map[string]any{
			"replicas": int64(replicas),
			"selector": map[string]any{"matchLabels": setLabels},
			"template": map[string]any{
				"metadata": map[string]any{"labels": setLabels},
				"spec": map[string]any{"gardenlet": map[string]any{"config": map[string]any{
					"apiVersion": "gardenlet.config.gardener.cloud/v1alpha1",
					"kind":       "GardenletConfiguration",
					"resources":  map[string]any{"capacity": map[string]any{"shoots": fmt.Sprint(perSeed)}},
					"seedConfig": map[string]any{
						"metadata": map[string]any{"labels": seedLabels},
						"spec":     like.Object["spec"],
					},
				}}},
			},
			"shootTemplate": map[string]any{
				"metadata": map[string]any{"labels": setLabels},
				"spec":     shoot.Object["spec"],
			},
		},
	}}
	mss.SetGroupVersionKind(managedSeedSetGVK)
	require.NoError(t, st.c.Create(ctx, mss), "ManagedSeedSet %s", name)
	t.Cleanup(func() {
		if err := st.c.Delete(context.Background(), mss); client.IgnoreNotFound(err) != nil {
			t.Errorf("deleting ManagedSeedSet %s: %v", name, err)
		}
	})
	return client.ObjectKeyFromObject(mss)
}

// onSet makes a Shoot select only the seeds of set.
func onSet(set string) shootOpt {
	return func(u *unstructured.Unstructured) {
		must(unstructured.SetNestedStringMap(u.Object, map[string]string{seedSetLabel: set}, "spec", "seedSelector", "matchLabels"))
	}
}

// scaleOf reads set's replicas through its scale subresource: spec (what
// the autoscaler wrote) and status (what the set's controller found).
func (st *suite) scaleOf(ctx context.Context, set types.NamespacedName) (spec, status int32, err error) {
	mss := &seedmanagement.ManagedSeedSet{}
	mss.Namespace, mss.Name = set.Namespace, set.Name
	scale := &autoscalingv1.Scale{}
	if err := st.c.SubResource("scale").Get(ctx, mss, scale); err != nil {
		return 0, 0, err
	}
	return scale.Spec.Replicas, scale.Status.Replicas, nil
}

// createSeedAutoscaler creates sas (in the garden namespace, next to its
// set); t's cleanup deletes it first thing, before the player and the set
// go, so that nothing scales while they do.
func (st *suite) createSeedAutoscaler(t *testing.T, sas *autoscalingapi.SeedAutoscaler) {
	t.Helper()
	sas.Namespace = gardenNamespace
	sas.Labels = map[string]string{testLabel: labelValue(t.Name())}
	require.NoError(t, st.c.Create(context.Background(), sas))
	t.Cleanup(func() {
		if err := st.c.Delete(context.Background(), sas); client.IgnoreNotFound(err) != nil {
			t.Errorf("deleting SeedAutoscaler %s: %v", sas.Name, err)
		}
	})
}

// seedAutoscaler is a SeedAutoscaler of set between minR and maxR replicas
// keeping the set's seeds at utilization percent of their allocatable,
// scaling up at once and down after downWindow, by any number of seeds a
// second (the defaults would take minutes).
func seedAutoscaler(name, set string, minR, maxR, utilization int32, downWindow time.Duration) *autoscalingapi.SeedAutoscaler {
	anySteps := []autoscalingapi.ScalingPolicy{{Type: autoscalingapi.SeedsScalingPolicy, Value: 100, PeriodSeconds: 1}}
	return &autoscalingapi.SeedAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: autoscalingapi.SeedAutoscalerSpec{
			ScaleTargetRef: autoscalingapi.CrossVersionObjectReference{
				APIVersion: seedmanagement.SchemeGroupVersion.String(), Kind: seedmanagement.KindManagedSeedSet, Name: set,
			},
			MinReplicas: ptrTo(minR),
			MaxReplicas: maxR,
			Metrics: []autoscalingapi.MetricSpec{{
				Type: autoscalingapi.ResourceMetricSourceType,
				Resource: &autoscalingapi.ResourceMetricSource{
					Name:   autoscalingapi.ResourceShoots,
					Target: autoscalingapi.MetricTarget{Type: autoscalingapi.UtilizationMetricType, AverageUtilization: ptrTo(utilization)},
				},
			}},
			Behavior: &autoscalingapi.Behavior{
				ScaleUp:   &autoscalingapi.ScalingRules{StabilizationWindowSeconds: ptrTo(int32(0)), Policies: anySteps},
				ScaleDown: &autoscalingapi.ScalingRules{StabilizationWindowSeconds: ptrTo(int32(downWindow / time.Second)), Policies: anySteps},
			},
		},
	}
}

// floodOneSeedSet creates the ManagedSeedSet set with one replica of room
// perSeed, plays its controller, and creates flood Shoots only the set may
// take: it returns once perSeed of them are on the seed and the rest wait.
func (st *suite) floodOneSeedSet(t *testing.T, set string, perSeed int64, flood int) (types.NamespacedName, *setPlayer, []types.NamespacedName) {
	t.Helper()
	ctx := context.Background()
	key := st.createManagedSeedSet(t, set, 1, perSeed)
	player := st.startSetPlayer(t, key)
	st.waitSetSeeds(t, player, map[string]int64{set + "-0": perSeed})
	shoots := make([]types.NamespacedName, 0, flood)
	for i := range flood {
		sh := newShoot(t.Name(), onSet(set), withName(fmt.Sprintf("%s-%02d", set, i)))
		require.NoError(t, st.c.Create(ctx, sh))
		shoots = append(shoots, client.ObjectKeyFromObject(sh))
	}
	eventually(t, 20*time.Second, func() error { return st.pendingOnSet(ctx, t, shoots, set+"-0", int(perSeed)) },
		"the Shoots are not settled: %d on the seed, the rest pending", perSeed)
	return key, player, shoots
}

// bind is where and when a Shoot was first seen bound.
type bind struct {
	seed string
	at   time.Time
}

// waitBinds looks at the Shoots of keys every 100 ms until each has a seed
// (or timeout), and returns where and when each was first seen bound.
func (st *suite) waitBinds(t *testing.T, keys []types.NamespacedName, timeout time.Duration) map[types.NamespacedName]bind {
	t.Helper()
	out := map[types.NamespacedName]bind{}
	deadline := time.Now().Add(timeout)
	for len(out) < len(keys) && time.Now().Before(deadline) {
		for _, k := range keys {
			if _, seen := out[k]; seen {
				continue
			}
			if seed := seedNameOf(t, k); seed != "" {
				out[k] = bind{seed: seed, at: time.Now()}
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, k := range keys {
		if _, ok := out[k]; !ok {
			t.Fatalf("Shoot %s not bound within %s", k.Name, timeout)
		}
	}
	return out
}

// unbound are the Shoots of keys without a seed.
func unbound(t *testing.T, keys []types.NamespacedName) []types.NamespacedName {
	var out []types.NamespacedName
	for _, k := range keys {
		if seedNameOf(t, k) == "" {
			out = append(out, k)
		}
	}
	return out
}
