// Package headroom keeps the headroom gauges current: every interval, while
// the cache is ready, it counts for each configured profile how many more
// Shoots like its template the landscape takes (plan.Headroom, the
// placement code itself, on a copy-on-write view of the Store's snapshot),
// and how many with every seed held to its soft limit (plan.SoftHeadroom,
// the placement policies' soft capacity), and records the counts. It runs on every replica, needs no leadership and
// makes no API call.
package headroom

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/placement"
	"github.com/seedwarden/seedwarden/internal/plan"
)

// BudgetFactor bounds the CPU the runner takes: the wait after a round is
// at least BudgetFactor times the round's duration, so rounds take at most
// 1/(BudgetFactor+1), under 5%, of one core however large the landscape
// grows (BENCHMARKS.md has the cost per profile).
const BudgetFactor = 20

// ReadyPoll is how often a runner whose cache is not ready checks again.
const ReadyPoll = time.Second

// Profile is one template whose headroom is exported.
type Profile struct {
	// Name is the value of the profile label.
	Name string
	// Shoot is the template; its seed names are ignored.
	Shoot *api.Shoot
	// Limit is where counting stops (at least 1).
	Limit int
	// AlertBelow, when set, is exported as the profile's alert threshold.
	AlertBelow *int
}

// Recorder records the gauges (*metrics.Recorder).
type Recorder interface {
	SetHeadroom(profile string, shoots int, at time.Time, d time.Duration)
	SetSoftHeadroom(profile string, shoots int)
	SetHeadroomAlertThreshold(profile string, shoots int)
}

// Runner recomputes the profiles' headroom; it is a controller-runtime
// Runnable that every replica runs.
type Runner struct {
	Profiles []Profile
	// Interval is the least time between two rounds.
	Interval time.Duration
	// Options are the placement options the webhooks decide with.
	Options placement.Options
	// Snapshot returns the landscape (cache.Store.Snapshot).
	Snapshot func() *placement.Snapshot
	// Ready reports whether the cache may be counted on (informers synced,
	// not stale); nil means always.
	Ready   func() bool
	Metrics Recorder
	Log     logr.Logger

	// Tests replace these.
	now      func() time.Time
	after    func(time.Duration) <-chan time.Time
	headroom func(*placement.Snapshot, *api.Shoot, placement.Options, int) (int, error)
	soft     func(*placement.Snapshot, *api.Shoot, placement.Options, int) (int, error)

	// why is each profile's last "no seed" message, logged on change.
	why map[string]string
}

// NeedLeaderElection is false: every replica serves its own metrics.
func (r *Runner) NeedLeaderElection() bool { return false }

// NextWait is the wait after a round that took last: Interval, or longer
// when the round was expensive (BudgetFactor).
func NextWait(interval, last time.Duration) time.Duration {
	return max(interval, BudgetFactor*last)
}

// Start exports the alert thresholds, then computes a round whenever the
// cache is ready and the wait after the last round has passed, until ctx
// ends. It always returns nil: failures are logged, never fatal.
func (r *Runner) Start(ctx context.Context) error {
	r.defaults()
	for _, p := range r.Profiles {
		if p.AlertBelow != nil && r.Metrics != nil {
			r.Metrics.SetHeadroomAlertThreshold(p.Name, *p.AlertBelow)
		}
	}
	r.Log.Info("Computing headroom", "profiles", len(r.Profiles), "interval", r.Interval.String(), "budgetFactor", BudgetFactor)
	for {
		wait := min(ReadyPoll, r.Interval)
		if r.Ready == nil || r.Ready() {
			wait = NextWait(r.Interval, r.Round())
		}
		select {
		case <-ctx.Done():
			return nil
		case <-r.after(wait):
		}
	}
}

func (r *Runner) defaults() {
	if r.now == nil {
		r.now = time.Now
	}
	if r.after == nil {
		r.after = time.After
	}
	if r.headroom == nil {
		r.headroom = plan.Headroom
	}
	if r.soft == nil {
		r.soft = plan.SoftHeadroom
	}
	if r.why == nil {
		r.why = map[string]string{}
	}
}

// Round computes every profile once on one snapshot and records the
// counts; it returns how long it took.
func (r *Runner) Round() time.Duration {
	r.defaults()
	start := r.now()
	snap := r.Snapshot()
	// Without a soft limit on any seed the soft count is the hard one:
	// counted once.
	soft := plan.HasSoftLimits(snap, r.Options.Policies)
	for _, p := range r.Profiles {
		r.profile(snap, p, soft)
	}
	return r.now().Sub(start)
}

// profile computes and records one profile's headroom, and under the soft
// limits when some seed has one (soft).
func (r *Runner) profile(snap *placement.Snapshot, p Profile, soft bool) {
	defer func() {
		// The placement code does not panic on valid input; if it ever
		// did, the webhook must keep serving.
		if v := recover(); v != nil {
			r.Log.Error(fmt.Errorf("panic: %v", v), "Computing headroom failed", "profile", p.Name)
		}
	}()
	start := r.now()
	n, err := r.headroom(snap, p.Shoot, r.Options, p.Limit)
	if err != nil {
		r.Log.Error(err, "Computing headroom failed", "profile", p.Name)
		return
	}
	under := n
	if soft {
		if under, err = r.soft(snap, p.Shoot, r.Options, p.Limit); err != nil {
			r.Log.Error(err, "Computing headroom under the soft limits failed", "profile", p.Name)
			return
		}
	}
	end := r.now()
	if r.Metrics != nil {
		r.Metrics.SetHeadroom(p.Name, n, end, end.Sub(start))
		r.Metrics.SetSoftHeadroom(p.Name, under)
	}
	r.explain(snap, p, n)
}

// explain logs, when it changes, why a profile has no headroom: the
// decision's message for the template (an unknown cloud profile, every
// seed full or filtered out).
func (r *Runner) explain(snap *placement.Snapshot, p Profile, n int) {
	if n > 0 {
		if r.why[p.Name] != "" {
			r.Log.Info("Headroom profile fits again", "profile", p.Name, "headroom", n)
		}
		delete(r.why, p.Name)
		return
	}
	shoot := p.Shoot.DeepCopy()
	shoot.Spec.SeedName, shoot.Status.SeedName = nil, nil
	d := placement.Decide(snap, shoot, r.Options)
	msg := d.Message
	if msg == "" {
		msg = "no seed takes it"
	}
	if r.why[p.Name] == msg {
		return
	}
	r.why[p.Name] = msg
	r.Log.Info("Headroom profile fits nowhere", "profile", p.Name, "step", d.Step, "message", msg)
}
