// Package seeddrain is the SeedDrain controller: on the elected leader it
// empties a seed through Gardener's control-plane migration. Every sync it
// reads the seed's Shoots, plans each movable one's destination with
// `webhook plan --drain`'s code (internal/plan) on the landscape the
// webhooks decide from, reserves the place and binds the Shoot through
// shoots/binding as the retry controller does, one budget slot at a time,
// and follows each migration through Gardener's lastOperation (Migrate,
// then Restore) before it frees the slot. It reports in the SeedDrain's
// status, events and metrics. The cordon of the drained seed is not here:
// the cache sets it for every decision (internal/cache, cordon.go).
package seeddrain

import (
	"context"
	"errors"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/leadership"
	"github.com/seedwarden/seedwarden/internal/metrics"
	ops "github.com/seedwarden/seedwarden/internal/operationsapi"
	"github.com/seedwarden/seedwarden/internal/pending"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// Names the controller registers under.
const (
	ControllerName    = "seeddrain"
	EventRecorderName = "seedwarden-seeddrain"
)

// syncTimeout bounds one sync: its reads, binds and status write.
const syncTimeout = time.Minute

// EventRecorder is client-go's events.EventRecorder (what
// manager.GetEventRecorder returns).
type EventRecorder interface {
	Eventf(regarding runtime.Object, related runtime.Object, eventtype, reason, action, note string, args ...any)
}

// Store is what the controller needs of cache.Store: the landscape, and
// the in-memory reservation of a place before a binding.
type Store interface {
	Snapshot() *placement.Snapshot
	Seed(name string) (*placement.Seed, bool)
	Reserve(seed string, c cache.Claim) error
	Release(key string)
}

// Reconciler drains seeds. Set the fields, then NewController or Run
// (which fill Client, APIReader and Recorder from the manager when nil).
type Reconciler struct {
	// Client reads SeedDrains (cached), writes their status and the
	// bindings.
	Client client.Client
	// APIReader reads the drained seed's Shoots from the API server (the
	// manager's cache holds reduced Shoots only).
	APIReader client.Reader
	// Recorder records events.
	Recorder EventRecorder
	// Metrics may be nil.
	Metrics *metrics.Recorder
	// Store is the webhooks' landscape and reservations.
	Store Store
	// Cluster, when set, reserves each binding's place across replicas
	// (capacity.coordination apiserver), as the retry controller does.
	Cluster pending.ClusterReserver
	// Options are the webhooks' placement options.
	Options placement.Options
	// BindMode is the retry controller's (pendingShoots.bindMode).
	BindMode pending.Mode
	// Ready reports whether the landscape may be trusted (synced and
	// fresh); until then nothing is planned or written. Nil: always.
	Ready func() bool
	// SyncPeriod is how often each SeedDrain is looked at again.
	SyncPeriod time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time

	mu sync.Mutex
	// seen are the drains this term exported series for.
	seen map[string]bool
	// noFieldSelectors is set once the API server refused a field
	// selector on Shoots (a CRD): every sync lists them all from then on.
	noFieldSelectors bool
}

// Run runs the controller over the cache c until ctx ends: one term of
// leadership (internal/leadership); the term's series are removed after.
func (r *Reconciler) Run(ctx context.Context, mgr ctrl.Manager, c crcache.Cache) error {
	ctl, err := r.NewController(mgr, c)
	if err != nil {
		return err
	}
	defer r.forgetAll()
	return ctl.Start(ctx)
}

// forgetAll removes the series of every drain this term exported.
func (r *Reconciler) forgetAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for name := range r.seen {
		r.Metrics.DeleteSeedDrain(name)
	}
	r.seen = nil
}

// remember notes that a drain's series are exported.
func (r *Reconciler) remember(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen == nil {
		r.seen = map[string]bool{}
	}
	r.seen[name] = true
}

// NewController builds the controller over the cache c without adding it
// to mgr; it fills Client, APIReader and Recorder from mgr when nil.
func (r *Reconciler) NewController(mgr ctrl.Manager, c crcache.Cache) (controller.Controller, error) {
	if err := r.check(); err != nil {
		return nil, err
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
	return leadership.NewSpecController(mgr, c, ControllerName, &ops.SeedDrain{}, r, syncTimeout)
}

func (r *Reconciler) check() error {
	if r.Store == nil {
		return errors.New("seeddrain controller: no landscape store")
	}
	if r.SyncPeriod <= 0 {
		return errors.New("seeddrain controller: the sync period must be positive")
	}
	if r.BindMode == "" {
		r.BindMode = pending.BindThroughSubresource
	}
	return nil
}

func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// Reconcile syncs one SeedDrain and asks to be called again after the
// sync period.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	d := &ops.SeedDrain{}
	if err := r.Client.Get(ctx, req.NamespacedName, d); err != nil {
		if client.IgnoreNotFound(err) == nil {
			r.Metrics.DeleteSeedDrain(req.Name)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	if r.Ready != nil && !r.Ready() {
		if d.Status.Phase == "" {
			// Said once; a drain under way keeps its last status.
			d.Status.Phase, d.Status.Message = ops.PhasePending, "waiting for the landscape cache to sync"
			if err := r.Client.Status().Update(ctx, d); err != nil {
				return ctrl.Result{}, err
			}
		}
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	r.remember(d.Name)
	if err := r.sync(ctx, d); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: r.SyncPeriod}, nil
}
