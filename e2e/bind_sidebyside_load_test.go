package e2e

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/config"
	"github.com/seedwarden/seedwarden/internal/metrics"
	"github.com/seedwarden/seedwarden/internal/pending"
)

// The load of a TestBindSideBySide phase: the CREATEs, the watch that sees
// them bound, and the checks of who bound them.

// measure sends the CREATEs of sc as phase, waits until each is bound, and
// checks who bound it.
func (sb *sideBySide) measure(phase string, sc scenario, b binder) phaseFigures {
	t := sb.t
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	bw := sb.watchBinds(ctx, phase, sc.shoots)
	cpu0 := sb.cpu()
	metricsURLs := sb.metricsURLs()
	if b == byGardener {
		metricsURLs = []string{sb.gs.metrics}
	}
	own0, err := scrapeAll(metricsURLs)
	require.NoError(t, err, "the binder's metrics")

	sent := sb.send(ctx, phase, sc, b)
	require.Empty(t, sent.errs, "CREATEs that failed or were not claimed by %s", b)
	require.NoError(t, bw.wait(bindDeadline), "Shoots of phase %s (%s, %s) bound within %s of the last CREATE", phase, sc, b, bindDeadline)

	r := phaseFigures{scenario: sc, binder: b, cpu: map[string]time.Duration{}, load: loadAverage(),
		unannounced: sent.unannounced, calls: sent.calls, seeds: map[string]int{}}
	for k, v := range sb.cpu() {
		r.cpu[k] = v - cpu0[k]
	}
	own1, err := scrapeAll(metricsURLs)
	require.NoError(t, err, "the binder's metrics")
	r.addBinderMetrics(own0, own1)
	bw.mu.Lock()
	first, last := time.Time{}, time.Time{}
	for name, at := range bw.bound {
		s := sent.at[name]
		r.bound = append(r.bound, at.Sub(s))
		r.seeds[bw.seed[name]]++
		if first.IsZero() || s.Before(first) {
			first = s
		}
		if at.After(last) {
			last = at
		}
	}
	rebound := slices.Clone(bw.rebound)
	bw.mu.Unlock()
	r.watchRestarts = bw.restarts()
	require.Empty(t, rebound, "Shoots bound twice")
	slices.Sort(r.bound)
	r.span = last.Sub(first)
	sb.checkBinders(slices.Collect(maps.Keys(sent.at)), b)
	return r
}

// addBinderMetrics takes what the binder's own metrics grew by over the
// phase: API requests by method, reconciles, work-queue waits, and
// seedwarden's webhook requests, placement decisions and reservations
// refused by a limit.
func (r *phaseFigures) addBinderMetrics(before, after []sample) {
	r.requests = map[string]float64{}
	for _, m := range []string{"GET", "PUT", "PATCH", "POST", "DELETE", "LIST", "WATCH"} {
		match := func(l map[string]string) bool { return l["method"] == m }
		if d := counterSum(after, "rest_client_requests_total", match) - counterSum(before, "rest_client_requests_total", match); d > 0 {
			r.requests[m] = d
		}
	}
	r.reconcile = histDelta(before, after, "controller_runtime_reconcile_time_seconds", nil)
	r.queueWait = histDelta(before, after, "workqueue_queue_duration_seconds", nil)
	r.webhooks = map[string]histogram{}
	for _, smp := range after {
		if path := smp.labels["webhook"]; smp.name == webhookLatency+"_count" && path != "" {
			r.webhooks[path] = histDelta(before, after, webhookLatency, func(l map[string]string) bool { return l["webhook"] == path })
		}
	}
	if r.binder == bySeedwarden {
		d := histDelta(before, after, metrics.DurationName, nil)
		r.decisions, r.decideTime = d.count, d.sum
		r.refused = map[string]float64{}
		for _, reason := range []string{"namespace", "user", "total"} {
			match := func(l map[string]string) bool { return l["reason"] == reason }
			if n := counterSum(after, metrics.ReservationsRefusedName, match) - counterSum(before, metrics.ReservationsRefusedName, match); n > 0 {
				r.refused[reason] = n
			}
		}
	}
}

// sendResult is what send saw of the CREATEs.
type sendResult struct {
	at          map[string]time.Time // Shoot -> its CREATE sent
	calls       []time.Duration      // sorted
	errs        []string
	unannounced int
}

// send creates sc.shoots Shoots, the shape's users in turn: at sc.rate per
// second, each CREATE in its own goroutine (an open loop), or all at once
// with burstInFlight in flight. Each must be claimed by b: schedulerName
// seedwarden or default-scheduler.
func (sb *sideBySide) send(ctx context.Context, phase string, sc scenario, b binder) sendResult {
	want := "default-scheduler"
	if b == bySeedwarden {
		want = config.DefaultSchedulerName
	}
	out := sendResult{at: map[string]time.Time{}}
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		tick *time.Ticker
		sem  = make(chan struct{}, burstInFlight)
	)
	if sc.sustained() {
		tick = time.NewTicker(time.Second / time.Duration(sc.rate))
		defer tick.Stop()
	}
	for i := range sc.shoots {
		if tick == nil {
			sem <- struct{}{}
		} else if i > 0 {
			<-tick.C
		}
		name := fmt.Sprintf("sbs%s-%d", phase, i)
		sh := newShoot(sb.t.Name(), awsShoot("us-east-1", "us-east-1a"), withName(name), withLabel(phaseLabel, phase))
		wg.Add(1)
		go func() {
			defer wg.Done()
			if tick == nil {
				defer func() { <-sem }()
			}
			cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			t0 := time.Now()
			err := sb.users[i%len(sb.users)].Create(cctx, sh)
			took := time.Since(t0)
			mu.Lock()
			defer mu.Unlock()
			out.at[name] = t0
			switch got := specSchedulerName(sh); {
			case err != nil:
				out.errs = append(out.errs, fmt.Sprintf("%s: %v", name, err))
			case got != want:
				out.errs = append(out.errs, fmt.Sprintf("%s: schedulerName %q, want %q", name, got, want))
			default:
				out.calls = append(out.calls, took)
				if b == bySeedwarden && admittedSeed(sh) == "" {
					out.unannounced++
				}
			}
		}()
	}
	wg.Wait()
	slices.Sort(out.calls)
	return out
}

// bindWatch records, from one watch, when each Shoot of a phase was first
// seen with spec.seedName, and any that changed it after.
type bindWatch struct {
	mu      sync.Mutex
	want    int
	bound   map[string]time.Time
	seed    map[string]string
	rebound []string
	all     chan struct{} // closed once want Shoots are bound
	ended   chan struct{} // closed when the watch ends
	ending  string        // the watch's last error event
	opened  int           // watches opened
}

func (sb *sideBySide) watchBinds(ctx context.Context, phase string, want int) *bindWatch {
	t, st := sb.t, sb.st
	t.Helper()
	wc, err := client.NewWithWatch(st.admin, client.Options{Scheme: st.scheme})
	require.NoError(t, err)
	sel := []client.ListOption{client.InNamespace(projectNamespace),
		client.MatchingLabels{testLabel: labelValue(t.Name()), phaseLabel: phase}}
	bw := &bindWatch{want: want, bound: map[string]time.Time{}, seed: map[string]string{},
		all: make(chan struct{}), ended: make(chan struct{})}
	w, err := bw.open(ctx, wc, sel)
	require.NoError(t, err)
	go func() {
		defer close(bw.ended)
		for {
			bw.follow(w)
			if ctx.Err() != nil {
				return
			}
			// The API server closed the watch (it may, under a burst): a
			// new one from a list, which sees what the gap bound a little
			// late; the report counts the restarts.
			if w, err = bw.open(ctx, wc, sel); err != nil {
				bw.mu.Lock()
				bw.ending = fmt.Sprintf("watch not reopened: %v", err)
				bw.mu.Unlock()
				return
			}
		}
	}()
	return bw
}

// open lists the phase's Shoots (noting the bound ones; none on the first
// call, before any CREATE) and watches from the list's resourceVersion.
func (bw *bindWatch) open(ctx context.Context, wc client.WithWatch, sel []client.ListOption) (watch.Interface, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(shootGVK.GroupVersion().WithKind("ShootList"))
	if err := wc.List(ctx, list, sel...); err != nil {
		return nil, err
	}
	bw.mu.Lock()
	bw.opened++
	bw.mu.Unlock()
	for i := range list.Items {
		if seed := seedName(&list.Items[i]); seed != "" {
			bw.saw(list.Items[i].GetName(), seed, time.Now())
		}
	}
	raw := &metav1.ListOptions{ResourceVersion: list.GetResourceVersion()}
	return wc.Watch(ctx, list, append(slices.Clone(sel), &client.ListOptions{Raw: raw})...)
}

// follow records the binds w shows until it ends.
func (bw *bindWatch) follow(w watch.Interface) {
	defer w.Stop()
	for ev := range w.ResultChan() {
		if ev.Type == watch.Error {
			bw.mu.Lock()
			bw.ending = fmt.Sprintf("watch error: %v", apierrors.FromObject(ev.Object))
			bw.mu.Unlock()
			return
		}
		u, ok := ev.Object.(*unstructured.Unstructured)
		if !ok || (ev.Type != watch.Added && ev.Type != watch.Modified) {
			continue
		}
		if seed := seedName(u); seed != "" {
			bw.saw(u.GetName(), seed, time.Now())
		}
	}
}

// restarts is how often the watch was reopened.
func (bw *bindWatch) restarts() int {
	bw.mu.Lock()
	defer bw.mu.Unlock()
	return bw.opened - 1
}

func (bw *bindWatch) saw(name, seed string, at time.Time) {
	bw.mu.Lock()
	defer bw.mu.Unlock()
	if prev, ok := bw.seed[name]; ok {
		if prev != seed {
			bw.rebound = append(bw.rebound, fmt.Sprintf("%s: %s, then %s", name, prev, seed))
		}
		return
	}
	bw.bound[name], bw.seed[name] = at, seed
	if len(bw.bound) == bw.want {
		close(bw.all)
	}
}

// wait returns once every Shoot is bound, or an error after timeout or when
// the watch ends first.
func (bw *bindWatch) wait(timeout time.Duration) error {
	why := fmt.Sprintf("not within %s", timeout)
	select {
	case <-bw.all:
		return nil
	case <-bw.ended:
		why = "the watch ended and was not reopened"
	case <-time.After(timeout):
	}
	bw.mu.Lock()
	defer bw.mu.Unlock()
	if bw.ending != "" {
		why += "; " + bw.ending
	}
	return fmt.Errorf("%d of %d Shoots bound (%s)", len(bw.bound), bw.want, why)
}

// checkBinders checks the SchedulingSuccessful events of the phase's Shoots:
// each names b as reporter, none has two, and a sample (every tenth) has
// its event (recorded after the bind, asynchronously).
func (sb *sideBySide) checkBinders(names []string, b binder) {
	t, st := sb.t, sb.st
	t.Helper()
	slices.Sort(names)
	in := map[string]bool{}
	for _, n := range names {
		in[n] = true
	}
	var by map[string][]string
	err := poll(context.Background(), 30*time.Second, 200*time.Millisecond, func() error {
		var list eventsv1.EventList
		if err := st.c.List(context.Background(), &list, client.InNamespace(projectNamespace)); err != nil {
			return err
		}
		by = map[string][]string{}
		for _, e := range list.Items {
			if e.Regarding.Kind == "Shoot" && e.Reason == pending.ReasonSchedulingSuccessful && in[e.Regarding.Name] {
				by[e.Regarding.Name] = append(by[e.Regarding.Name], reporter(e))
			}
		}
		for i := 0; i < len(names); i += 10 {
			if len(by[names[i]]) == 0 {
				return fmt.Errorf("no SchedulingSuccessful event for %s yet", names[i])
			}
		}
		return nil
	})
	require.NoError(t, err)
	for name, rs := range by {
		assert.Len(t, rs, 1, "SchedulingSuccessful events of %s: %v", name, rs)
		assert.Equal(t, b == bySeedwarden, rs[0] == pending.EventRecorderName, "%s bound by %s, want %s", name, rs[0], b)
	}
}

// webhookLatency is controller-runtime's histogram of a webhook server's
// time per request, by path (seedwarden serves its webhooks through it).
const webhookLatency = "controller_runtime_webhook_latency_seconds"

// histogram is a histogram's growth between two scrapes.
type histogram struct {
	count float64
	sum   time.Duration
}

func (h histogram) mean() time.Duration {
	if h.count == 0 {
		return 0
	}
	return time.Duration(float64(h.sum) / h.count)
}

// histDelta is how much histogram name (its samples that match) grew from
// a to b.
func histDelta(a, b []sample, name string, match func(map[string]string) bool) histogram {
	sum := counterSum(b, name+"_sum", match) - counterSum(a, name+"_sum", match)
	return histogram{
		count: counterSum(b, name+"_count", match) - counterSum(a, name+"_count", match),
		sum:   time.Duration(sum * float64(time.Second)),
	}
}
