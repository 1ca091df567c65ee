package pending

import (
	"context"
	"fmt"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/leadership"
	"github.com/seedwarden/seedwarden/internal/metrics"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// Store is what the controller needs of cache.Store: placement with
// reservations, and feeding it the object that triggered a retry.
type Store interface {
	Place(shoot *api.Shoot, opts placement.Options, key string) placement.Decision
	PlaceOn(shoot *api.Shoot, opts placement.Options, seed, from, to string) bool
	Release(key string)
	// ReleaseFor releases a key read off the Shoot namespace/name only if it
	// was reserved for that Shoot.
	ReleaseFor(key, namespace, name string)
	Apply(obj client.Object)
	Remove(obj client.Object)
	Seed(name string) (*placement.Seed, bool)
	// Snapshot is the landscape with live usage that wakes check pending
	// Shoots against.
	Snapshot() *placement.Snapshot
}

var _ Store = (*cache.Store)(nil)

// WatchedShoots is cache.PendingShoots: the latest full version of each
// pending Shoot the watch delivered, shared read-only.
type WatchedShoots interface {
	Get(key types.NamespacedName) (*api.Shoot, bool)
	Forget(key types.NamespacedName)
}

var _ WatchedShoots = (*cache.PendingShoots)(nil)

// EventRecorder is client-go's events.EventRecorder (what
// manager.GetEventRecorder returns).
type EventRecorder interface {
	Eventf(regarding runtime.Object, related runtime.Object, eventtype, reason, action, note string, args ...any)
}

// Event actions (events.k8s.io/v1 requires one).
const (
	ActionSchedule = "Schedule"
	actionBind     = "Bind"
)

// LastOperation values Gardener uses for a Shoot waiting for a seed.
const (
	lastOperationTypeCreate   = "Create"
	lastOperationStatePending = "Pending"
)

const (
	// conflictBackoffBase starts the quiet retries after a binding conflict
	// or a refusal of the cluster-wide reservations.
	conflictBackoffBase = 50 * time.Millisecond
	// syncPoll is how often an attempt checks whether the Store has synced.
	syncPoll = 500 * time.Millisecond
	// reconcileTimeout bounds one attempt's API calls.
	reconcileTimeout = time.Minute
)

// Reconciler places pending Shoots. Set the fields, then SetupWithManager
// (which fills Client, APIReader and Recorder from the manager when nil).
type Reconciler struct {
	Config Config
	// Store decides and reserves (cache.Store, shared with the webhook).
	Store Store
	// Cluster, when set, reserves each bind's place across replicas
	// (capacity.coordination apiserver); nil: Store alone decides.
	Cluster ClusterReserver
	// Options are the placement options (strategy, network mode), as for
	// the webhook.
	Options placement.Options
	// Client writes bindings, patches and status (default mgr.GetClient()).
	Client client.Client
	// APIReader reads full Shoots from the API server (default
	// mgr.GetAPIReader()); the manager's cache holds reduced Shoots only.
	APIReader client.Reader
	// Watched, when set, holds the full pending Shoots the watch delivered
	// (cache.PendingShoots): an attempt decides from it without reading
	// the Shoot first. Nil: every attempt reads it.
	Watched WatchedShoots
	// Recorder records events (default mgr.GetEventRecorder(EventRecorderName)).
	Recorder EventRecorder
	// Metrics may be nil.
	Metrics *metrics.Recorder
	// Synced reports whether the Store is complete (cache.Register's
	// result); until then attempts wait without counting. Nil means always.
	Synced func() bool
	// Stale reports whether the Store has been stale for longer than
	// cache.maxStaleness (handlers.StalenessGuard); meanwhile attempts wait
	// without counting, as before the sync: a seed chosen from an outdated
	// landscape could be wrong or full. Nil means never.
	Stale func() bool
	// Now is the clock for lastUpdateTime (default time.Now).
	Now func() time.Time
	// Verifier checks the placement token of a seed the mutating webhook
	// announced (placement mode "binding"); such a Shoot is bound to that
	// seed while it still fits. Nil: announced seeds are not trusted and
	// every Shoot is decided here.
	Verifier TokenVerifier

	once sync.Once
	mu   sync.Mutex
	// pending holds what this replica knows of each pending Shoot
	// (state.go).
	pending   map[types.NamespacedName]*shootState
	backoff   workqueue.TypedRateLimiter[types.NamespacedName]
	conflicts workqueue.TypedRateLimiter[types.NamespacedName]
	// rewakes carries seeds whose room a woken Shoot left untaken (it was
	// bound elsewhere) to the controller's queue (wake.go).
	rewakes    chan event.GenericEvent
	controller controller.Controller
}

func (r *Reconciler) init() {
	r.once.Do(func() {
		r.Config.Default()
		if r.Now == nil {
			r.Now = time.Now
		}
		r.pending = map[types.NamespacedName]*shootState{}
		r.backoff = workqueue.NewTypedItemExponentialFailureRateLimiter[types.NamespacedName](r.Config.BackoffBase, r.Config.BackoffMax)
		r.conflicts = workqueue.NewTypedItemExponentialFailureRateLimiter[types.NamespacedName](min(conflictBackoffBase, r.Config.BackoffBase), r.Config.ConflictBackoffMax)
		r.rewakes = make(chan event.GenericEvent, rewakeBuffer)
		// Read at scrape time, from this Reconciler's state.
		r.Metrics.SetPendingOldestAge(r.oldestPendingAge)
		r.Metrics.SetPendingLongestBackoff(r.longestBackoff)
		r.Metrics.SetPendingReasons(r.reasonCounts)
	})
}

// SetupWithManager registers the controller with mgr, to run under the
// manager's own leader election (one term for the manager's life). The
// manager's cache must hold Shoots and Seeds (cache.ConfigureInformerOptions)
// and the Store must be fed by the same cache (cache.Register).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	c, err := r.NewController(mgr, mgr.GetCache())
	if err != nil {
		return err
	}
	if err := mgr.Add(c); err != nil {
		return err
	}
	return mgr.Add(manager.RunnableFunc(r.reportLeader))
}

// Run runs the controller over the cache c until ctx ends: one term of
// leadership (internal/leadership). A Reconciler runs one term; the next
// term gets a new one, so no pending Shoot or backoff of an old term
// outlives it, and a replica that no longer leads reports none.
func (r *Reconciler) Run(ctx context.Context, mgr ctrl.Manager, c crcache.Cache) error {
	ctl, err := r.NewController(mgr, c)
	if err != nil {
		return err
	}
	// The gauges read at scrape time follow this Reconciler (init) while
	// it runs, and read nothing once it stopped.
	r.Metrics.SetRetryControllerLeader(true)
	defer func() {
		none := func() time.Duration { return 0 }
		r.Metrics.SetRetryControllerLeader(false)
		r.Metrics.SetPendingOldestAge(none)
		r.Metrics.SetPendingLongestBackoff(none)
		r.Metrics.SetPendingReasons(nil)
		r.Metrics.SetPending(0)
	}()
	return ctl.Start(ctx)
}

// NewController builds the controller over the cache c (the manager's, as
// one term sees it) without adding it to mgr; it fills Client, APIReader
// and Recorder from mgr when nil. Its name is not checked for uniqueness:
// each term builds one anew.
func (r *Reconciler) NewController(mgr ctrl.Manager, c crcache.Cache) (controller.Controller, error) {
	r.init()
	if err := r.Config.Validate(); err != nil {
		return nil, fmt.Errorf("pending-shoot controller: %w", err)
	}
	if r.Store == nil {
		return nil, fmt.Errorf("pending-shoot controller: no store")
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
	opts := controller.Options{
		MaxConcurrentReconciles: r.Config.Workers,
		// Only for errors returned by Reconcile (reading the Shoot);
		// attempts back off through RequeueAfter (see the package doc).
		RateLimiter:           workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](r.Config.BackoffBase, r.Config.BackoffMax),
		ReconciliationTimeout: reconcileTimeout,
		Reconciler:            r,
		// NeedLeaderElection is left unset: controllers need it by default.
	}
	ctl, err := leadership.NewTermController(mgr, ControllerName, opts)
	if err != nil {
		return nil, err
	}
	for _, src := range []source.Source{
		source.Kind[client.Object](c, &api.Shoot{}, r.shootHandler()),
		source.Kind[client.Object](c, &api.Seed{}, r.seedHandler()),
		source.Channel(r.rewakes, r.rewakeHandler()),
	} {
		if err := ctl.Watch(src); err != nil {
			return nil, err
		}
	}
	r.controller = ctl
	return ctl, nil
}

// NeedLeaderElection reports whether the registered controller runs only on
// the leader (always true once SetupWithManager has run).
func (r *Reconciler) NeedLeaderElection() bool {
	le, ok := r.controller.(manager.LeaderElectionRunnable)
	return ok && le.NeedLeaderElection()
}

// Reconcile tries to place one Shoot.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	r.init()
	key := req.NamespacedName
	log := ctrl.LoggerFrom(ctx).WithValues("shoot", key.String())

	if r.cacheNotReady(log) {
		return reconcile.Result{RequeueAfter: syncPoll}, nil
	}
	wokenFor := r.wokenFor(key)
	shoot, err := r.shootToPlace(ctx, key)
	if err != nil {
		return reconcile.Result{}, err
	}
	if shoot == nil || !r.isPending(shoot) {
		r.forget(key)
		if wokenFor != "" {
			// Bound (an attempt decided from an outdated copy, or someone
			// else bound it) or gone: the room it was woken for is still
			// there.
			r.rewake(wokenFor)
		}
		return reconcile.Result{}, nil
	}
	r.track(key)

	resKey := ReservationKey(key.Namespace, key.Name)
	d, kept, retry := r.announced(ctx, shoot, resKey)
	if retry > 0 {
		return reconcile.Result{RequeueAfter: retry}, nil
	}
	if !kept {
		d = r.Store.Place(shoot, r.Options, resKey)
	}
	r.recordCodes(shoot, &d)
	if !d.Schedulable() {
		return r.unschedulable(ctx, shoot, &d), nil
	}
	// An announced seed is kept, not ranked: its event has no breakdown.
	res := r.bindSeed(ctx, log, key, shoot, d.Seed, d.ScoreSummary(), kept)
	if res.IsZero() && wokenFor != "" && wokenFor != d.Seed {
		// Bound elsewhere: the room it was woken for is still there.
		r.rewake(wokenFor)
	}
	return res, nil
}

// cacheNotReady reports (and logs) that the cache has not synced or is
// stale: placing from it now could overfill seeds.
func (r *Reconciler) cacheNotReady(log logr.Logger) bool {
	if r.Synced != nil && !r.Synced() {
		log.V(1).Info("Cache not synced yet; waiting")
		return true
	}
	if r.Stale != nil && r.Stale() {
		log.V(1).Info("Cache stale; waiting until the informers watch again")
		return true
	}
	return false
}

// shootToPlace is the Shoot as the watch last delivered it while pending
// (Watched), else as the API server has it; nil when it is gone. The bind is
// conditional on its resourceVersion, so deciding from a version the API
// server has moved past binds nothing (a conflict: read again).
func (r *Reconciler) shootToPlace(ctx context.Context, key types.NamespacedName) (*api.Shoot, error) {
	if r.Watched != nil {
		if s, ok := r.Watched.Get(key); ok && s.ResourceVersion != r.outdatedVersion(key) {
			return s, nil
		}
	}
	return r.readShoot(ctx, key)
}

// readShoot reads the Shoot from the API server; nil when it is gone.
func (r *Reconciler) readShoot(ctx context.Context, key types.NamespacedName) (*api.Shoot, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(api.ShootGVK)
	if err := r.APIReader.Get(ctx, key, u); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading Shoot %s: %w", key, err)
	}
	shoot := &api.Shoot{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, shoot); err != nil {
		// The API server validated the Shoot; this is a bug on our side.
		return nil, fmt.Errorf("decoding Shoot %s: %w", key, err)
	}
	return shoot, nil
}

// isPending: the Shoot awaits a seed from this controller (api.AwaitsSeed).
func (r *Reconciler) isPending(s *api.Shoot) bool {
	return api.AwaitsSeed(s, r.Config.SchedulerName)
}

func shootRef(key types.NamespacedName) *api.Shoot {
	return &api.Shoot{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
}

// scheduledMessage is the SchedulingSuccessful event's message:
// gardener-scheduler's, then the score breakdown of a scored decision, cut
// to an event's size.
func scheduledMessage(seed, scores string) string {
	msg := fmt.Sprintf("Scheduled to seed %q", seed)
	if scores != "" {
		msg += "; scores: " + scores
	}
	return truncate(msg)
}

// truncate cuts s to MaxMessageBytes on a rune boundary, marking the cut.
func truncate(s string) string {
	if len(s) <= MaxMessageBytes {
		return s
	}
	const ellipsis = "…"
	cut := MaxMessageBytes - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + ellipsis
}
