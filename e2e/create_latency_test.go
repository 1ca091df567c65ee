package e2e

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/api"
)

// BenchEnv = "1" runs the suite's benchmarks, which take minutes and are
// not part of `make e2e` (CI): TestCreateLatencyWebhooks.
const BenchEnv = "SEEDWARDEN_E2E_BENCH"

// createBenchDuration is how long each phase of TestCreateLatencyWebhooks
// sends, after createBenchWarmup of CREATEs that are not measured (new
// connections to the webhook, the first decision after a registration).
const (
	createBenchDuration = 10 * time.Second
	createBenchWarmup   = time.Second
	// createBenchFirstWarmup is sent once before the first phase.
	createBenchFirstWarmup = 3 * time.Second
)

// hookKind is what is registered during a phase.
type hookKind int

const (
	// noWebhooks: the webhook configurations removed.
	noWebhooks hookKind = iota
	// emptyWebhooks: the same configurations pointed at emptyWebhook.
	emptyWebhooks
	// seedwardenWebhooks: the suite's configurations, as registered.
	seedwardenWebhooks
)

func (k hookKind) String() string {
	return [...]string{"none", "empty", "seedwarden"}[k]
}

// benchPhase is one stretch of CREATEs at a fixed rate.
type benchPhase struct {
	kind hookKind
	rate int
}

// createBenchPlan runs seedwarden, none, empty, empty, none, seedwarden per
// rate, so that a drift of the shared machine's load shows in the table and
// cancels in the pooled figures.
var createBenchPlan = func() []benchPhase {
	var out []benchPhase
	for _, rate := range []int{20, 50} {
		for _, k := range []hookKind{seedwardenWebhooks, noWebhooks, emptyWebhooks, emptyWebhooks, noWebhooks, seedwardenWebhooks} {
			out = append(out, benchPhase{k, rate})
		}
	}
	return out
}()

// phaseResult is what one phase measured.
type phaseResult struct {
	benchPhase
	sending  time.Duration   // first CREATE sent to the last
	call     []time.Duration // CREATE sent -> response, sorted
	load     string          // /proc/loadavg at the end
	cpu      map[string]time.Duration
	conns    [3]int // connections to the webhook: used, opened, peak
	api, own [2][]sample
}

// TestCreateLatencyWebhooks (SEEDWARDEN_E2E_BENCH=1): what seedwarden's
// webhooks add to a Shoot CREATE as a client sees it. Shoots (us-east-1:
// aws-us1, which has no capacity limit, so no seed fills and no capacity
// ConfigMap is written) are created at 20 and 50 per second, each CREATE in
// its own goroutine, with the suite's webhook configurations registered,
// with them removed, and with them pointed at an empty webhook (what the
// mechanism costs without seedwarden's work), alternating in one run
// (createBenchPlan). Only the CREATE call is timed; in placement mode
// binding the retry controller's binds of a phase are awaited before the
// next phase starts. Beside it: the API server's own time per webhook, the
// webhook's decision time, CPU per CREATE of each process, the API requests
// per CREATE and the connections the API server used to the webhook
// (BENCHMARKS.md, "CREATE latency with and without the webhooks"). Nothing
// is asserted about the times (the machine is shared); every CREATE must
// succeed, placed exactly when seedwarden's webhooks are registered.
func TestCreateLatencyWebhooks(t *testing.T) {
	st := need(t)
	if os.Getenv(BenchEnv) != "1" {
		t.Skipf("a benchmark of a few minutes: set %s=1 to run it", BenchEnv)
	}
	st.requireWebhook(t, webhookPlace, webhookSeed)
	st.logOnFailure(t)
	ctx := context.Background()
	reg, err := st.saveRegistration(ctx)
	require.NoError(t, err)
	empty, err := startEmptyWebhook(st.certDir)
	require.NoError(t, err)
	defer empty.Close()
	regs := map[hookKind]*webhookRegistration{seedwardenWebhooks: reg}
	regs[emptyWebhooks], err = reg.pointedAt(empty)
	require.NoError(t, err)
	t.Cleanup(func() {
		// Whatever failed, the tests after this one need the webhooks.
		if err := st.setRegistration(context.Background(), reg, true); err != nil {
			t.Errorf("restoring the webhooks: %v", err)
		}
	})
	ports := map[hookKind]int{seedwardenWebhooks: st.ports.webhook, emptyWebhooks: empty.port}
	st.cleanupShoots(t)
	// The first load after setup is slower (the API server opens its
	// connections to the webhook, both processes grow their heaps): not
	// part of any phase.
	warm := benchPhase{seedwardenWebhooks, createBenchPlan[len(createBenchPlan)-1].rate}
	st.sendCreates(t, "e2e-cw-", warm, createBenchFirstWarmup)
	st.finishPhase(t, warm, 0)
	on := seedwardenWebhooks
	var results []phaseResult
	for i, ph := range createBenchPlan {
		if ph.kind != on {
			require.NoError(t, st.setRegistration(ctx, regs[ph.kind], ph.kind == seedwardenWebhooks))
			on = ph.kind
		}
		r := st.runCreatePhase(t, i, ph, ports[ph.kind])
		msg := fmt.Sprintf("phase %d, webhooks %s, %d/s: %d CREATEs, p50 %s, p99 %s, load %s",
			i+1, ph.kind, ph.rate, len(r.call), pct(r.call, .5), pct(r.call, .99), r.load)
		t.Log(msg)
		fmt.Printf("e2e: %s\n", msg)
		results = append(results, r)
	}
	report := createBenchReport(results, st.shootCreateHooks(true))
	t.Log(report)
	fmt.Print(report)
}

// runCreatePhase sends the warm-up and the measured CREATEs of phase i,
// takes the figures around the measured part, then waits for the binds and
// deletes the phase's Shoots.
func (st *suite) runCreatePhase(t *testing.T, i int, ph benchPhase, port int) phaseResult {
	t.Helper()
	ctx := context.Background()
	st.waitSettled(t)
	st.sendCreates(t, fmt.Sprintf("e2e-cw%d-", i), ph, createBenchWarmup)

	r := phaseResult{benchPhase: ph}
	var err error
	r.api[0], err = st.apiserverMetrics(ctx)
	require.NoError(t, err)
	r.own[0], err = scrape(st.metricsURL())
	require.NoError(t, err)
	cpu0 := childCPU()
	cw := watchConns(port)

	r.call, r.sending = st.sendCreates(t, fmt.Sprintf("e2e-cl%d-", i), ph, createBenchDuration)

	r.conns[0], r.conns[1], r.conns[2] = cw.result()
	r.cpu = map[string]time.Duration{}
	for k, v := range childCPU() {
		r.cpu[k] = v - cpu0[k]
	}
	r.load = loadAverage()
	r.api[1], err = st.apiserverMetrics(ctx)
	require.NoError(t, err)
	r.own[1], err = scrape(st.metricsURL())
	require.NoError(t, err)

	st.finishPhase(t, ph, i+1)
	return r
}

// finishPhase waits for the retry controller's binds of the phase (in
// placement mode binding), so the next phase does not share the machine
// with them, and deletes the test's Shoots.
func (st *suite) finishPhase(t *testing.T, ph benchPhase, n int) {
	t.Helper()
	if ph.kind == seedwardenWebhooks && bindingMode() {
		eventually(t, time.Minute, st.allTestShootsBound(t), "the retry controller's binds of phase %d", n)
	}
	require.NoError(t, st.c.DeleteAllOf(context.Background(), &api.Shoot{}, client.InNamespace(projectNamespace),
		client.MatchingLabels{testLabel: labelValue(t.Name())}))
}

// allTestShootsBound says which of t's Shoots have no spec.seedName yet.
func (st *suite) allTestShootsBound(t *testing.T) func() error {
	return func() error {
		var list api.ShootList
		if err := st.c.List(context.Background(), &list, client.InNamespace(projectNamespace),
			client.MatchingLabels{testLabel: labelValue(t.Name())}); err != nil {
			return err
		}
		unbound := 0
		for _, sh := range list.Items {
			if sh.Spec.SeedName == nil || *sh.Spec.SeedName == "" {
				unbound++
			}
		}
		if unbound > 0 {
			return fmt.Errorf("%d of %d Shoots not bound yet", unbound, len(list.Items))
		}
		return nil
	}
}

// sendCreates creates Shoots named prefix+N at ph.rate per second for d, each
// CREATE in its own goroutine so a slow one does not delay the next (an
// open loop, as independent users are). It returns the call durations,
// sorted, and the time from the first send to the last. Every CREATE must
// succeed, announced or placed with seedwarden's webhooks, unplaced else.
func (st *suite) sendCreates(t *testing.T, prefix string, ph benchPhase, d time.Duration) ([]time.Duration, time.Duration) {
	t.Helper()
	var (
		mu    sync.Mutex
		calls []time.Duration
		errs  []string
		wg    sync.WaitGroup
		total = ph.rate * int(d/time.Second)
	)
	tick := time.NewTicker(time.Second / time.Duration(ph.rate))
	defer tick.Stop()
	first := time.Now()
	var last time.Time
	for i := range total {
		if i > 0 {
			<-tick.C
		}
		sh := newShoot(t.Name(), awsShoot("us-east-1", "us-east-1a"), withName(fmt.Sprintf("%s%d", prefix, i)))
		last = time.Now()
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			t0 := time.Now()
			err := st.c.Create(ctx, sh)
			took := time.Since(t0)
			mu.Lock()
			defer mu.Unlock()
			switch placed := admittedSeed(sh) != ""; {
			case err != nil:
				errs = append(errs, fmt.Sprintf("%s: %v", sh.GetName(), err))
			case placed != (ph.kind == seedwardenWebhooks):
				errs = append(errs, fmt.Sprintf("%s: placed=%t with webhooks %s", sh.GetName(), placed, ph.kind))
			default:
				calls = append(calls, took)
			}
		}()
	}
	wg.Wait()
	require.Empty(t, errs, "CREATEs that failed or were placed wrongly (webhooks %s)", ph.kind)
	slices.Sort(calls)
	return calls, last.Sub(first)
}

// pct is the p-quantile (nearest rank) of sorted d, to 10µs: the
// difference sought is below a millisecond, which durations.q rounds away.
func pct(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	return d[min(len(d)-1, int(p*float64(len(d))))].Round(10 * time.Microsecond)
}
