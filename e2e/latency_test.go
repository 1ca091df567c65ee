package e2e

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/metrics"
)

// TestCreateToBoundLatency (placement mode binding): Shoots are created at a
// steady rate for latencyDuration, and for each the time from sending the
// CREATE to seeing spec.seedName set in a watch is measured: admission
// (decide, reserve, announce), then the retry controller's bind (a watch
// event, one reconcile, a patch). The figures go to BENCHMARKS.md ("CREATE →
// bound latency"). Every Shoot must be bound; only at latencyAssertedRate
// is the p99 checked, against a generous sanity bound, as the machine is
// shared.
func TestCreateToBoundLatency(t *testing.T) {
	st := need(t)
	if !bindingMode() {
		t.Skipf("placement mode %q: spec.seedName is in the CREATE response, there is no bind to wait for", placementMode)
	}
	st.requireWebhook(t, webhookPlace)
	for _, rate := range []int{20, 50} {
		t.Run(fmt.Sprintf("%d_per_s", rate), func(t *testing.T) {
			st.logOnFailure(t)
			st.cleanupShoots(t)
			st.waitSettled(t)
			r := st.measureCreateToBound(t, rate, latencyDuration)
			msg := fmt.Sprintf("create→bound at %d creates/s (%d Shoots in %s, %.1f/s sent): p50 %s, p90 %s, p99 %s, max %s; CREATE call p50 %s, p99 %s",
				rate, r.n, r.sending.Round(time.Millisecond), float64(r.n)/r.sending.Seconds(),
				r.bound.q(.5), r.bound.q(.9), r.bound.q(.99), r.bound.max(), r.call.q(.5), r.call.q(.99))
			t.Log(msg)
			fmt.Printf("e2e: %s\n", msg)
			if rate <= latencyAssertedRate {
				assert.Less(t, r.bound.q(.99), latencySanityBound, "p99 create→bound at %d/s", rate)
			}
		})
	}
}

// latencyAssertedRate is the highest rate whose p99 is asserted: beyond it
// the retry controller can fall behind on a loaded 2-core machine (50/s:
// p99 from 1 s to 9 s between runs), and the queue, not seedwarden, sets
// the figure.
const latencyAssertedRate = 20

// latencyDuration is how long each rate of TestCreateToBoundLatency sends.
const latencyDuration = 10 * time.Second

// latencySanityBound is far above what the bind takes (milliseconds): only
// a controller that stalls or retries on a backoff fails it.
const latencySanityBound = 5 * time.Second

type durations []time.Duration

// q is the p-quantile (nearest rank) of sorted d.
func (d durations) q(p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	return d[min(len(d)-1, int(p*float64(len(d))))].Round(time.Millisecond)
}

func (d durations) max() time.Duration {
	if len(d) == 0 {
		return 0
	}
	return d[len(d)-1].Round(time.Millisecond)
}

type latencyResult struct {
	n       int
	sending time.Duration // from the first CREATE sent to the last
	bound   durations     // CREATE sent -> spec.seedName seen in the watch, sorted
	call    durations     // CREATE sent -> response, sorted
}

// measureCreateToBound creates Shoots (us-east-1: aws-us1, no capacity
// limit) at rate per second for d, each CREATE in its own goroutine so a
// slow one does not delay the next, and watches them until every one is
// bound.
func (st *suite) measureCreateToBound(t *testing.T, rate int, d time.Duration) latencyResult {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wc, err := client.NewWithWatch(st.admin, client.Options{Scheme: st.scheme})
	require.NoError(t, err)
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(shootGVK.GroupVersion().WithKind("ShootList"))
	w, err := wc.Watch(ctx, list, client.InNamespace(projectNamespace), client.MatchingLabels{testLabel: labelValue(t.Name())})
	require.NoError(t, err)
	defer w.Stop()

	var (
		mu      sync.Mutex
		sent    = map[string]time.Time{}
		call    durations
		bound   = map[string]time.Time{}
		errs    []string
		wg      sync.WaitGroup
		total   = rate * int(d/time.Second)
		prefix  = fmt.Sprintf("e2e-lat%d-", rate)
		watched = make(chan struct{})
	)
	go func() {
		defer close(watched)
		for ev := range w.ResultChan() {
			if ev.Type != watch.Added && ev.Type != watch.Modified {
				continue
			}
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok || seedName(u) == "" {
				continue
			}
			now := time.Now()
			mu.Lock()
			if _, seen := bound[u.GetName()]; !seen {
				bound[u.GetName()] = now
			}
			done := len(bound) == total
			mu.Unlock()
			if done {
				return
			}
		}
	}()

	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	first := time.Now()
	var last time.Time
	for i := range total {
		if i > 0 {
			<-tick.C
		}
		name := fmt.Sprintf("%s%d", prefix, i)
		sh := newShoot(t.Name(), awsShoot("us-east-1", "us-east-1a"), withName(name))
		last = time.Now()
		mu.Lock()
		sent[name] = last
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, ccancel := context.WithTimeout(ctx, 15*time.Second)
			defer ccancel()
			t0 := time.Now()
			err := st.c.Create(cctx, sh)
			took := time.Since(t0)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				errs = append(errs, fmt.Sprintf("%s: %v", name, err))
			case admittedSeed(sh) == "":
				errs = append(errs, fmt.Sprintf("%s: admitted without a seed", name))
			default:
				call = append(call, took)
			}
		}()
	}
	sending := last.Sub(first)
	wg.Wait()
	mu.Lock()
	failed := slices.Clone(errs)
	mu.Unlock()
	require.Empty(t, failed, "CREATEs that failed or were not placed")

	select {
	case <-watched:
	case <-time.After(30 * time.Second):
	}
	mu.Lock()
	r := latencyResult{n: total, sending: sending, call: call}
	for name, at := range bound {
		r.bound = append(r.bound, at.Sub(sent[name]))
	}
	mu.Unlock()
	require.Len(t, r.bound, total, "Shoots bound within 30s of the last CREATE")
	slices.Sort(r.bound)
	slices.Sort(r.call)
	return r
}

// TestAdmissionLatency records what the API server measured for our
// webhooks (apiserver_admission_webhook_admission_duration_seconds), and the
// webhook's own decision time. It only logs: a summary of the tests that
// ran before it.
func TestAdmissionLatency(t *testing.T) {
	st := need(t)
	ctx := context.Background()
	samples, err := st.apiserverMetrics(ctx)
	require.NoError(t, err)

	type key struct{ name, typ, op, rejected string }
	sums, counts := map[key]float64{}, map[key]float64{}
	for _, smp := range samples {
		if _, ok := st.registered[smp.labels["name"]]; !ok {
			continue
		}
		k := key{smp.labels["name"], smp.labels["type"], smp.labels["operation"], smp.labels["rejected"]}
		switch smp.name {
		case "apiserver_admission_webhook_admission_duration_seconds_sum":
			sums[k] += smp.value
		case "apiserver_admission_webhook_admission_duration_seconds_count":
			counts[k] += smp.value
		}
	}
	require.NotEmpty(t, counts, "no apiserver_admission_webhook_admission_duration_seconds for our webhooks")
	keys := make([]key, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		return fmt.Sprint(a) < fmt.Sprint(b)
	})
	var b strings.Builder
	fmt.Fprintf(&b, "apiserver_admission_webhook_admission_duration_seconds (as the API server measured it):\n")
	fmt.Fprintf(&b, "  %-32s %-10s %-9s %-8s %7s %10s %12s\n", "webhook", "type", "operation", "rejected", "count", "sum (s)", "mean")
	for _, k := range keys {
		n := counts[k]
		mean := time.Duration(sums[k] / n * float64(time.Second))
		fmt.Fprintf(&b, "  %-32s %-10s %-9s %-8s %7.0f %10.3f %12s\n", k.name, k.typ, k.op, k.rejected, n, sums[k], mean.Round(time.Microsecond))
	}
	if own, err := scrape(st.metricsURL()); err == nil {
		sum := counterSum(own, metrics.DurationName+"_sum", nil)
		n := counterSum(own, metrics.DurationName+"_count", nil)
		if n > 0 {
			fmt.Fprintf(&b, "%s (the webhook's own decision time, since its last start): %0.f decisions, mean %s\n",
				metrics.DurationName, n, time.Duration(sum/n*float64(time.Second)).Round(time.Microsecond))
		}
	}
	t.Log(b.String())
	fmt.Print(b.String())
}
