package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/seedmanagement"
)

// setPlayer plays Gardener's ManagedSeedSet controller for one set, which
// neither target runs: it follows spec.replicas (what the autoscaler writes
// through the scale subresource) by registering and removing the replicas'
// Seeds, as the gardenlets of new replicas and the controller's scale-in
// would. On scale-out a Seed named <set>-<ordinal> (the next ordinal of
// status.nextReplicaNumber) registers from the template's seedConfig with
// the allocatable of its resources, ready at once; on scale-in the Seeds go
// in seedmanagement.ScaleInOrder, never one that holds Shoots: when too few
// may go, it waits, as Gardener's controller errors and retries. It keeps
// status.replicas and nextReplicaNumber current.
type setPlayer struct {
	st   *suite
	set  types.NamespacedName
	test string // the test's label value, on every Seed registered
	// seedSpec is the template's seedConfig spec as stored (every field
	// gardener-apiserver validates), model the Seed a replica registers.
	seedSpec map[string]any
	model    *api.Seed
	selector labels.Selector

	mu      sync.Mutex
	created []string
	// ready is when each registered Seed's ready status was written: when
	// its places came to exist.
	ready   map[string]time.Time
	removed []removal
	blocked string // why the last scale-in waited ("" when it did not)
	// failing, when set, is the reason every new replica fails with: the
	// player registers none and reports status.pendingReplica instead.
	failing string
	// notReady makes the Seeds of new replicas register and never
	// become ready (no status written).
	notReady bool
	lastErr  error
	stopOnce sync.Once
	stop     context.CancelFunc
	done     chan struct{}
}

// removal is a replica the player deleted and the Shoots naming its Seed
// just before.
type removal struct {
	seed   string
	shoots int
}

// playerInterval is how often the player looks at the set.
const playerInterval = 100 * time.Millisecond

// startSetPlayer starts playing set's controller until t ends; then it
// stops and deletes the Seeds it registered (the test's Shoots first, and
// the seeds' capacity ConfigMaps).
func (st *suite) startSetPlayer(t *testing.T, set types.NamespacedName) *setPlayer {
	t.Helper()
	ctx := context.Background()
	mss := &unstructured.Unstructured{}
	mss.SetGroupVersionKind(managedSeedSetGVK)
	require.NoError(t, st.c.Get(ctx, set, mss))
	typed := &seedmanagement.ManagedSeedSet{}
	require.NoError(t, fromUnstructured(mss, typed))
	tmpl, ok, err := typed.SeedTemplate()
	require.NoError(t, err)
	require.True(t, ok, "the ManagedSeedSet's template has no seedConfig")
	sel, err := typed.Selector()
	require.NoError(t, err)
	spec, found, err := unstructured.NestedMap(mss.Object, "spec", "template", "spec", "gardenlet", "config", "seedConfig", "spec")
	require.NoError(t, err)
	require.True(t, found)
	pctx, cancel := context.WithCancel(ctx)
	p := &setPlayer{st: st, set: set, test: labelValue(t.Name()), seedSpec: spec, model: tmpl, selector: sel,
		ready: map[string]time.Time{}, stop: cancel, done: make(chan struct{})}
	go p.run(pctx)
	t.Cleanup(func() { p.cleanup(t) })
	return p
}

func (p *setPlayer) run(ctx context.Context) {
	defer close(p.done)
	for {
		err := p.tick(ctx)
		p.mu.Lock()
		p.lastErr = err
		p.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-time.After(playerInterval):
		}
	}
}

// halt stops the player and waits for its last tick.
func (p *setPlayer) halt() {
	p.stopOnce.Do(p.stop)
	<-p.done
}

// tick brings the set's Seeds to spec.replicas, as far as it may.
func (p *setPlayer) tick(ctx context.Context) error {
	var mss seedmanagement.ManagedSeedSet
	if err := p.st.c.Get(ctx, p.set, &mss); err != nil {
		return err
	}
	want := int32(1) // Gardener's default
	if mss.Spec.Replicas != nil {
		want = *mss.Spec.Replicas
	}
	seeds, err := p.seeds(ctx)
	if err != nil {
		return err
	}
	next := mss.Status.NextReplicaNumber
	for _, s := range seeds {
		next = max(next, seedmanagement.Ordinal(s.Name)+1)
	}
	p.mu.Lock()
	failing := p.failing
	p.mu.Unlock()
	switch have := int32(len(seeds)); {
	case have < want && failing != "":
		return p.failReplica(ctx, &mss, seedmanagement.ReplicaName(p.set.Name, next), failing)
	case have < want:
		for range want - have {
			name := seedmanagement.ReplicaName(p.set.Name, next)
			if err := p.register(ctx, name); err != nil {
				return err
			}
			next++
		}
	case have > want:
		if err := p.scaleIn(ctx, seeds, int(have-want)); err != nil {
			return err
		}
	}
	if seeds, err = p.seeds(ctx); err != nil {
		return err
	}
	return p.writeStatus(ctx, &mss, int32(len(seeds)), next)
}

// seeds are the set's Seeds (its selector's), not being deleted.
func (p *setPlayer) seeds(ctx context.Context) ([]api.Seed, error) {
	var list api.SeedList
	if err := p.st.c.List(ctx, &list, client.MatchingLabelsSelector{Selector: p.selector}); err != nil {
		return nil, err
	}
	return slices.DeleteFunc(list.Items, func(s api.Seed) bool { return s.DeletionTimestamp != nil }), nil
}

// register creates the Seed a new replica's gardenlet registers: the
// template's seedConfig with domains of its own (each replica is a cluster
// of its own), then a ready status with the template's allocatable.
func (p *setPlayer) register(ctx context.Context, name string) error {
	model := seedmanagement.Model(p.model, name)
	sd := &unstructured.Unstructured{Object: map[string]any{"spec": k8sruntime.DeepCopyJSON(p.seedSpec)}}
	sd.SetGroupVersionKind(seedGVK)
	sd.SetName(name)
	l := map[string]string{testLabel: p.test}
	for k, v := range model.Labels {
		l[k] = v
	}
	sd.SetLabels(l)
	ownDomains(sd, name)
	status, err := json.Marshal(map[string]any{"status": model.Status})
	if err != nil {
		return err
	}
	if err := p.st.c.Create(ctx, sd); err != nil {
		return fmt.Errorf("registering seed %s: %w", name, err)
	}
	p.mu.Lock()
	p.created = append(p.created, name)
	p.mu.Unlock()
	p.mu.Lock()
	notReady := p.notReady
	p.mu.Unlock()
	if notReady {
		return nil
	}
	if err := p.st.c.Status().Patch(ctx, sd, client.RawPatch(types.MergePatchType, status)); err != nil {
		return fmt.Errorf("status of seed %s: %w", name, err)
	}
	p.mu.Lock()
	p.ready[name] = time.Now()
	p.mu.Unlock()
	return nil
}

// scaleIn deletes n Seeds in the order Gardener's controller does, of those
// it may delete.
func (p *setPlayer) scaleIn(ctx context.Context, seeds []api.Seed, n int) error {
	held, err := p.st.shootsPerSeed(ctx)
	if err != nil {
		return err
	}
	replicas := make([]seedmanagement.Replica, 0, len(seeds))
	for _, s := range seeds {
		replicas = append(replicas, seedmanagement.Replica{Name: s.Name, HasShoots: held[s.Name] > 0, Ready: gardenletReady(&s)})
	}
	order := seedmanagement.ScaleInOrder(replicas)
	p.mu.Lock()
	p.blocked = ""
	if len(order) < n {
		p.blocked = fmt.Sprintf("%d replicas to remove, %d without Shoots", n, len(order))
	}
	p.mu.Unlock()
	for _, r := range order[:min(n, len(order))] {
		sd := &api.Seed{ObjectMeta: metav1.ObjectMeta{Name: r.Name}}
		if err := p.st.c.Delete(ctx, sd); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("removing replica %s: %w", r.Name, err)
		}
		p.mu.Lock()
		p.removed = append(p.removed, removal{seed: r.Name, shoots: held[r.Name]})
		p.mu.Unlock()
	}
	return nil
}

// writeStatus records what the controller found, when it changed.
func (p *setPlayer) writeStatus(ctx context.Context, mss *seedmanagement.ManagedSeedSet, replicas, next int32) error {
	if mss.Status.Replicas == replicas && mss.Status.NextReplicaNumber == next && mss.Status.ReadyReplicas == replicas {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"status": map[string]any{
		"replicas": replicas, "readyReplicas": replicas, "nextReplicaNumber": next,
	}})
	if err != nil {
		return err
	}
	return p.st.c.Status().Patch(ctx, mss, client.RawPatch(types.MergePatchType, patch))
}

// FailNewReplicas makes every new replica fail with reason, as Gardener's
// controller reports a replica whose Shoot does not reconcile.
func (p *setPlayer) FailNewReplicas(reason string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failing = reason
}

// NeverReady makes the Seeds of new replicas register and never become
// ready, as a gardenlet that never reports.
func (p *setPlayer) NeverReady() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.notReady = true
}

// failReplica reports the next replica pending with reason, once.
func (p *setPlayer) failReplica(ctx context.Context, mss *seedmanagement.ManagedSeedSet, name, reason string) error {
	if pr := mss.Status.PendingReplica; pr != nil && pr.Name == name && pr.Reason == reason {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"status": map[string]any{
		"pendingReplica": map[string]any{"name": name, "reason": reason, "since": time.Now().UTC().Format(time.RFC3339), "retries": 1},
	}})
	if err != nil {
		return err
	}
	return p.st.c.Status().Patch(ctx, mss, client.RawPatch(types.MergePatchType, patch))
}

// Created, Removed and Blocked report what the player did so far.
func (p *setPlayer) Created() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.created)
}

// ReadyAt is when seed's ready status was written (zero: not yet).
func (p *setPlayer) ReadyAt(seed string) time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ready[seed]
}

func (p *setPlayer) Removed() []removal {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.removed)
}

func (p *setPlayer) Blocked() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.blocked
}

// Err is the last tick's error.
func (p *setPlayer) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lastErr
}

// cleanup stops the player, deletes the test's Shoots (a Seed that Shoots
// name cannot go on the gardener target), then every Seed it registered and
// their capacity ConfigMaps.
func (p *setPlayer) cleanup(t *testing.T) {
	p.halt()
	ctx := context.Background()
	if err := p.st.deleteTestShoots(ctx, t.Name()); err != nil {
		t.Errorf("deleting the Shoots of %s: %v", t.Name(), err)
	}
	if err := poll(ctx, 15*time.Second, 100*time.Millisecond, func() error {
		held, err := p.st.shootsPerSeed(ctx)
		if err != nil {
			return err
		}
		for _, name := range p.Created() {
			if held[name] > 0 {
				return fmt.Errorf("seed %s still holds %d Shoots", name, held[name])
			}
		}
		return nil
	}); err != nil {
		t.Errorf("before deleting the set's seeds: %v", err)
	}
	for _, name := range p.Created() {
		if err := p.st.c.Delete(ctx, &api.Seed{ObjectMeta: metav1.ObjectMeta{Name: name}}); client.IgnoreNotFound(err) != nil {
			t.Errorf("deleting seed %s: %v", name, err)
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: seedwardenNamespace, Name: "seedwarden-capacity-" + name}}
		if err := p.st.c.Delete(ctx, cm); client.IgnoreNotFound(err) != nil {
			t.Errorf("deleting %s: %v", cm.Name, err)
		}
	}
}

// shootsPerSeed counts the Shoots naming each seed (spec or status), as
// Gardener's controller checks before it deletes a replica.
func (st *suite) shootsPerSeed(ctx context.Context) (map[string]int, error) {
	var list api.ShootList
	if err := st.c.List(ctx, &list); err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, sh := range list.Items {
		names := []string{deref(sh.Spec.SeedName)}
		if sh.Status.SeedName != nil && *sh.Status.SeedName != names[0] {
			names = append(names, *sh.Status.SeedName)
		}
		for _, n := range names {
			if n != "" {
				out[n]++
			}
		}
	}
	return out, nil
}

// ownDomains gives Seed sd (named name) an ingress domain of its own. The
// internal and default DNS domains stay the template's: every replica of a
// ManagedSeedSet has the one seedConfig, and Gardener migrates a control
// plane only to a seed of the same internal domain that serves the Shoot's
// domain (under the old seed's default domain), so a scale-in's drain could
// move no Shoot otherwise.
func ownDomains(sd *unstructured.Unstructured, name string) {
	if _, ok, _ := unstructured.NestedMap(sd.Object, "spec", "ingress"); ok {
		must(unstructured.SetNestedField(sd.Object, "ingress."+name+".example.com", "spec", "ingress", "domain"))
	}
}

// fromUnstructured decodes u into a typed object through JSON (as the API
// server's answer would decode).
func fromUnstructured(u *unstructured.Unstructured, into any) error {
	b, err := json.Marshal(u.Object)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, into)
}

// gardenletReady: the seed's GardenletReady condition is True.
func gardenletReady(s *api.Seed) bool {
	for _, c := range s.Status.Conditions {
		if c.Type == api.ConditionGardenletReady {
			return c.Status == api.ConditionTrue
		}
	}
	return false
}
