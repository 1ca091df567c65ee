// Package autoscaler is the SeedAutoscaler controller: on the elected
// leader, every sync period, it reads each SeedAutoscaler's ManagedSeedSet
// and scale subresource, asks internal/seedscale how many replicas its
// metrics need on the landscape the webhooks decide from, bounds the change
// by the SeedAutoscaler's behavior, writes the replicas (unless dry-run),
// and reports the outcome in the status, events and metrics.
package autoscaler

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/autoscalingapi"
	"github.com/seedwarden/seedwarden/internal/leadership"
	"github.com/seedwarden/seedwarden/internal/metrics"
	"github.com/seedwarden/seedwarden/internal/operationsapi"
	"github.com/seedwarden/seedwarden/internal/placement"
	"github.com/seedwarden/seedwarden/internal/seedmanagement"
	"github.com/seedwarden/seedwarden/internal/seedscale"
)

// Names the controller registers under.
const (
	ControllerName    = "seedautoscaler"
	EventRecorderName = "seedwarden-autoscaler"
)

// syncTimeout bounds one sync, its status write included (the reads and
// the recommendation have SyncBudget of it).
const syncTimeout = time.Minute

// EventRecorder is client-go's events.EventRecorder (what
// manager.GetEventRecorder returns).
type EventRecorder interface {
	Eventf(regarding runtime.Object, related runtime.Object, eventtype, reason, action, note string, args ...any)
}

// AddToScheme adds what the controller reads and writes: SeedAutoscalers,
// ManagedSeedSets, the autoscaling/v1 Scale and the SeedDrains of its
// scale-ins.
func AddToScheme(s *runtime.Scheme) error {
	return errors.Join(autoscalingapi.AddToScheme(s), seedmanagement.AddToScheme(s), autoscalingv1.AddToScheme(s), operationsapi.AddToScheme(s))
}

// Reconciler keeps SeedAutoscalers' ManagedSeedSets scaled. Set the
// fields, then SetupWithManager (which fills Client, APIReader and Recorder
// from the manager when nil).
type Reconciler struct {
	// Client reads SeedAutoscalers (cached), writes their status and the
	// scale subresource.
	Client client.Client
	// APIReader reads ManagedSeedSets and the replicas' metadata from the
	// API server: once per sync, and no watch of them is needed.
	APIReader client.Reader
	// Recorder records events.
	Recorder EventRecorder
	// Metrics may be nil.
	Metrics *metrics.Recorder

	// Snapshot is the landscape the webhooks decide from (cache.Store).
	Snapshot func() *placement.Snapshot
	// Pending are the Shoots awaiting a seed, oldest first
	// (cache.PendingShoots.List). Nil: none.
	Pending func() []*api.Shoot
	// View, when set, replaces Snapshot and Pending in a sync: the
	// landscape with its usage read at one moment and the pending Shoots
	// that usage does not count (cache.Store.PendingView). A live
	// Snapshot beside a list read apart from it counts a Shoot bound
	// meanwhile twice, pending and on its seed.
	View func() (*placement.Snapshot, []*api.Shoot)
	// Ready reports whether the landscape may be trusted (synced and fresh);
	// until then nothing is computed or written. Nil: always.
	Ready func() bool
	// Options are the webhooks' placement options.
	Options placement.Options
	// Profiles are the headroom profiles a Headroom metric may name.
	Profiles map[string]*api.Shoot
	// DryRun: never write the scale subresource (autoscaler.dryRun).
	DryRun bool
	// SyncPeriod is how often each SeedAutoscaler is recomputed.
	SyncPeriod time.Duration
	// SyncBudget bounds one sync's reads and recommendation
	// (autoscaler.syncBudget).
	SyncBudget time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time

	mu      sync.Mutex
	entries map[types.NamespacedName]*entry
	// fleet is the last decision across all sets (fleet.go).
	fleet *fleetDecision
	ctrl  controller.Controller
}

// entry is what the controller remembers of one SeedAutoscaler between
// syncs: behavior's history and the events already recorded.
type entry struct {
	uid     types.UID
	history seedscale.History
	// lastWarning and lastDryRun are the keys of the last warning and
	// dry-run event, so that a condition that lasts is recorded once.
	lastWarning, lastDryRun string
	// computed is the last recommendation and what it was computed from.
	computed *computed
	// stuck are the replicas whose scale-in drain got stuck, and since
	// when (scalein.go).
	stuck map[string]time.Time
}

// SetupWithManager registers the controller with mgr, leader-only under
// the manager's own leader election.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	c, err := r.NewController(mgr, mgr.GetCache())
	if err != nil {
		return err
	}
	return mgr.Add(c)
}

// Run runs the controller over the cache c until ctx ends: one term of
// leadership (internal/leadership). A Reconciler runs one term: behavior's
// history starts afresh with the next, as with a new leader, and this
// replica's per-SeedAutoscaler series are removed when the term ends.
func (r *Reconciler) Run(ctx context.Context, mgr ctrl.Manager, c crcache.Cache) error {
	ctl, err := r.NewController(mgr, c)
	if err != nil {
		return err
	}
	defer r.forgetAll()
	return ctl.Start(ctx)
}

// NewController builds the controller over the cache c (the manager's, as
// one term sees it) without adding it to mgr; it fills Client, APIReader
// and Recorder from mgr when nil. Its name is not checked for uniqueness:
// each term builds one anew.
func (r *Reconciler) NewController(mgr ctrl.Manager, c crcache.Cache) (controller.Controller, error) {
	if r.Snapshot == nil && r.View == nil {
		return nil, errors.New("seedautoscaler controller: no landscape snapshot")
	}
	if r.SyncPeriod <= 0 || r.SyncBudget <= 0 {
		return nil, fmt.Errorf("seedautoscaler controller: sync period %s and sync budget %s must be positive", r.SyncPeriod, r.SyncBudget)
	}
	if r.Client == nil {
		r.Client = mgr.GetClient()
	}
	if r.APIReader == nil {
		r.APIReader = mgr.GetAPIReader()
	}
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorder(EventRecorderName)
	}
	ctl, err := leadership.NewSpecController(mgr, c, ControllerName, &autoscalingapi.SeedAutoscaler{}, r, syncTimeout)
	if err != nil {
		return nil, err
	}
	r.ctrl = ctl
	return ctl, nil
}

// forgetAll forgets every SeedAutoscaler, with its series.
func (r *Reconciler) forgetAll() {
	r.mu.Lock()
	r.fleet = nil // the next term decides the fleet afresh
	keys := make([]types.NamespacedName, 0, len(r.entries))
	for k := range r.entries {
		keys = append(keys, k)
	}
	r.mu.Unlock()
	for _, k := range keys {
		r.forget(k)
	}
}

// NeedLeaderElection reports whether the registered controller runs only on
// the leader (always true once SetupWithManager has run): two replicas
// writing replicas from their own views would fight.
func (r *Reconciler) NeedLeaderElection() bool {
	le, ok := r.ctrl.(manager.LeaderElectionRunnable)
	return ok && le.NeedLeaderElection()
}

// Reconcile syncs one SeedAutoscaler and asks to be called again after the
// sync period.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	sa := &autoscalingapi.SeedAutoscaler{}
	if err := r.Client.Get(ctx, req.NamespacedName, sa); err != nil {
		if apierrors.IsNotFound(err) {
			r.forget(req.NamespacedName)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	if r.Ready != nil && !r.Ready() {
		// An outage or a cold cache changes nothing: no decision from a
		// landscape that may be wrong.
		return ctrl.Result{RequeueAfter: r.SyncPeriod}, nil
	}
	e := r.entry(req.NamespacedName, sa.UID)
	out := r.sync(ctx, sa, e)
	if err := r.report(ctx, sa, e, out); err != nil {
		return ctrl.Result{}, err
	}
	if out.err != nil && out.err.transient {
		return ctrl.Result{}, out.err
	}
	return ctrl.Result{RequeueAfter: r.SyncPeriod}, nil
}

// entry is the memory of the SeedAutoscaler key, started afresh when the
// object was replaced (another UID).
func (r *Reconciler) entry(key types.NamespacedName, uid types.UID) *entry {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.entries == nil {
		r.entries = map[types.NamespacedName]*entry{}
	}
	e := r.entries[key]
	if e == nil || e.uid != uid {
		e = &entry{uid: uid}
		r.entries[key] = e
	}
	return e
}

// forget drops a deleted SeedAutoscaler's memory and series.
func (r *Reconciler) forget(key types.NamespacedName) {
	r.mu.Lock()
	delete(r.entries, key)
	r.mu.Unlock()
	r.Metrics.DeleteAutoscaler(key.Namespace, key.Name)
}

// outcome is one sync's result: the recommendation and the decision, or
// the error that stopped it.
type outcome struct {
	current  int32
	rec      seedscale.Recommendation
	decision seedscale.Decision
	dryRun   bool
	scaled   bool // the replicas were written
	err      *syncError
	// readScale says the scale subresource was read (AbleToScale).
	readScale bool
	// reused says the recommendation is the last sync's: its inputs are
	// unchanged.
	reused bool
	// scaleIn is the scale-in by drain planned or under way (scalein.go).
	scaleIn *autoscalingapi.ScaleInStatus
	// noScaleIn says why no replica could be emptied when the targets
	// would hold with one fewer (whyNoScaleIn), or "".
	noScaleIn string
}

// sync computes and, unless dry-run, writes the replicas. The reads and
// the recommendation share the sync budget; a sync past it decides
// nothing and writes nothing.
func (r *Reconciler) sync(ctx context.Context, sa *autoscalingapi.SeedAutoscaler, e *entry) outcome {
	out := outcome{dryRun: r.DryRun || sa.Spec.DryRun}
	budget, cancel := context.WithTimeout(ctx, r.SyncBudget)
	defer cancel()
	deadline := r.now().Add(r.SyncBudget)
	if out.err = r.firstForItsSet(budget, sa); out.err != nil {
		return out
	}
	t, serr := r.readTarget(budget, sa)
	if serr != nil {
		out.err = serr
		return out
	}
	out.readScale, out.current = true, t.scale.Spec.Replicas
	snap, pending := r.landscape()
	set, serr := r.buildSet(budget, t, snap)
	if serr != nil {
		out.err = serr
		return out
	}
	set.AskedAt = askedAt(sa, e)
	in := r.seedscaleInput(sa, set, snap, pending)
	fp := inputsOf(sa, t, set, snap, pending)
	fp.late = seedscale.Late(&in)
	fair := deadline.Sub(r.now()) >= r.SyncBudget/2
	out.rec, out.err, out.reused = r.fleetRecommend(ctx, sa, e, in, fp, r.stopAt(budget, deadline), fair)
	r.Metrics.CountAutoscalerRecommendation(sa.Namespace, sa.Name, recommendationResult(out))
	if out.err != nil {
		return out
	}
	si, serr := r.planScaleIn(budget, sa, e, in, out.rec)
	if serr != nil {
		out.err = serr
		return out
	}
	now := r.now()
	out.decision = seedscale.Behave(sa.Spec.Behavior, &e.history, out.current, si.recommended(out.rec), now)
	out.decision = seedscale.WithPending(out.decision, out.current, out.rec)
	if out.err = r.carryOut(ctx, sa, si, &out, snap, int32(len(set.Seeds))); out.err != nil {
		return out
	}
	out.scaleIn, out.noScaleIn = si.status, whyNoScaleIn(si.choice)
	if out.dryRun || out.decision.Replicas == out.current {
		return out
	}
	if serr := r.writeReplicas(ctx, t, out.decision.Replicas); serr != nil {
		out.err = serr
		return out
	}
	out.scaled = true
	e.history.Scales = append(e.history.Scales, seedscale.Scale{At: now, From: out.current, To: out.decision.Replicas})
	return out
}

// landscape is what a sync decides from: View's, or Snapshot and Pending.
func (r *Reconciler) landscape() (*placement.Snapshot, []*api.Shoot) {
	if r.View != nil {
		return r.View()
	}
	var pending []*api.Shoot
	if r.Pending != nil {
		pending = r.Pending()
	}
	return r.Snapshot(), pending
}

// recommendationResult is the result label of a sync's recommendation.
func recommendationResult(out outcome) string {
	switch {
	case out.reused:
		return metrics.RecommendationReused
	case out.err == nil:
		return metrics.RecommendationComputed
	case out.err.reason == ReasonSyncBudgetExceeded:
		return metrics.RecommendationOverBudget
	default:
		return metrics.RecommendationFailed
	}
}

func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}
