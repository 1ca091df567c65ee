package pending

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/testr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/metrics"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// ---- fakes ----

// fakeStore answers Place from decide and records what the controller does.
type fakeStore struct {
	mu       sync.Mutex
	decide   func(shoot *api.Shoot) placement.Decision
	places   []string // reservation keys
	releases []string
	applied  []client.Object
	removed  []client.Object
	// placeOn answers PlaceOn (nil: false); placedOn records its calls.
	placeOn  func(seed string) bool
	placedOn []placeOnCall
	// seeds answers Seed.
	seeds map[string]*placement.Seed
}

func (f *fakeStore) Snapshot() *placement.Snapshot { return &placement.Snapshot{} }

func (f *fakeStore) Seed(name string) (*placement.Seed, bool) {
	s, ok := f.seeds[name]
	return s, ok
}

type placeOnCall struct{ seed, from, to string }

func (f *fakeStore) PlaceOn(_ *api.Shoot, _ placement.Options, seed, from, to string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.placedOn = append(f.placedOn, placeOnCall{seed, from, to})
	return f.placeOn != nil && f.placeOn(seed)
}

func (f *fakeStore) Place(shoot *api.Shoot, _ placement.Options, key string) placement.Decision {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.places = append(f.places, key)
	return f.decide(shoot)
}

func (f *fakeStore) ReleaseFor(key, _, _ string) { f.Release(key) }

func (f *fakeStore) Release(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.releases = append(f.releases, key)
}

func (f *fakeStore) Apply(o client.Object) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.applied = append(f.applied, o)
}

func (f *fakeStore) Remove(o client.Object) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.removed = append(f.removed, o)
}

func (f *fakeStore) counts() (places, releases int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.places), len(f.releases)
}

// fakeReader serves full Shoots as the API server would: unstructured, with
// every field, including those api.Shoot does not model.
type fakeReader struct {
	objs map[types.NamespacedName]*unstructured.Unstructured
	err  error
}

func (f *fakeReader) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	if f.err != nil {
		return f.err
	}
	o, ok := f.objs[key]
	if !ok {
		return apierrors.NewNotFound(schema.GroupResource{Group: api.GroupName, Resource: "shoots"}, key.Name)
	}
	o.DeepCopyInto(obj.(*unstructured.Unstructured))
	return nil
}

func (f *fakeReader) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return errors.New("not implemented")
}

type recordedEvent struct {
	eventType, reason, action, note string
	regarding                       string
}

type fakeRecorder struct {
	mu     sync.Mutex
	events []recordedEvent
}

func (f *fakeRecorder) Eventf(regarding runtime.Object, _ runtime.Object, eventType, reason, action, note string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	name := ""
	if o, ok := regarding.(client.Object); ok {
		name = o.GetNamespace() + "/" + o.GetName()
	}
	f.events = append(f.events, recordedEvent{eventType: eventType, reason: reason, action: action, note: fmt.Sprintf(note, args...), regarding: name})
}

func (f *fakeRecorder) Events() []recordedEvent {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recordedEvent(nil), f.events...)
}

// write is one write the controller made.
type write struct {
	verb        string // patch
	subResource string
	patchType   types.PatchType
	body        map[string]any // merge patch or object
	rawPatch    string         // JSON patch
}

// recordingClient records writes and answers them with fail(write), or
// success.
type recordingClient struct {
	mu     sync.Mutex
	writes []write
	fail   func(w write) error
}

func (rc *recordingClient) record(w write) error {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.writes = append(rc.writes, w)
	if rc.fail != nil {
		return rc.fail(w)
	}
	return nil
}

func (rc *recordingClient) Writes() []write {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]write(nil), rc.writes...)
}

func (rc *recordingClient) client(t *testing.T) client.Client {
	patchWrite := func(sub string, obj client.Object, p client.Patch) write {
		data, err := p.Data(obj)
		require.NoError(t, err)
		w := write{verb: "patch", subResource: sub, patchType: p.Type()}
		if p.Type() == types.JSONPatchType {
			w.rawPatch = string(data)
		} else {
			require.NoError(t, json.Unmarshal(data, &w.body))
		}
		return w
	}
	return interceptor.NewClient(fake.NewClientBuilder().WithScheme(cache.NewScheme()).Build(), interceptor.Funcs{
		Patch: func(_ context.Context, _ client.WithWatch, obj client.Object, p client.Patch, _ ...client.PatchOption) error {
			return rc.record(patchWrite("", obj, p))
		},
		SubResourcePatch: func(_ context.Context, _ client.Client, sub string, obj client.Object, p client.Patch, _ ...client.SubResourcePatchOption) error {
			return rc.record(patchWrite(sub, obj, p))
		},
	})
}

// fullShoot is a pending Shoot as the API server returns it, with fields
// api.Shoot does not model. lastOp may be nil.
func fullShoot(name string, lastOp map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "core.gardener.cloud/v1beta1",
		"kind":       "Shoot",
		"metadata": map[string]any{
			"name":            name,
			"namespace":       "garden-dev",
			"uid":             "uid-" + name,
			"resourceVersion": "41",
			"generation":      int64(1),
			"annotations":     map[string]any{"gardener.cloud/created-by": "jane.doe@example.com"},
		},
		"spec": map[string]any{
			"cloudProfile":           map[string]any{"kind": "CloudProfile", "name": "aws"},
			"region":                 "eu-west-1",
			"credentialsBindingName": "my-aws-account",
			"kubernetes":             map[string]any{"version": "1.33.4"},
			"provider": map[string]any{
				"type":    "aws",
				"workers": []any{map[string]any{"name": "w1", "minimum": int64(1), "maximum": int64(3), "zones": []any{"eu-west-1a"}}},
			},
		},
		"status": map[string]any{"uid": "uid-" + name},
	}}
	if lastOp != nil {
		_ = unstructured.SetNestedMap(u.Object, lastOp, "status", "lastOperation")
	}
	return u
}

var unschedulable = placement.Decision{
	Step:    placement.StepCandidates,
	Message: "0/2 seed cluster candidate(s) are eligible for scheduling",
	Reasons: map[string]string{"aws-eu1": "seed has no capacity left", "aws-eu2": "shoot does not tolerate the seed's taints"},
	Codes:   map[string]placement.ReasonCode{"aws-eu1": placement.SeedFull, "aws-eu2": placement.TaintNotTolerated},
	Total:   2,
}

// unschedulableReasons is the reasons annotation of unschedulable.
const unschedulableReasons = `{"step":"Candidates","seeds":2,"counts":{"SeedFull":1,"TaintNotTolerated":1}}`

// withReasons gives a Shoot the reasons annotation.
func withReasons(u *unstructured.Unstructured, value string) *unstructured.Unstructured {
	a := u.GetAnnotations()
	a[api.AnnotationUnschedulableReasons] = value
	u.SetAnnotations(a)
	return u
}

// unschedulableSummary is what events and lastOperation carry (its format
// is placement's business, tested there).
var unschedulableSummary = func() string { d := unschedulable; return d.Summary() }()

var scheduled = placement.Decision{Seed: "aws-eu1", Tied: []string{"aws-eu1"}, Total: 2}

type fixture struct {
	r        *Reconciler
	store    *fakeStore
	reader   *fakeReader
	writes   *recordingClient
	recorder *fakeRecorder
	reg      *prometheus.Registry
	ctx      context.Context
	// now is the reconciler's clock; advance moves it.
	now time.Time
}

func (f *fixture) advance(d time.Duration) { f.now = f.now.Add(d) }

func newFixture(t *testing.T, mode Mode, objs ...*unstructured.Unstructured) *fixture {
	f := &fixture{
		store:    &fakeStore{decide: func(*api.Shoot) placement.Decision { return unschedulable }},
		reader:   &fakeReader{objs: map[types.NamespacedName]*unstructured.Unstructured{}},
		writes:   &recordingClient{},
		recorder: &fakeRecorder{},
		reg:      prometheus.NewRegistry(),
		ctx:      logr.NewContext(context.Background(), testr.New(t)),
		now:      time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC),
	}
	for _, o := range objs {
		f.reader.objs[client.ObjectKeyFromObject(o)] = o
	}
	f.r = &Reconciler{
		Config:    testConfig(mode),
		Store:     f.store,
		Options:   placement.Options{Strategy: placement.MinimalDistance},
		Client:    f.writes.client(t),
		APIReader: f.reader,
		Recorder:  f.recorder,
		Metrics:   metrics.New(f.reg, metrics.GroupPending),
		Now:       func() time.Time { return f.now },
	}
	return f
}

func (f *fixture) reconcile(t *testing.T, name string) reconcile.Result {
	t.Helper()
	res, err := f.r.Reconcile(f.ctx, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "garden-dev", Name: name}})
	require.NoError(t, err)
	return res
}

func (f *fixture) retries(result string) float64 {
	return gathered(f.reg, metrics.SchedulingRetriesName, result)
}

// gathered returns a sample of reg: the counter with label result=result, or
// the unlabelled gauge when result is "".
func gathered(reg prometheus.Gatherer, name, result string) float64 {
	families, _ := reg.Gather()
	for _, mf := range families {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			match := result == ""
			for _, l := range m.GetLabel() {
				if l.GetName() == "result" && l.GetValue() == result {
					match = true
				}
			}
			if !match {
				continue
			}
			if m.Counter != nil {
				return m.GetCounter().GetValue()
			}
			return m.GetGauge().GetValue()
		}
	}
	return 0
}

func keyOf(name string) types.NamespacedName {
	return types.NamespacedName{Namespace: "garden-dev", Name: name}
}

// ---- tests ----

func TestReconcileUnschedulable(t *testing.T) {
	f := newFixture(t, BindThroughSubresource, fullShoot("s1", nil))
	res := f.reconcile(t, "s1")
	assert.Equal(t, time.Second, res.RequeueAfter)

	assert.Equal(t, []recordedEvent{{
		eventType: corev1.EventTypeWarning, reason: "SchedulingFailed", action: "Schedule",
		note: unschedulableSummary, regarding: "garden-dev/s1",
	}}, f.recorder.Events())

	writes := f.writes.Writes()
	require.Len(t, writes, 2)
	// First the reasons for programs, on the Shoot...
	assert.Equal(t, write{verb: "patch", patchType: types.MergePatchType, body: map[string]any{"metadata": map[string]any{
		"resourceVersion": "41", "annotations": map[string]any{api.AnnotationUnschedulableReasons: unschedulableReasons},
	}}}, writes[0])
	// ... then the text for people, in the status.
	assert.Equal(t, "patch", writes[1].verb)
	assert.Equal(t, "status", writes[1].subResource)
	assert.Equal(t, types.MergePatchType, writes[1].patchType)
	assert.Equal(t, map[string]any{
		"metadata": map[string]any{"resourceVersion": "41"},
		"status": map[string]any{"lastOperation": map[string]any{
			"type": "Create", "state": "Pending", "description": unschedulableSummary,
			"lastUpdateTime": "2026-03-04T05:06:07Z", "progress": float64(0),
		}},
	}, writes[1].body)
	assert.Equal(t, map[metrics.PendingReasonKey]int{
		{Reason: "SeedFull", Provider: "aws", Region: "eu-west-1"}:          1,
		{Reason: "TaintNotTolerated", Provider: "aws", Region: "eu-west-1"}: 1,
	}, f.r.reasonCounts())

	assert.Equal(t, []string{"manual/garden-dev/s1"}, f.store.places)
	assert.Empty(t, f.store.releases, "an unschedulable decision reserves nothing")
	assert.Equal(t, 1, f.r.Pending())
	assert.Equal(t, 1.0, gathered(f.reg, metrics.PendingShootsName, ""))
	assert.Equal(t, 1.0, f.retries(metrics.ResultUnschedulable))
}

// A Shoot that already says exactly that is not written again.
func TestReconcileUnschedulableKeepsSameLastOperation(t *testing.T) {
	lastOp := map[string]any{"type": "Create", "state": "Pending", "description": unschedulableSummary, "lastUpdateTime": "2026-03-04T05:00:00Z"}
	f := newFixture(t, BindThroughSubresource, withReasons(fullShoot("s1", lastOp), unschedulableReasons))
	f.reconcile(t, "s1")
	assert.Empty(t, f.writes.Writes())
	assert.Len(t, f.recorder.Events(), 1, "the event is still recorded")

	// A different description is written, the same reasons are not.
	lastOp["description"] = "0/2 seeds eligible: something else"
	f = newFixture(t, BindThroughSubresource, withReasons(fullShoot("s1", lastOp), unschedulableReasons))
	f.reconcile(t, "s1")
	require.Len(t, f.writes.Writes(), 1)
	assert.Equal(t, "status", f.writes.Writes()[0].subResource)

	// Other reasons are written, the same description is not.
	lastOp["description"] = unschedulableSummary
	f = newFixture(t, BindThroughSubresource, withReasons(fullShoot("s1", lastOp), `{"step":"Candidates","seeds":2,"counts":{"SeedFull":2}}`))
	f.reconcile(t, "s1")
	require.Len(t, f.writes.Writes(), 1)
	assert.Equal(t, "", f.writes.Writes()[0].subResource)
}

// A failing status write does not fail the attempt.
func TestReconcileUnschedulableStatusWriteFails(t *testing.T) {
	for name, err := range map[string]error{
		"conflict": apierrors.NewConflict(schema.GroupResource{Group: api.GroupName, Resource: "shoots"}, "s1", errors.New("stale")),
		"other":    errors.New("connection refused"),
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, BindThroughSubresource, fullShoot("s1", nil))
			f.writes.fail = func(write) error { return err }
			res := f.reconcile(t, "s1")
			assert.Equal(t, time.Second, res.RequeueAfter)
		})
	}
}

func TestReconcileBindingMode(t *testing.T) {
	f := newFixture(t, "", fullShoot("s1", map[string]any{"type": "Create", "state": "Pending", "description": "old"}))
	f.store.decide = func(s *api.Shoot) placement.Decision {
		// The placement sees the full Shoot.
		assert.Equal(t, "eu-west-1", s.Spec.Region)
		assert.Equal(t, []string{"eu-west-1a"}, s.Spec.Provider.Workers[0].Zones)
		return scheduled
	}
	res := f.reconcile(t, "s1")
	assert.Zero(t, res)

	writes := f.writes.Writes()
	require.Len(t, writes, 1, "binding mode leaves lastOperation to the binding strategy")
	w := writes[0]
	assert.Equal(t, write{verb: "patch", subResource: "binding", patchType: types.MergePatchType, body: map[string]any{
		"metadata": map[string]any{"resourceVersion": "41"},
		"spec":     map[string]any{"seedName": "aws-eu1"},
	}}, w, "the seed alone, on the condition that the Shoot is still as decided from; the binding keeps every other field")

	assert.Equal(t, []recordedEvent{{eventType: corev1.EventTypeNormal, reason: "SchedulingSuccessful", action: "Schedule",
		note: `Scheduled to seed "aws-eu1"`, regarding: "garden-dev/s1"}}, f.recorder.Events())
	assert.Empty(t, f.store.releases, "the reservation lasts until the bound Shoot is seen")
	assert.Equal(t, 0, f.r.Pending())
	assert.Equal(t, 1.0, f.retries(metrics.ResultScheduled))
}

func TestReconcileUpdateMode(t *testing.T) {
	lastOp := map[string]any{"type": "Create", "state": "Pending", "description": "old"}
	f := newFixture(t, BindThroughUpdate, fullShoot("s1", lastOp), fullShoot("s2", nil))
	f.store.decide = func(*api.Shoot) placement.Decision { return scheduled }

	assert.Zero(t, f.reconcile(t, "s1"))
	writes := f.writes.Writes()
	require.Len(t, writes, 2)
	assert.Equal(t, write{verb: "patch", patchType: types.MergePatchType, body: map[string]any{
		"metadata": map[string]any{"resourceVersion": "41"},
		"spec":     map[string]any{"seedName": "aws-eu1"},
	}}, writes[0])
	assert.Equal(t, write{verb: "patch", subResource: "status", patchType: types.JSONPatchType,
		rawPatch: `[{"op":"test","path":"/status/lastOperation/type","value":"Create"},{"op":"test","path":"/status/lastOperation/state","value":"Pending"},{"op":"remove","path":"/status/lastOperation"}]`,
	}, writes[1])

	// Without a pending lastOperation there is nothing to clear.
	assert.Zero(t, f.reconcile(t, "s2"))
	assert.Len(t, f.writes.Writes(), 3)
}

func TestReconcileConflictIsQuiet(t *testing.T) {
	for _, mode := range []Mode{BindThroughSubresource, BindThroughUpdate} {
		t.Run(string(mode), func(t *testing.T) {
			f := newFixture(t, mode, fullShoot("s1", nil))
			f.store.decide = func(*api.Shoot) placement.Decision { return scheduled }
			conflicts := 2
			f.writes.fail = func(write) error {
				if conflicts > 0 {
					conflicts--
					return apierrors.NewConflict(schema.GroupResource{Group: api.GroupName, Resource: "shoots"}, "s1", errors.New("the object has been modified"))
				}
				return nil
			}
			assert.Equal(t, 50*time.Millisecond, f.reconcile(t, "s1").RequeueAfter)
			assert.Equal(t, 100*time.Millisecond, f.reconcile(t, "s1").RequeueAfter)
			assert.Empty(t, f.recorder.Events(), "conflicts are retried without events")
			assert.Equal(t, []string{"manual/garden-dev/s1", "manual/garden-dev/s1"}, f.store.releases)
			assert.Equal(t, 2.0, f.retries(metrics.ResultConflict))

			assert.Zero(t, f.reconcile(t, "s1"))
			events := f.recorder.Events()
			require.Len(t, events, 1)
			assert.Equal(t, "SchedulingSuccessful", events[0].reason)
		})
	}
}

func TestReconcileBindError(t *testing.T) {
	f := newFixture(t, BindThroughSubresource, fullShoot("s1", nil))
	f.store.decide = func(*api.Shoot) placement.Decision { return scheduled }
	f.writes.fail = func(write) error {
		return apierrors.NewForbidden(schema.GroupResource{Group: api.GroupName, Resource: "shoots/binding"}, "s1", errors.New("seed \"aws-eu1\" is full"))
	}
	assert.Equal(t, time.Second, f.reconcile(t, "s1").RequeueAfter)
	assert.Equal(t, 2*time.Second, f.reconcile(t, "s1").RequeueAfter)
	events := f.recorder.Events()
	require.Len(t, events, 2)
	assert.Equal(t, corev1.EventTypeWarning, events[0].eventType)
	assert.Equal(t, "SchedulingFailed", events[0].reason)
	assert.Equal(t, "Bind", events[0].action)
	assert.Contains(t, events[0].note, `binding to seed "aws-eu1" failed: `)
	assert.Contains(t, events[0].note, `seed "aws-eu1" is full`)
	assert.Equal(t, []string{"manual/garden-dev/s1", "manual/garden-dev/s1"}, f.store.releases, "a failed binding gives the place back")
	assert.Equal(t, 2.0, f.retries(metrics.ResultError))
	assert.Equal(t, 1, f.r.Pending())

}

// A 404 from the binding is not taken for a deleted Shoot: on a CRD without
// the binding subresource that would drop every pending Shoot silently. The
// next attempt finds out whether the Shoot is gone.
func TestReconcileBindNotFound(t *testing.T) {
	f := newFixture(t, BindThroughSubresource, fullShoot("s1", nil))
	f.store.decide = func(*api.Shoot) placement.Decision { return scheduled }
	f.writes.fail = func(write) error {
		return apierrors.NewNotFound(schema.GroupResource{}, "")
	}
	assert.Equal(t, time.Second, f.reconcile(t, "s1").RequeueAfter)
	events := f.recorder.Events()
	require.Len(t, events, 1)
	assert.Contains(t, events[0].note, "Shoots from a CRD need mode update")
	assert.Equal(t, 1, f.r.Pending())

	delete(f.reader.objs, types.NamespacedName{Namespace: "garden-dev", Name: "s1"})
	assert.Zero(t, f.reconcile(t, "s1"))
	assert.Equal(t, 0, f.r.Pending(), "gone: forgotten")
}

func TestReconcileSkipsShootsThatAreNotPending(t *testing.T) {
	withSeed := fullShoot("seeded", nil)
	_ = unstructured.SetNestedField(withSeed.Object, "aws-eu2", "spec", "seedName")
	other := fullShoot("other-scheduler", nil)
	_ = unstructured.SetNestedField(other.Object, "custom-scheduler", "spec", "schedulerName")
	ours := fullShoot("our-scheduler", nil)
	_ = unstructured.SetNestedField(ours.Object, "default-scheduler", "spec", "schedulerName")
	deleting := fullShoot("deleting", nil)
	deleting.SetDeletionTimestamp(ptr.To(metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))))

	selfHosted := fullShoot("self-hosted", nil)
	_ = unstructured.SetNestedSlice(selfHosted.Object, []any{map[string]any{"name": "cp", "controlPlane": map[string]any{}}}, "spec", "provider", "workers")

	f := newFixture(t, BindThroughSubresource, withSeed, other, ours, deleting, selfHosted)
	for _, name := range []string{"seeded", "other-scheduler", "deleting", "self-hosted", "gone"} {
		f.r.track(types.NamespacedName{Namespace: "garden-dev", Name: name})
		assert.Zero(t, f.reconcile(t, name), name)
	}
	places, _ := f.store.counts()
	assert.Zero(t, places)
	assert.Equal(t, 0, f.r.Pending(), "all forgotten")

	f.reconcile(t, "our-scheduler")
	places, _ = f.store.counts()
	assert.Equal(t, 1, places, "schedulerName equal to ours is placed")
}

func TestReconcileWaitsForUsableCache(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(r *Reconciler, usable *bool)
	}{
		{name: "not synced", set: func(r *Reconciler, usable *bool) { r.Synced = func() bool { return *usable } }},
		{name: "stale beyond the bound", set: func(r *Reconciler, usable *bool) { r.Stale = func() bool { return !*usable } }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, BindThroughSubresource, fullShoot("s1", nil))
			usable := false
			tc.set(f.r, &usable)
			assert.Equal(t, 500*time.Millisecond, f.reconcile(t, "s1").RequeueAfter)
			places, _ := f.store.counts()
			assert.Zero(t, places, "no decision from an unusable cache")
			assert.Empty(t, f.recorder.Events())

			usable = true
			assert.Equal(t, time.Second, f.reconcile(t, "s1").RequeueAfter, "waiting did not count as an attempt")
		})
	}
}

func TestReconcileReadError(t *testing.T) {
	f := newFixture(t, BindThroughSubresource)
	f.reader.err = errors.New("etcdserver: request timed out")
	_, err := f.r.Reconcile(f.ctx, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "garden-dev", Name: "s1"}})
	require.Error(t, err, "read errors go to the controller's rate limiter")
	assert.Contains(t, err.Error(), "request timed out")
}

func TestTruncate(t *testing.T) {
	assert.Equal(t, "short", truncate("short"))
	exact := strings.Repeat("a", MaxMessageBytes)
	assert.Equal(t, exact, truncate(exact))
	for _, s := range []string{
		strings.Repeat("a", 3000),
		strings.Repeat("ä", 1000), // 2 bytes each
		strings.Repeat("€", 1000), // 3 bytes each
		strings.Repeat("😀", 1000), // 4 bytes each
		"x" + strings.Repeat("😀", 1000),
	} {
		got := truncate(s)
		assert.LessOrEqual(t, len(got), MaxMessageBytes)
		assert.Greater(t, len(got), MaxMessageBytes-8)
		assert.True(t, utf8.ValidString(got), "cut inside a rune")
		assert.True(t, strings.HasSuffix(got, "…"))
	}

	// Long summaries reach events and lastOperation cut.
	many := placement.Decision{Step: placement.StepCandidates, Reasons: map[string]string{}, Total: 200}
	for i := range 200 {
		many.Reasons[fmt.Sprintf("seed-%03d", i)] = fmt.Sprintf("shoot does not tolerate the seed's taint dedicated-%03d", i)
	}
	require.Greater(t, len(many.Summary()), MaxMessageBytes)
	f := newFixture(t, BindThroughSubresource, fullShoot("s1", nil))
	f.store.decide = func(*api.Shoot) placement.Decision { return many }
	f.reconcile(t, "s1")
	note := f.recorder.Events()[0].note
	assert.Equal(t, truncate(many.Summary()), note)
	assert.LessOrEqual(t, len(note), MaxMessageBytes)
	desc := f.writes.Writes()[1].body["status"].(map[string]any)["lastOperation"].(map[string]any)["description"]
	assert.Equal(t, note, desc)
}

// The capacity webhook reserves every binding under the manual key; the
// controller's place must be that one, or the webhook would count the Shoot
// twice and refuse the last free place.
func TestReservationKeyIsTheCapacityWebhooksKey(t *testing.T) {
	assert.Equal(t, cache.ManualReservationKey("garden-dev", "s1"), ReservationKey("garden-dev", "s1"))

	store := cache.NewStore(cache.Options{})
	sd := &api.Seed{ObjectMeta: metav1.ObjectMeta{Name: "seed-a"}, Status: api.SeedStatus{
		Allocatable: corev1.ResourceList{api.ResourceShoots: resource.MustParse("1")},
	}}
	store.Apply(sd)
	require.NoError(t, store.Reserve("seed-a", cache.Claim{Key: ReservationKey("garden-dev", "s1"), Namespace: "garden-dev"}), "the controller takes the last place")
	assert.NoError(t, store.Reserve("seed-a", cache.Claim{Key: cache.ManualReservationKey("garden-dev", "s1"), Namespace: "garden-dev"}), "the webhook finds it held")
	assert.Error(t, store.Reserve("seed-a", cache.Claim{Key: cache.ManualReservationKey("garden-dev", "other"), Namespace: "garden-dev"}), "and the seed is full for others")
	bound := &api.Shoot{ObjectMeta: metav1.ObjectMeta{Namespace: "garden-dev", Name: "s1"}, Spec: api.ShootSpec{SeedName: ptr.To("seed-a")}}
	store.Apply(bound)
	assert.Equal(t, int64(1), store.Usage("seed-a"), "the bound Shoot ends the reservation")
}

// testConfig is a complete Config, with the configuration's default backoffs
// and workers.
func testConfig(mode Mode) Config {
	return Config{Mode: mode, BackoffBase: time.Second, BackoffMax: 5 * time.Minute, ConflictBackoffMax: 5 * time.Second, Workers: 5}
}

func TestConfig(t *testing.T) {
	c := testConfig(BindThroughSubresource)
	c.Default()
	assert.Equal(t, Config{Mode: BindThroughSubresource, SchedulerName: "default-scheduler", BackoffBase: time.Second, BackoffMax: 5 * time.Minute, ConflictBackoffMax: 5 * time.Second, Workers: 5}, c)
	require.NoError(t, c.Validate())

	var zero Config
	zero.Default()
	err := zero.Validate()
	require.Error(t, err, "mode, backoffs and workers are required")
	for _, want := range []string{`mode: unsupported value ""`, "backoffBase: 0s must be positive", "conflictBackoffMax: 0s must be positive and at most backoffMax 0s", "workers: 0 must be at least 1"} {
		assert.Contains(t, err.Error(), want)
	}

	bad := Config{Mode: "patch", BackoffBase: -time.Second, BackoffMax: -2 * time.Second, ConflictBackoffMax: time.Second, Workers: -1}
	err = bad.Validate()
	require.Error(t, err)
	for _, want := range []string{`mode: unsupported value "patch"`, "backoffBase: -1s must be positive", "backoffMax: -2s must not be less than backoffBase -1s",
		"conflictBackoffMax: 1s must be positive and at most backoffMax -2s", "workers: -1 must be at least 1"} {
		assert.Contains(t, err.Error(), want)
	}
}

// The reasons go with the wait: the binding that places the Shoot removes
// them in the same write.
func TestReconcileBindRemovesReasons(t *testing.T) {
	f := newFixture(t, "", withReasons(fullShoot("s1", nil), unschedulableReasons))
	f.store.decide = func(*api.Shoot) placement.Decision { return scheduled }
	f.reconcile(t, "s1")
	writes := f.writes.Writes()
	require.Len(t, writes, 1)
	assert.Equal(t, map[string]any{
		"metadata": map[string]any{"resourceVersion": "41", "annotations": map[string]any{api.AnnotationUnschedulableReasons: nil}},
		"spec":     map[string]any{"seedName": "aws-eu1"},
	}, writes[0].body)
	assert.Empty(t, f.r.reasonCounts())
}

// A Shoot changed since it was read gets neither reasons nor lastOperation
// from that attempt: both would describe an older version.
func TestReconcileReasonsConflict(t *testing.T) {
	f := newFixture(t, BindThroughSubresource, fullShoot("s1", nil))
	f.writes.fail = func(write) error {
		return apierrors.NewConflict(schema.GroupResource{Group: api.GroupName, Resource: "shoots"}, "s1", errors.New("stale"))
	}
	res := f.reconcile(t, "s1")
	assert.Equal(t, time.Second, res.RequeueAfter)
	require.Len(t, f.writes.Writes(), 1, "the status is not written after the reasons conflicted")
	assert.Len(t, f.r.reasonCounts(), 2, "the metric counts the attempt all the same")
}
