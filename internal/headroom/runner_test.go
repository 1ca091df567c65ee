package headroom

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/landscapegen"
	"github.com/seedwarden/seedwarden/internal/placement"
	"github.com/seedwarden/seedwarden/internal/plan"
)

type sample struct {
	profile string
	shoots  int
	took    time.Duration
}

type recorder struct {
	mu         sync.Mutex
	samples    []sample
	soft       []sample
	thresholds map[string]int
}

func (r *recorder) SetSoftHeadroom(profile string, shoots int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.soft = append(r.soft, sample{profile: profile, shoots: shoots})
}

func (r *recorder) SetHeadroom(profile string, shoots int, _ time.Time, d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.samples = append(r.samples, sample{profile, shoots, d})
}

func (r *recorder) SetHeadroomAlertThreshold(profile string, shoots int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.thresholds == nil {
		r.thresholds = map[string]int{}
	}
	r.thresholds[profile] = shoots
}

// fakeTime is a clock that moves only when a computation "costs" time, and
// a timer that fires at once and remembers each wait; after stopAfter
// waits it cancels the run.
type fakeTime struct {
	now       time.Time
	waits     []time.Duration
	stopAfter int
	cancel    context.CancelFunc
}

func (f *fakeTime) Now() time.Time { return f.now }

func (f *fakeTime) After(d time.Duration) <-chan time.Time {
	f.waits = append(f.waits, d)
	if len(f.waits) >= f.stopAfter {
		f.cancel()
		return nil // never fires; ctx.Done ends Start
	}
	ch := make(chan time.Time, 1)
	ch <- f.now
	return ch
}

// run starts r with the fake time until stopAfter waits; each headroom
// computation costs cost and returns 5.
func run(t *testing.T, r *Runner, cost time.Duration, stopAfter int) (*fakeTime, int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ft := &fakeTime{now: time.Unix(1700000000, 0), stopAfter: stopAfter, cancel: cancel}
	calls := 0
	r.now, r.after = ft.Now, ft.After
	r.headroom = func(*placement.Snapshot, *api.Shoot, placement.Options, int) (int, error) {
		calls++
		ft.now = ft.now.Add(cost)
		return 5, nil
	}
	if r.Snapshot == nil {
		r.Snapshot = func() *placement.Snapshot { return &placement.Snapshot{} }
	}
	require.NoError(t, r.Start(ctx))
	return ft, calls
}

func profiles(names ...string) []Profile {
	out := make([]Profile, len(names))
	for i, n := range names {
		out[i] = Profile{Name: n, Shoot: landscapegen.NewShoot("t"), Limit: 10}
	}
	return out
}

func TestRunnerWaitsIntervalOrBudget(t *testing.T) {
	for _, tc := range []struct {
		name     string
		interval time.Duration
		cost     time.Duration // per profile; two profiles
		want     time.Duration
	}{
		{"cheap rounds wait the interval", time.Minute, 10 * time.Millisecond, time.Minute},
		{"expensive rounds stretch the wait", time.Second, 100 * time.Millisecond, BudgetFactor * 200 * time.Millisecond},
		{"at the boundary", 4 * time.Second, 100 * time.Millisecond, 4 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			r := &Runner{Profiles: profiles("a", "b"), Interval: tc.interval, Metrics: rec, Log: logr.Discard()}
			ft, calls := run(t, r, tc.cost, 3)
			assert.Equal(t, []time.Duration{tc.want, tc.want, tc.want}, ft.waits)
			assert.Equal(t, 6, calls, "two profiles per round, three rounds")
			require.Len(t, rec.samples, 6)
			assert.Equal(t, sample{"a", 5, tc.cost}, rec.samples[0])
			assert.Equal(t, sample{"b", 5, tc.cost}, rec.samples[1])
		})
	}
}

// The budget holds: whatever a round costs, rounds take at most
// 1/(BudgetFactor+1) of the time.
func TestNextWaitBoundsTheShare(t *testing.T) {
	for _, last := range []time.Duration{0, time.Millisecond, time.Second, time.Minute} {
		wait := NextWait(time.Second, last)
		assert.GreaterOrEqual(t, wait, time.Second)
		assert.LessOrEqual(t, float64(last)/float64(last+wait), 1.0/float64(BudgetFactor+1))
	}
}

func TestRunnerWaitsForTheCache(t *testing.T) {
	polls := 0
	r := &Runner{
		Profiles: profiles("a"), Interval: time.Minute, Log: logr.Discard(),
		Ready: func() bool { polls++; return polls > 3 },
	}
	ft, calls := run(t, r, time.Millisecond, 5)
	assert.Equal(t, []time.Duration{ReadyPoll, ReadyPoll, ReadyPoll, time.Minute, time.Minute}, ft.waits)
	assert.Equal(t, 2, calls, "rounds only once ready")

	// An interval below the poll is not stretched to it.
	r = &Runner{Profiles: profiles("a"), Interval: 10 * time.Millisecond, Log: logr.Discard(), Ready: func() bool { return false }}
	ft, calls = run(t, r, time.Millisecond, 2)
	assert.Equal(t, []time.Duration{10 * time.Millisecond, 10 * time.Millisecond}, ft.waits)
	assert.Zero(t, calls)
}

func TestRunnerStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	rounds := make(chan struct{}, 10)
	r := &Runner{
		Profiles: profiles("a"), Interval: time.Hour, Log: logr.Discard(),
		Snapshot: func() *placement.Snapshot { rounds <- struct{}{}; return &placement.Snapshot{} },
	}
	done := make(chan error)
	go func() { done <- r.Start(ctx) }()
	<-rounds // the first round runs at once
	cancel()
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("Start did not return after cancel")
	}
}

func TestRunnerExportsThresholds(t *testing.T) {
	rec := &recorder{}
	ps := profiles("a", "b")
	ten := 10
	ps[1].AlertBelow = &ten
	run(t, &Runner{Profiles: ps, Interval: time.Minute, Metrics: rec, Log: logr.Discard()}, 0, 1)
	assert.Equal(t, map[string]int{"b": 10}, rec.thresholds)
}

// logLines captures what the runner logs.
func logLines() (logr.Logger, func() []string) {
	var mu sync.Mutex
	var lines []string
	log := funcr.New(func(prefix, args string) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, args)
	}, funcr.Options{})
	return log, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), lines...)
	}
}

// On a real landscape: the count is plan.Headroom's; a template that fits
// nowhere records 0 and says why once, not every round; a failure is
// logged and records nothing.
func TestRoundCountsLogsAndSurvives(t *testing.T) {
	store := cache.NewStore(cache.Options{})
	store.Load(landscapegen.Landscape(6, 40))
	good := landscapegen.NewShoot("good")
	unknown := landscapegen.NewShoot("unknown")
	unknown.Spec.CloudProfile.Name = "no-such-profile"
	log, lines := logLines()
	rec := &recorder{}
	r := &Runner{
		Profiles: []Profile{{Name: "good", Shoot: good, Limit: 100000}, {Name: "unknown", Shoot: unknown, Limit: 10}, {Name: "bad", Limit: 10}},
		Interval: time.Minute, Snapshot: store.Snapshot, Metrics: rec, Log: log,
	}
	r.Round()
	r.Round()

	want, err := plan.Headroom(store.Snapshot(), good, placement.Options{}, 100000)
	require.NoError(t, err)
	require.Positive(t, want)
	assert.Equal(t, []sample{{"good", want, 0}, {"unknown", 0, 0}, {"good", want, 0}, {"unknown", 0, 0}}, zeroTook(rec.samples))

	var fitsNowhere, failed int
	for _, l := range lines() {
		switch {
		case strings.Contains(l, "Headroom profile fits nowhere"):
			fitsNowhere++
			assert.Contains(t, l, `"profile"="unknown"`)
			assert.Contains(t, l, "no-such-profile")
		case strings.Contains(l, "Computing headroom failed"):
			failed++
			assert.Contains(t, l, `"profile"="bad"`)
		}
	}
	assert.Equal(t, 1, fitsNowhere, "logged on change only: %v", lines())
	assert.Equal(t, 2, failed, "every failure: %v", lines())
}

// Both limits: with a soft limit on the seeds the soft gauge is
// plan.SoftHeadroom's count, below the hard one; without any it is the hard
// count, not counted again.
func TestRoundCountsBothLimits(t *testing.T) {
	store := cache.NewStore(cache.Options{})
	store.Load(landscapegen.Landscape(6, 40))
	good := landscapegen.NewShoot("good")
	for _, tc := range []struct {
		name     string
		policies *placement.Policies
	}{
		{"soft limit 50%", &placement.Policies{SoftLimitPercent: 50}},
		{"no soft limit", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			opts := placement.Options{Policies: tc.policies}
			softCalls := 0
			r := &Runner{Profiles: []Profile{{Name: "good", Shoot: good, Limit: 100000}}, Options: opts,
				Interval: time.Minute, Snapshot: store.Snapshot, Metrics: rec, Log: logr.Discard()}
			r.defaults()
			r.soft = func(snap *placement.Snapshot, like *api.Shoot, opts placement.Options, limit int) (int, error) {
				softCalls++
				return plan.SoftHeadroom(snap, like, opts, limit)
			}
			r.Round()
			hard, err := plan.Headroom(store.Snapshot(), good, opts, 100000)
			require.NoError(t, err)
			soft, err := plan.SoftHeadroom(store.Snapshot(), good, opts, 100000)
			require.NoError(t, err)
			require.Len(t, rec.samples, 1)
			assert.Equal(t, hard, rec.samples[0].shoots)
			assert.Equal(t, []sample{{profile: "good", shoots: soft}}, rec.soft)
			if tc.policies == nil {
				assert.Equal(t, hard, soft)
				assert.Zero(t, softCalls, "no seed has a soft limit: counted once")
			} else {
				assert.Less(t, soft, hard, "half of every seed's room is past its soft limit")
				assert.Equal(t, 1, softCalls)
			}
		})
	}
}

func TestRoundRecoversFromPanics(t *testing.T) {
	log, lines := logLines()
	r := &Runner{Profiles: profiles("a"), Snapshot: func() *placement.Snapshot { return &placement.Snapshot{} }, Log: log}
	r.defaults()
	r.headroom = func(*placement.Snapshot, *api.Shoot, placement.Options, int) (int, error) { panic(errors.New("boom")) }
	assert.NotPanics(t, func() { r.Round() })
	assert.Contains(t, strings.Join(lines(), "\n"), "boom")
}

func zeroTook(s []sample) []sample {
	out := make([]sample, len(s))
	for i, x := range s {
		out[i] = sample{x.profile, x.shoots, 0}
	}
	return out
}
