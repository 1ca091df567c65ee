// Package leadership runs the work only one replica may do (the retry
// controller, the SeedAutoscaler controller) while this replica holds a
// Lease, and only then. Leading is a role the process takes and gives up,
// not its life: when the Lease cannot be renewed (the API server is
// unreachable or slow), the term ends, its work stops, and the replica
// stands for election again; the webhook server, the caches, metrics and
// probes run on untouched. On shutdown the Lease is released, so the next
// leader takes over at once.
//
// Each term builds its work afresh (controller-runtime controllers cannot be
// started twice) over the manager's shared cache, so a term adds no watch of
// its own: its event handlers are removed from the shared informers when it
// ends.
package leadership

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/sync/errgroup"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// Durations of the election: controller-runtime's defaults, which the
// manager-level election of earlier versions used, so that replicas of an
// old and a new version share one Lease during a rolling update.
const (
	DefaultLeaseDuration = 15 * time.Second
	DefaultRenewDeadline = 10 * time.Second
	DefaultRetryPeriod   = 2 * time.Second
)

// Reasons a term ended before shutdown (Recorder).
const (
	// EndLeaseLost: the Lease was not renewed within the renew deadline.
	EndLeaseLost = "lease_lost"
	// EndWorkFailed: some work of the term returned an error; the Lease is
	// released so another replica may try.
	EndWorkFailed = "work_failed"
)

// Work runs one term's share of the leader-only work until ctx ends. It
// must build what it runs anew each call, over c: the manager's cache,
// whose event handlers added during the term are removed when it ends. An
// error ends the term for all the work.
type Work func(ctx context.Context, c cache.Cache) error

// Recorder counts the terms that ended before shutdown
// (*metrics.Recorder); nil records nothing.
type Recorder interface {
	CountLeadershipEnded(reason string)
}

// Options configure a Runner.
type Options struct {
	// Lock is the Lease (NewLock). Nil: no election, the work runs for the
	// process's whole life (leaderElection.enabled false, one replica).
	Lock resourcelock.Interface
	// Name names the election in client-go's leader_election_master_status
	// (the Lease's name).
	Name string
	// LeaseDuration, RenewDeadline and RetryPeriod default to the Default*
	// constants.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	Log                                       logr.Logger
	Metrics                                   Recorder
}

// Runner is a manager.Runnable that every replica runs: it stands for
// election, runs the work while leading, and stands again when a term ends.
type Runner struct {
	cache cache.Cache
	opts  Options
	work  []namedWork

	mu      sync.Mutex
	leading bool
	terms   int
}

type namedWork struct {
	name string
	run  Work
}

var (
	_ manager.Runnable               = (*Runner)(nil)
	_ manager.LeaderElectionRunnable = (*Runner)(nil)
)

// New returns a Runner of work over c (the manager's cache).
func New(c cache.Cache, opts Options) *Runner {
	if opts.LeaseDuration == 0 {
		opts.LeaseDuration = DefaultLeaseDuration
	}
	if opts.RenewDeadline == 0 {
		opts.RenewDeadline = DefaultRenewDeadline
	}
	if opts.RetryPeriod == 0 {
		opts.RetryPeriod = DefaultRetryPeriod
	}
	return &Runner{cache: c, opts: opts}
}

// Add adds work to every term; call it before Start.
func (r *Runner) Add(name string, w Work) {
	r.work = append(r.work, namedWork{name: name, run: w})
}

// NeedLeaderElection is false: the Runner is the election, on every replica.
func (r *Runner) NeedLeaderElection() bool { return false }

// Leading reports whether this replica runs the work now.
func (r *Runner) Leading() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.leading
}

// Terms is the number of terms begun so far.
func (r *Runner) Terms() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.terms
}

// Start stands for election until ctx ends. It returns nil: a lost Lease
// or failed work ends a term, never the process.
func (r *Runner) Start(ctx context.Context) error {
	if len(r.work) == 0 {
		return nil
	}
	for ctx.Err() == nil {
		var failed bool
		if r.opts.Lock == nil {
			failed = r.runUnelected(ctx)
		} else {
			failed = r.elect(ctx)
		}
		if failed {
			// Another replica may take the Lease before this one stands again.
			select {
			case <-ctx.Done():
			case <-time.After(r.opts.LeaseDuration):
			}
		}
	}
	return nil
}

// runUnelected runs the work without an election (one replica), again
// after a pause when it fails, as a leader would stand again.
func (r *Runner) runUnelected(ctx context.Context) (failed bool) {
	if err := r.term(ctx, ""); err != nil {
		r.opts.Log.Error(err, "Leader-only work failed: starting it again after a pause", "pause", r.opts.LeaseDuration)
		r.count(EndWorkFailed)
		return true
	}
	return false
}

// elect stands once: it waits for the Lease, runs one term and returns
// when the term has ended and all its work has stopped, reporting whether
// the work failed.
func (r *Runner) elect(ctx context.Context) (failed bool) {
	electCtx, resign := context.WithCancel(ctx)
	defer resign()
	lock := &releaseGuard{Interface: r.opts.Lock, shutdown: ctx}
	done := make(chan error, 1)
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:          lock,
		LeaseDuration: r.opts.LeaseDuration,
		RenewDeadline: r.opts.RenewDeadline,
		RetryPeriod:   r.opts.RetryPeriod,
		// Only a replica that gives the Lease up on purpose releases it
		// (releaseGuard): one that lost it may no longer hold it.
		ReleaseOnCancel: true,
		Name:            r.opts.Name,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(termCtx context.Context) {
				err := r.term(termCtx, lock.Identity())
				if err != nil {
					lock.resigned.Store(true)
					resign()
				}
				done <- err
			},
			OnStoppedLeading: func() {},
		},
	})
	if err != nil {
		// A configuration error only (durations, no lock), which New's
		// defaults rule out.
		r.opts.Log.Error(err, "Cannot stand for election")
		return true
	}
	le.Run(electCtx)
	if !lock.acquired.Load() {
		return false // shutdown before this replica led
	}
	// le.Run returns as soon as the term's context is cancelled; wait until
	// its work has stopped, so that no two terms overlap here.
	workErr := <-done
	switch {
	case ctx.Err() != nil:
		r.opts.Log.Info("Leadership released on shutdown", "lease", lock.Describe())
	case workErr != nil:
		r.opts.Log.Error(workErr, "Leader-only work failed: leadership released, standing again after the lease duration",
			"lease", lock.Describe(), "leaseDuration", r.opts.LeaseDuration)
		r.count(EndWorkFailed)
		return true
	default:
		r.opts.Log.Info("Leadership lost: the Lease was not renewed within the renew deadline; the leader-only work stopped, the rest of the process runs on; standing again",
			"lease", lock.Describe(), "renewDeadline", r.opts.RenewDeadline)
		r.count(EndLeaseLost)
	}
	return false
}

// term runs every work until ctx ends or one fails.
func (r *Runner) term(ctx context.Context, identity string) error {
	r.mu.Lock()
	r.terms++
	n := r.terms
	r.leading = true
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.leading = false
		r.mu.Unlock()
	}()
	names := make([]string, len(r.work))
	for i, w := range r.work {
		names[i] = w.name
	}
	log := r.opts.Log.WithValues("term", n)
	log.Info("Leading: starting the leader-only work", "identity", identity, "work", names)
	tc := newTermCache(r.cache)
	defer tc.removeHandlers()
	g, gctx := errgroup.WithContext(ctx)
	for _, w := range r.work {
		g.Go(func() error {
			if err := w.run(gctx, tc); err != nil {
				return fmt.Errorf("%s: %w", w.name, err)
			}
			if gctx.Err() == nil {
				return fmt.Errorf("%s: stopped while leading", w.name)
			}
			return nil
		})
	}
	err := g.Wait()
	log.Info("Leader-only work stopped")
	if ctx.Err() != nil {
		// The term ended (lost, or shutdown): what the work returned on
		// its way out is no failure.
		return nil
	}
	return err
}

func (r *Runner) count(reason string) {
	if r.opts.Metrics != nil {
		r.opts.Metrics.CountLeadershipEnded(reason)
	}
}
