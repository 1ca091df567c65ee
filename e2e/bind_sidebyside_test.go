package e2e

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// BenchOutEnv names a file TestBindSideBySide writes its markdown report
// to, besides logging it.
const BenchOutEnv = "SEEDWARDEN_E2E_BENCH_OUT"

// BenchQuickEnv = "1" runs TestBindSideBySide at a fifth of its size (2 s
// of sending, a burst of 60, 500 Shoots in the garden): a check of the
// harness in about five minutes, not figures to compare.
const BenchQuickEnv = "SEEDWARDEN_E2E_BENCH_QUICK"

const (
	// sideBySideSyncs is gardener-scheduler's concurrentSyncs in the
	// comparison, as seedwarden's retry controller runs 5 workers (the
	// default of pendingShoots.workers).
	sideBySideSyncs = 5
	// burstInFlight bounds the CREATEs of a burst in flight at once, as a
	// client with a connection pool or a rate limiter would.
	burstInFlight = 50
	// gardenShoots is how many Shoots the admin binds into the garden
	// before the scenarios on a big garden.
	gardenShoots = 5000
	// sideBySideWarmup Shoots are created and bound at the start of each
	// phase, unmeasured: the first binds after a scheduler's start open its
	// connections and grow its heap, and they prove it binds.
	sideBySideWarmup = 10
	// bindDeadline is how long after the last CREATE answered every Shoot
	// of a phase must be bound.
	bindDeadline = 2 * time.Minute
	// keptUpBound is the p99 below which a sustained rate is kept up with.
	keptUpBound = time.Second
	// phaseLabel marks the Shoots of one phase (and "fill" for the garden's
	// Shoots), so a watch and a deletion can select them.
	phaseLabel = "e2e.seedwarden.io/bench-phase"
)

// binder is who binds the Shoots of a phase.
type binder int

const (
	byGardener binder = iota
	bySeedwarden
)

func (b binder) String() string { return [...]string{"gardener-scheduler", "seedwarden"}[b] }

// roundOrder is the order of each scenario's phases: each binder once before
// and once after the other, so a drift of the shared machine's load
// cancels in the pooled figures, and only two switches per scenario.
var roundOrder = []binder{byGardener, bySeedwarden, bySeedwarden, byGardener}

// scenario is a load: a rate for a while, or a burst, on the empty garden
// or on the one filled with gardenShoots.
type scenario struct {
	shape  benchShape
	full   bool // on the garden holding the filled Shoots
	rate   int  // CREATEs per second; 0 for a burst
	shoots int  // CREATEs in all
}

func (sc scenario) sustained() bool { return sc.rate > 0 }

func (sc scenario) String() string {
	garden := "empty"
	if sc.full {
		garden = "full"
	}
	if sc.sustained() {
		return fmt.Sprintf("%s, %d/s for %d s", garden, sc.rate, sc.shoots/sc.rate)
	}
	return fmt.Sprintf("%s, burst of %d", garden, sc.shoots)
}

// label is the shape and the load.
func (sc scenario) label() string { return sc.shape.String() + "; " + sc.String() }

// sideBySidePlan is the loads a shape can run (BenchShapesEnv names them)
// and the Shoots the garden is filled with before the first full one.
func sideBySidePlan(quick bool) ([]scenario, int) {
	secs, burst, fill := 10, 300, gardenShoots
	if quick {
		secs, burst, fill = 2, 60, gardenShoots/10
	}
	return []scenario{
		{rate: 20, shoots: 20 * secs},
		{rate: 50, shoots: 50 * secs},
		{shoots: burst},
		{full: true, rate: 20, shoots: 20 * secs},
		{full: true, rate: 50, shoots: 50 * secs},
		{full: true, shoots: burst},
	}, fill
}

// TestBindSideBySide (SEEDWARDEN_E2E_BENCH=1, gardener target, placement
// mode binding): Gardener's gardener-scheduler (built from the same tree,
// concurrentSyncs 5) against seedwarden (its retry controller, 5 workers,
// the shipped webhooks and RBAC), in alternating phases in front of the
// one gardener-apiserver. In a gardener-scheduler phase seedwarden's
// webhook configurations are removed and its processes stopped; in a
// seedwarden phase gardener-scheduler is stopped, seedwarden runs (1 or 3
// replicas) and is registered. Shoots go to us-east-1, where aws-us1 and
// two copies of it stand (benchSeeds), in the shapes of BenchShapesEnv
// (issue 40): the seeds with or without a capacity limit, one project
// member or many sending the Shoots, 1 or 3 replicas; each at 20/s or
// 50/s for 10 s or in a burst of 300 (50 in flight), on the empty garden
// and then on one holding 5,000 Shoots the admin bound across the seeds.
// Per phase: CREATE sent -> spec.seedName seen in a watch (p50/p99),
// binds/s, CPU of each process, the binder's API requests, the Shoots
// announced at CREATE. The report (markdown, logged and written to
// $SEEDWARDEN_E2E_BENCH_OUT) pools the rounds and gives every ratio and
// the acceptance targets; those are not asserted (shared machine).
// Asserted: every CREATE succeeds, every Shoot is claimed by the phase's
// binder and bound within bindDeadline, none is bound twice, and the
// SchedulingSuccessful events name the phase's binder.
func TestBindSideBySide(t *testing.T) {
	st := needGardener(t)
	if os.Getenv(BenchEnv) != "1" {
		t.Skipf("a benchmark of about 7 minutes per shape: set %s=1 to run it", BenchEnv)
	}
	if !bindingMode() {
		t.Skipf("placement mode %q: the comparison is with seedwarden binding, as gardener-scheduler does", placementMode)
	}
	st.requireWebhook(t, webhookPlace, webhookSeed)
	st.logOnFailure(t)
	reg, err := st.saveRegistration(context.Background())
	require.NoError(t, err)
	dev, _ := st.projectUsers(t)
	sb := &sideBySide{st: st, t: t, dev: dev.c, reg: reg, shipped: reg.without(webhookShootSize, webhookSize), current: reg, active: bySeedwarden}
	t.Cleanup(sb.restore)
	sb.config, sb.changes, err = st.writeBenchConfig()
	require.NoError(t, err)
	t.Logf("seedwarden's phases run the suite's configuration with %d pieces as shipped: %q", len(sb.changes), sb.changes)
	quick := os.Getenv(BenchQuickEnv) == "1"
	plan := benchPlanFromEnv(t, quick)
	sb.createBenchSeeds()
	st.waitSettled(t)
	began := time.Now()
	var results []phaseFigures
	filled := false
	for i, sc := range plan.ordered() {
		if i == 0 || sc.shape != sb.shape {
			sb.applyShape(sc.shape)
		}
		if sc.full && !filled {
			sb.fill(plan.fill)
			filled = true
		}
		rounds := map[binder]int{}
		for _, b := range roundOrder {
			sb.activate(b)
			rounds[b]++
			r := sb.runPhase(len(results)+1, sc, b, rounds[b])
			msg := r.summary()
			t.Log(msg)
			fmt.Printf("e2e: %s\n", msg)
			results = append(results, r)
		}
	}
	report := sideBySideReport(results, reportContext{
		quick: quick, fill: plan.fill, took: time.Since(began), started: began, shapes: os.Getenv(BenchShapesEnv),
	})
	t.Log("\n" + report)
	fmt.Print(report)
	if out := os.Getenv(BenchOutEnv); out != "" {
		require.NoError(t, os.WriteFile(out, []byte(report), 0o644), "%s", BenchOutEnv)
	}
}

// runPhase is phase n: the warm-up, the measured load, the checks, and the
// deletion of the phase's Shoots.
func (sb *sideBySide) runPhase(n int, sc scenario, b binder, round int) phaseFigures {
	t := sb.t
	t.Helper()
	warm := fmt.Sprintf("%dw", n)
	sb.measure(warm, scenario{full: sc.full, rate: 20, shoots: sideBySideWarmup}, b)
	prof := sb.profilePhase(fmt.Sprint(n), sc, b)
	r := sb.measure(fmt.Sprint(n), sc, b)
	require.Empty(t, prof.wait(), "the CPU profiles of phase %d (%s)", n, BenchProfilesEnv)
	r.n, r.round = n, round
	began := time.Now()
	require.NoError(t, sb.deletePhases(warm, fmt.Sprint(n)))
	t.Logf("phase %d: its Shoots deleted in %s", n, time.Since(began).Round(time.Millisecond))
	return r
}

// phaseFigures is what one phase measured.
type phaseFigures struct {
	scenario
	binder
	n, round    int
	bound       []time.Duration // CREATE sent -> spec.seedName seen, sorted
	calls       []time.Duration // CREATE sent -> answered, sorted
	span        time.Duration   // first CREATE sent -> last bind seen
	cpu         map[string]time.Duration
	requests    map[string]float64   // the binder's API requests by method
	decisions   float64              // seedwarden's placement decisions
	decideTime  time.Duration        // their total time
	reconcile   histogram            // the binder's reconciles
	queueWait   histogram            // time Shoots waited in its work queues
	webhooks    map[string]histogram // seedwarden's webhook requests by path
	unannounced int                  // seedwarden: admitted without an announced seed
	refused     map[string]float64   // seedwarden's reservations refused, by limit
	seeds       map[string]int       // Shoots per bound seed
	load        string
	// watchRestarts is how often the API server closed the watch that
	// sees the binds (the binds of the gap are seen late, at its reopening).
	watchRestarts int
}

func (r phaseFigures) bindsPerSecond() float64 {
	if r.span <= 0 {
		return 0
	}
	return float64(len(r.bound)) / r.span.Seconds()
}

// apiCPUPerShoot is gardener-apiserver's and kube-apiserver's CPU per
// placed Shoot.
func (r phaseFigures) apiCPUPerShoot() time.Duration {
	if len(r.bound) == 0 {
		return 0
	}
	return (r.cpu[compGardenerAPIServer] + r.cpu[compKubeAPIServer]) / time.Duration(len(r.bound))
}

func (r phaseFigures) summary() string {
	seeds := make([]string, 0, len(r.seeds))
	for s, c := range r.seeds {
		seeds = append(seeds, fmt.Sprintf("%s %d", s, c))
	}
	slices.Sort(seeds)
	return fmt.Sprintf("phase %d (%s, %s, round %d): %d bound, p50 %s, p99 %s, %.1f binds/s; CREATE p50 %s; API-server CPU per Shoot %s; CPU %s; seeds %v; unannounced %d; watch reopened %d times; load %s",
		r.n, r.label(), r.binder, r.round, len(r.bound), pct(r.bound, .5), pct(r.bound, .99), r.bindsPerSecond(),
		pct(r.calls, .5), r.apiCPUPerShoot().Round(10*time.Microsecond), formatCPU(r.cpu), seeds, r.unannounced, r.watchRestarts, r.load)
}
