package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	syaml "sigs.k8s.io/yaml"

	"github.com/seedwarden/seedwarden/internal/api"
	ops "github.com/seedwarden/seedwarden/internal/operationsapi"
)

// seedDrainCRD is the SeedDrain CRD as deploy/ ships it.
const seedDrainCRD = "deploy/manifests/crd-seeddrains.yaml"

// seedDrainConfig watches SeedDrains and runs their controller in the
// webhook under test, with a sync period short enough for tests.
const seedDrainConfig = `
seedDrain:
  enabled: true
  syncPeriod: 1s
`

// drainLabel selects the seeds of the SeedDrain tests' Shoots;
// newcomerLabel those of a Shoot created during a drain.
const (
	drainLabel    = "e2e.seedwarden.io/drain-test"
	newcomerLabel = "e2e.seedwarden.io/drain-newcomer"
)

// installSeedDrainCRD installs the shipped SeedDrain CRD and waits until it
// is served: every replica's cache watches SeedDrains.
func (st *suite) installSeedDrainCRD(ctx context.Context) error {
	data, err := os.ReadFile(filepath.Join(st.root, seedDrainCRD))
	if err != nil {
		return err
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := syaml.UnmarshalStrict(data, crd); err != nil {
		return fmt.Errorf("%s: %w", seedDrainCRD, err)
	}
	if err := st.c.Create(ctx, crd); err != nil {
		return fmt.Errorf("%s: %w", seedDrainCRD, err)
	}
	if err := poll(ctx, 30*time.Second, 100*time.Millisecond, func() error {
		return st.c.List(ctx, &ops.SeedDrainList{})
	}); err != nil {
		return fmt.Errorf("SeedDrain CRD not served: %w", err)
	}
	logf("SeedDrain CRD installed from %s", seedDrainCRD)
	return nil
}

// gardenletPlayer plays the gardenlets of a control-plane migration, which
// neither target runs: a Shoot whose spec.seedName differs from its
// status.seedName gets lastOperation Migrate Processing, then, a step
// later, status.seedName the new seed and Restore Succeeded; or Migrate
// Failed for the Shoots of fail. It records the most migrations in flight
// at once (Shoots bound elsewhere whose migration has not ended).
type gardenletPlayer struct {
	st     *suite
	prefix string
	fail   map[string]bool

	mu       sync.Mutex
	maxSeen  int
	lastErr  error
	stop     context.CancelFunc
	finished chan struct{}
}

func (st *suite) startGardenletPlayer(t *testing.T, prefix string, fail ...string) *gardenletPlayer {
	ctx, cancel := context.WithCancel(context.Background())
	p := &gardenletPlayer{st: st, prefix: prefix, fail: map[string]bool{}, stop: cancel, finished: make(chan struct{})}
	for _, f := range fail {
		p.fail[f] = true
	}
	go func() {
		defer close(p.finished)
		tick := time.NewTicker(300 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if err := p.step(ctx); err != nil && ctx.Err() == nil {
					p.mu.Lock()
					p.lastErr = err
					p.mu.Unlock()
				}
			}
		}
	}()
	t.Cleanup(p.halt)
	return p
}

// halt stops the player and waits until it has.
func (p *gardenletPlayer) halt() {
	p.stop()
	<-p.finished
}

// step moves every migrating Shoot of the test one step.
func (p *gardenletPlayer) step(ctx context.Context) error {
	var list unstructured.UnstructuredList
	list.SetGroupVersionKind(shootGVK.GroupVersion().WithKind("ShootList"))
	if err := p.st.c.List(ctx, &list, client.InNamespace(projectNamespace)); err != nil {
		return err
	}
	inFlight := 0
	for i := range list.Items {
		s := &list.Items[i]
		if !strings.HasPrefix(s.GetName(), p.prefix) {
			continue
		}
		spec, _, _ := unstructured.NestedString(s.Object, "spec", "seedName")
		status, _, _ := unstructured.NestedString(s.Object, "status", "seedName")
		if spec == status || status == "" {
			continue
		}
		typ, _, _ := unstructured.NestedString(s.Object, "status", "lastOperation", "type")
		state, _, _ := unstructured.NestedString(s.Object, "status", "lastOperation", "state")
		if state == "Failed" {
			continue
		}
		inFlight++
		op := map[string]any{"type": "Migrate", "state": "Processing", "progress": int64(0), "lastUpdateTime": time.Now().UTC().Format(time.RFC3339), "description": "migrating"}
		switch {
		case typ != "Migrate":
		case p.fail[s.GetName()]:
			op["state"], op["description"] = "Failed", "backup entry not reachable (gardenlet stand-in)"
		default:
			op["type"], op["state"], op["progress"], op["description"] = "Restore", "Succeeded", int64(100), "restored"
			must(unstructured.SetNestedField(s.Object, spec, "status", "seedName"))
		}
		must(unstructured.SetNestedMap(s.Object, op, "status", "lastOperation"))
		if err := p.st.c.Status().Update(ctx, s); err != nil {
			return fmt.Errorf("status of %s: %w", s.GetName(), err)
		}
	}
	p.mu.Lock()
	p.maxSeen = max(p.maxSeen, inFlight)
	p.mu.Unlock()
	return nil
}

func (p *gardenletPlayer) result() (maxSeen int, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.maxSeen, p.lastErr
}

// drainLandscape creates seeds e2e-drain-src (6 Shoots, Reconcile
// Succeeded on it), e2e-drain-a and e2e-drain-b (room for 4 each), all like
// aws-eu2 and labelled drainLabel, and returns the Shoots' names and the
// cloud profile the test's Shoots use (the example landscape's aws; the
// seed selector keeps them to the test's seeds).
func (st *suite) drainLandscape(t *testing.T) (shoots []string, profile string) {
	t.Helper()
	ctx := context.Background()
	// The drained Shoots may go to a and b; a new Shoot (newcomerLabel) to
	// the drained seed or spare, so that it does not change their plan.
	sizes := map[string]int64{"e2e-drain-src": 10, "e2e-drain-a": 4, "e2e-drain-b": 4, "e2e-drain-spare": 4}
	st.createFullSeedsLike(t, "aws-eu2", map[string][]string{
		"e2e-drain-src": {drainLabel, newcomerLabel}, "e2e-drain-a": {drainLabel}, "e2e-drain-b": {drainLabel},
		"e2e-drain-spare": {newcomerLabel},
	}, sizes)
	profile = "aws"
	eventually(t, 15*time.Second, func() error { return knowsSeeds(st.metricsURL(), sizes) })
	for i := range 6 {
		name := fmt.Sprintf("e2e-drain-%d", i)
		u := newShoot(t.Name(), withName(name), withCloudProfile(profile), withSeedSelector(drainLabel), withSeed("e2e-drain-src"))
		require.NoError(t, st.c.Create(ctx, u))
		must(unstructured.SetNestedField(u.Object, "e2e-drain-src", "status", "seedName"))
		must(unstructured.SetNestedMap(u.Object, map[string]any{"type": "Reconcile", "state": "Succeeded", "progress": int64(100),
			"lastUpdateTime": time.Now().UTC().Format(time.RFC3339), "description": "reconciled"}, "status", "lastOperation"))
		require.NoError(t, st.c.Status().Update(ctx, u))
		shoots = append(shoots, name)
	}
	return shoots, profile
}

// createFullSeedsLike creates Seeds named by sizes as copies of template
// as the API server holds it (every field, so gardener-apiserver accepts
// them), with labels (each set "true") and status.allocatable.shoots their
// size. t's cleanup deletes the test's Shoots, then, once no Shoot names
// them, the Seeds and their capacity ConfigMaps.
func (st *suite) createFullSeedsLike(t *testing.T, template string, labels map[string][]string, sizes map[string]int64) {
	t.Helper()
	ctx := context.Background()
	like := &unstructured.Unstructured{}
	like.SetGroupVersionKind(seedGVK)
	require.NoError(t, st.c.Get(ctx, keyOf("", template), like))
	for name, size := range sizes {
		sd := &unstructured.Unstructured{Object: map[string]any{"spec": like.Object["spec"]}}
		sd.SetGroupVersionKind(seedGVK)
		sd.SetName(name)
		l := map[string]string{testLabel: labelValue(t.Name())}
		for k, v := range like.GetLabels() {
			l[k] = v
		}
		for _, k := range labels[name] {
			l[k] = "true"
		}
		sd.SetLabels(l)
		require.NoError(t, st.c.Create(ctx, sd))
		status := runtimeDeepCopy(like.Object["status"])
		must(unstructured.SetNestedField(status, fmt.Sprint(size), "allocatable", "shoots"))
		sd.Object["status"] = status
		require.NoError(t, st.c.Status().Update(ctx, sd))
	}
	t.Cleanup(func() {
		ctx := context.Background()
		if err := st.deleteTestShoots(ctx, t.Name()); err != nil {
			t.Errorf("deleting the Shoots of %s: %v", t.Name(), err)
		}
		for name := range sizes {
			// gardener-apiserver refuses to delete a seed its Shoot cache
			// still sees Shoots on.
			if err := poll(ctx, 30*time.Second, 200*time.Millisecond, func() error {
				return client.IgnoreNotFound(st.c.Delete(ctx, &api.Seed{ObjectMeta: metav1.ObjectMeta{Name: name}}))
			}); err != nil {
				t.Errorf("deleting seed %s: %v", name, err)
			}
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: seedwardenNamespace, Name: "seedwarden-capacity-" + name}}
			if err := st.c.Delete(ctx, cm); client.IgnoreNotFound(err) != nil {
				t.Errorf("deleting %s: %v", cm.Name, err)
			}
		}
	})
}

// runtimeDeepCopy copies an unstructured field (a map).
func runtimeDeepCopy(v any) map[string]any {
	m, _ := v.(map[string]any)
	return runtime.DeepCopyJSON(m)
}

// planDrain is where `webhook plan --drain` sends each Shoot (name -> seed).
func (st *suite) planDrain(t *testing.T, seed string) map[string]string {
	t.Helper()
	_, out := st.runWebhookCode(t, "plan", "--kubeconfig", st.kubeconfig, "--config", st.configPath, "--drain", seed, "-o", "json")
	var report struct{ Placed []struct{ Shoot, To string } }
	require.NoError(t, json.Unmarshal([]byte(out), &report), out)
	want := map[string]string{}
	for _, p := range report.Placed {
		want[strings.TrimPrefix(p.Shoot, projectNamespace+"/")] = p.To
	}
	return want
}

func (st *suite) createSeedDrain(t *testing.T, d *ops.SeedDrain) {
	t.Helper()
	require.NoError(t, st.c.Create(context.Background(), d))
	t.Cleanup(func() {
		if err := st.c.Delete(context.Background(), d); client.IgnoreNotFound(err) != nil {
			t.Errorf("deleting SeedDrain %s: %v", d.Name, err)
		}
	})
}

// waitDrainPhase waits until the SeedDrain reaches phase and returns it.
func (st *suite) waitDrainPhase(t *testing.T, name string, phase ops.Phase, timeout time.Duration) *ops.SeedDrain {
	t.Helper()
	d := &ops.SeedDrain{}
	eventually(t, timeout, func() error {
		if err := st.c.Get(context.Background(), keyOf("", name), d); err != nil {
			return err
		}
		if d.Status.Phase != phase {
			return fmt.Errorf("phase %q (%s), want %s", d.Status.Phase, d.Status.Message, phase)
		}
		return nil
	})
	return d
}

// shootSeeds are the spec.seedName and resourceVersion of the named Shoots.
func (st *suite) shootSeeds(t *testing.T, names []string) (seeds, versions map[string]string) {
	t.Helper()
	seeds, versions = map[string]string{}, map[string]string{}
	for _, n := range names {
		var s api.Shoot
		require.NoError(t, st.c.Get(context.Background(), keyOf(projectNamespace, n), &s))
		seeds[n], versions[n] = ptr.Deref(s.Spec.SeedName, ""), s.ResourceVersion
	}
	return seeds, versions
}

// TestSeedDrainMigratesWithinBudget: a seed with 6 Shoots and a SeedDrain
// with a budget of 2. The dry run first changes nothing and shows the plan
// `webhook plan --drain` gives; then the drain moves all 6 to the seeds
// that plan named, never more than 2 at once (a gardenlet stand-in plays
// Migrate and Restore), the seed takes no new Shoot meanwhile, and the
// status ends Drained.
func TestSeedDrainMigratesWithinBudget(t *testing.T) {
	st := need(t)
	st.logOnFailure(t)
	st.cleanupShoots(t)
	st.waitSettled(t)
	shoots, profile := st.drainLandscape(t)
	want := st.planDrain(t, "e2e-drain-src")
	require.Len(t, want, 6, "plan --drain moves every Shoot")

	drain := &ops.SeedDrain{ObjectMeta: metav1.ObjectMeta{Name: "e2e-drain", Labels: map[string]string{testLabel: labelValue(t.Name())}},
		Spec: ops.SeedDrainSpec{SeedName: "e2e-drain-src", DryRun: true, Budget: ops.Budget{MaxInFlight: ptr.To[int32](2)}}}
	_, before := st.shootSeeds(t, shoots)
	st.createSeedDrain(t, drain)
	d := st.waitDrainPhase(t, drain.Name, ops.PhasePlanned, 30*time.Second)
	got := map[string]string{}
	for _, s := range d.Status.Shoots {
		got[s.Name] = s.Destination
	}
	assert.Equal(t, want, got, "the dry run shows plan --drain's plan")
	_, after := st.shootSeeds(t, shoots)
	assert.Equal(t, before, after, "a dry run writes no Shoot")

	player := st.startGardenletPlayer(t, "e2e-drain-")
	require.NoError(t, st.c.Get(context.Background(), keyOf("", drain.Name), d))
	d.Spec.DryRun = false
	require.NoError(t, st.c.Update(context.Background(), d))
	// A new Shoot only these seeds may take goes anywhere but the drained one.
	newcomer := newShoot(t.Name(), withName("e2e-drain-new"), withCloudProfile(profile), withSeedSelector(newcomerLabel))
	require.NoError(t, st.c.Create(context.Background(), newcomer))
	var placed api.Shoot
	eventually(t, 30*time.Second, func() error {
		if err := st.c.Get(context.Background(), keyOf(projectNamespace, "e2e-drain-new"), &placed); err != nil {
			return err
		}
		if placed.Spec.SeedName == nil {
			return fmt.Errorf("e2e-drain-new not bound yet")
		}
		return nil
	})
	assert.Equal(t, "e2e-drain-spare", *placed.Spec.SeedName, "the drained seed takes no new Shoot")

	d = st.waitDrainPhase(t, drain.Name, ops.PhaseDrained, 90*time.Second)
	maxSeen, err := player.result()
	require.NoError(t, err)
	assert.LessOrEqual(t, maxSeen, 2, "migrations in flight at once")
	assert.Positive(t, maxSeen)
	seeds, _ := st.shootSeeds(t, shoots)
	assert.Equal(t, want, seeds, "every Shoot on the seed plan --drain named")
	assert.Equal(t, int32(6), d.Status.Counts.Moved)
}

// TestSeedDrainFailedMigrationStopsOneShoot: the stand-in fails one
// Shoot's Migrate; that Shoot ends Failed with Gardener's reason and is
// not bound again, the other five move, and the drain ends Blocked.
func TestSeedDrainFailedMigrationStopsOneShoot(t *testing.T) {
	st := need(t)
	st.logOnFailure(t)
	st.cleanupShoots(t)
	st.waitSettled(t)
	shoots, _ := st.drainLandscape(t)
	player := st.startGardenletPlayer(t, "e2e-drain-", "e2e-drain-2")
	drain := &ops.SeedDrain{ObjectMeta: metav1.ObjectMeta{Name: "e2e-drain-fail", Labels: map[string]string{testLabel: labelValue(t.Name())}},
		Spec: ops.SeedDrainSpec{SeedName: "e2e-drain-src", Budget: ops.Budget{MaxInFlight: ptr.To[int32](2)}}}
	st.createSeedDrain(t, drain)
	d := st.waitDrainPhase(t, drain.Name, ops.PhaseBlocked, 90*time.Second)
	assert.Equal(t, int32(5), d.Status.Counts.Moved)
	assert.Equal(t, int32(1), d.Status.Counts.Failed)
	for _, s := range d.Status.Shoots {
		if s.Name == "e2e-drain-2" {
			assert.Equal(t, ops.ShootFailed, s.State)
			assert.Contains(t, s.Reason, "backup entry not reachable")
		}
	}
	_, before := st.shootSeeds(t, shoots)
	time.Sleep(3 * time.Second)
	_, after := st.shootSeeds(t, shoots)
	assert.Equal(t, before["e2e-drain-2"], after["e2e-drain-2"], "the failed Shoot is not bound again")
	// gardener-apiserver refuses to delete a Shoot whose Migrate failed:
	// the operator's hand finishes it, so that the cleanup can.
	player.halt()
	st.finishMigration(t, "e2e-drain-2")
}

// finishMigration ends a Shoot's migration as an operator's repair would:
// status.seedName its spec.seedName, Restore Succeeded.
func (st *suite) finishMigration(t *testing.T, name string) {
	t.Helper()
	ctx := context.Background()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(shootGVK)
	require.NoError(t, st.c.Get(ctx, keyOf(projectNamespace, name), u))
	spec, _, _ := unstructured.NestedString(u.Object, "spec", "seedName")
	must(unstructured.SetNestedField(u.Object, spec, "status", "seedName"))
	must(unstructured.SetNestedMap(u.Object, map[string]any{"type": "Restore", "state": "Succeeded", "progress": int64(100),
		"lastUpdateTime": time.Now().UTC().Format(time.RFC3339), "description": "repaired"}, "status", "lastOperation"))
	require.NoError(t, st.c.Status().Update(ctx, u))
}
