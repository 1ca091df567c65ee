package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/metrics"
)

// What TestBindSideBySide does between and around its loads: switching the
// binder, filling the garden, deleting Shoots, CPU per process.

// sideBySide is the state of TestBindSideBySide.
type sideBySide struct {
	st  *suite
	t   *testing.T
	dev client.Client // the project member who creates the Shoots
	// users create the Shoots in turn (the shape's users=N): the first N
	// of userPool, dev first.
	users, userPool []client.Client
	shape           benchShape
	// replicas are the seedwarden processes besides the suite's, started
	// for a shape with 3 replicas behind lb (nil until then).
	replicas *benchReplicas
	// reg is the suite's registration, restored at the end; shipped is
	// what the phases register: the base's webhooks, without the opt-in
	// resource-size component (the shipped configuration sets no size
	// limit).
	reg, shipped *webhookRegistration
	current      *webhookRegistration // what the last seedwarden phase registered
	active       binder
	gs           *gardenerScheduler // running while active is byGardener
}

// activate makes b the binder: for gardener-scheduler seedwarden's webhook
// configurations are removed (Shoots keep schedulerName default-scheduler)
// and its process stopped (no informer of it loads the API servers); for
// seedwarden gardener-scheduler is stopped, seedwarden started, its cache
// synced (ready, placing a dry run) and its retry controller leading.
func (sb *sideBySide) activate(b binder) {
	t, st := sb.t, sb.st
	t.Helper()
	if b == sb.active {
		return
	}
	ctx := context.Background()
	began := time.Now()
	switch b {
	case byGardener:
		require.NoError(t, st.setRegistration(ctx, nil, false))
		require.NoError(t, sb.stopSeedwarden())
		sb.gs = st.startGardenerScheduler(t, sideBySideSyncs)
	case bySeedwarden:
		sb.gs.stop(t)
		sb.gs = nil
		reg := sb.shipped
		if sb.shape.replicas > 1 {
			reg = sb.startReplicas()
		}
		require.NoError(t, sb.startSeedwarden(ctx, reg))
		sb.current = reg
	}
	sb.active = b
	t.Logf("%s binds from now on (switched in %s)", b, time.Since(began).Round(time.Millisecond))
}

// stopSeedwarden stops the suite's webhook process and the extra replicas.
func (sb *sideBySide) stopSeedwarden() error {
	procs := []*webhookProcess{sb.st.process()}
	if sb.replicas != nil {
		procs = append(procs, sb.replicas.procs()...)
	}
	for _, p := range procs {
		if p == nil || p.Exited() {
			continue
		}
		code, _, err := p.Stop(20 * time.Second)
		if err != nil {
			return err
		}
		if code != 0 {
			return fmt.Errorf("seedwarden exited with %d on SIGTERM", code)
		}
	}
	return nil
}

// metricsURLs are the metrics of every running seedwarden process.
func (sb *sideBySide) metricsURLs() []string {
	urls := []string{sb.st.metricsURL()}
	if sb.replicas != nil && sb.replicas.running() {
		urls = append(urls, sb.replicas.metricsURLs()...)
	}
	return urls
}

// scrapeAll is the samples of every url, one after another: counterSum and
// histDelta then sum over the processes.
func scrapeAll(urls []string) ([]sample, error) {
	var out []sample
	for _, u := range urls {
		s, err := scrape(u)
		if err != nil {
			return nil, err
		}
		out = append(out, s...)
	}
	return out, nil
}

// startSeedwarden starts the webhook process unless it runs, registers reg
// and waits until its retry controller leads.
func (sb *sideBySide) startSeedwarden(ctx context.Context, reg *webhookRegistration) error {
	st := sb.st
	if p := st.process(); p == nil || p.Exited() {
		if err := st.startWebhook(); err != nil {
			return err
		}
		if err := st.waitReady(ctx, time.Minute); err != nil {
			return err
		}
	}
	if err := st.setRegistration(ctx, reg, true); err != nil {
		return err
	}
	return poll(ctx, time.Minute, 100*time.Millisecond, func() error {
		samples, err := scrapeAll(sb.metricsURLs())
		if err != nil {
			return err
		}
		if n := counterSum(samples, metrics.RetryControllerLeaderName, nil); n != 1 {
			return fmt.Errorf("seedwarden's retry controller leads in %v processes, want 1", n)
		}
		return nil
	})
}

// restore leaves the suite as the next test expects it: gardener-scheduler
// stopped, the test's Shoots gone, seedwarden running and registered, its
// cache agreeing with the API server.
func (sb *sideBySide) restore() {
	t, st := sb.t, sb.st
	if sb.gs != nil {
		sb.gs.stop(t)
	}
	ctx := context.Background()
	began := time.Now()
	if err := sb.deleteLabelled(ctx, client.MatchingLabels{testLabel: labelValue(t.Name())}, 5*time.Minute); err != nil {
		t.Errorf("deleting the test's Shoots: %v", err)
	}
	t.Logf("the test's Shoots deleted in %s", time.Since(began).Round(time.Millisecond))
	if sb.replicas != nil {
		if err := sb.replicas.stop(); err != nil {
			t.Errorf("stopping the extra replicas: %v", err)
		}
	}
	if err := sb.startSeedwarden(ctx, sb.reg); err != nil {
		t.Errorf("seedwarden back for the next tests: %v", err)
		return
	}
	st.waitSettled(t)
}

// fill has the admin create n Shoots bound to seeds (spec.seedName set at
// CREATE), with seedwarden's webhooks not registered, spread over the
// landscape's untainted seeds in turn: a seed with a capacity limit takes
// at most half its free places.
func (sb *sideBySide) fill(n int) {
	t, st := sb.t, sb.st
	t.Helper()
	ctx := context.Background()
	if sb.active == bySeedwarden {
		require.NoError(t, st.setRegistration(ctx, nil, false))
	}
	targets := sb.fillTargets(ctx, n)
	began := time.Now()
	err := parallel(ctx, n, 32, func(ctx context.Context, i int) error {
		sd := targets[i]
		sh := newShoot(t.Name(), providerShoot(sd.provider, machineTypes[sd.provider], sd.region, sd.zone),
			withName(fmt.Sprintf("sbs-fill-%d", i)), withSeed(sd.name), withLabel(phaseLabel, "fill"))
		return st.c.Create(ctx, sh)
	})
	require.NoError(t, err, "filling the garden")
	per := map[string]int{}
	for _, sd := range targets {
		per[sd.name]++
	}
	t.Logf("garden filled with %d Shoots in %s: %v", n, time.Since(began).Round(time.Millisecond), per)
	if sb.active == bySeedwarden {
		require.NoError(t, st.setRegistration(ctx, sb.current, true))
		st.waitSettled(t)
	}
}

// fillSeed is where a filled Shoot goes.
type fillSeed struct{ name, provider, region, zone string }

// fillTargets is the seed of each of n Shoots.
func (sb *sideBySide) fillTargets(ctx context.Context, n int) []fillSeed {
	t, st := sb.t, sb.st
	var seeds unstructured.UnstructuredList
	seeds.SetGroupVersionKind(seedGVK.GroupVersion().WithKind("SeedList"))
	require.NoError(t, st.c.List(ctx, &seeds))
	usage, err := st.expectedUsage(ctx)
	require.NoError(t, err)
	// Round robin over the seeds with room, so each takes an even share:
	// one with a limit up to half its free places, one without any number.
	type candidate struct {
		seed  fillSeed
		quota int // -1: no limit
	}
	var cands []candidate
	for _, sd := range seeds.Items {
		taints, _, _ := unstructured.NestedSlice(sd.Object, "spec", "taints")
		zones, _, _ := unstructured.NestedStringSlice(sd.Object, "spec", "provider", "zones")
		if len(taints) > 0 || len(zones) == 0 {
			continue
		}
		provider, _, _ := unstructured.NestedString(sd.Object, "spec", "provider", "type")
		region, _, _ := unstructured.NestedString(sd.Object, "spec", "provider", "region")
		c := candidate{seed: fillSeed{sd.GetName(), provider, region, zones[0]}, quota: -1}
		if alloc, ok, _ := unstructured.NestedString(sd.Object, "status", "allocatable", "shoots"); ok {
			a, err := strconv.Atoi(alloc)
			require.NoError(t, err, "allocatable shoots of seed %s", sd.GetName())
			c.quota = max(0, (a-int(usage[sd.GetName()]))/2)
		}
		cands = append(cands, c)
	}
	var out []fillSeed
	for len(out) < n {
		placed := false
		for i := range cands {
			if len(out) == n || cands[i].quota == 0 {
				continue
			}
			out = append(out, cands[i].seed)
			if cands[i].quota > 0 {
				cands[i].quota--
			}
			placed = true
		}
		require.True(t, placed, "the untainted seeds take %d of the %d Shoots at half their free places", len(out), n)
	}
	return out
}

// deletePhases deletes the Shoots of the phases and waits until they are gone.
func (sb *sideBySide) deletePhases(phases ...string) error {
	sel, err := labels.Parse(fmt.Sprintf("%s=%s,%s in (%s)", testLabel, labelValue(sb.t.Name()), phaseLabel, strings.Join(phases, ",")))
	if err != nil {
		return err
	}
	return sb.deleteLabelled(context.Background(), client.MatchingLabelsSelector{Selector: sel}, time.Minute)
}

// deleteLabelled deletes the project's Shoots sel selects, 32 at a time,
// and waits until they are gone.
func (sb *sideBySide) deleteLabelled(ctx context.Context, sel client.ListOption, timeout time.Duration) error {
	st := sb.st
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var list api.ShootList
	if err := st.c.List(ctx, &list, client.InNamespace(projectNamespace), sel); err != nil {
		return err
	}
	if err := parallel(ctx, len(list.Items), 32, func(ctx context.Context, i int) error {
		return st.deleteShoot(ctx, &list.Items[i])
	}); err != nil {
		return err
	}
	return poll(ctx, timeout, 200*time.Millisecond, func() error {
		var left api.ShootList
		if err := st.c.List(ctx, &left, client.InNamespace(projectNamespace), sel); err != nil {
			return err
		}
		if len(left.Items) > 0 {
			return fmt.Errorf("%d Shoots left", len(left.Items))
		}
		return nil
	})
}

// parallel runs f(0..n-1) on workers goroutines; the first error stops it.
func parallel(ctx context.Context, n, workers int, f func(context.Context, int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := f(ctx, i); err != nil {
					cancel(err)
				}
			}
		}()
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	return context.Cause(ctx)
}

// Components whose CPU a phase records.
const (
	compGardenerAPIServer = "gardener-apiserver"
	compKubeAPIServer     = "kube-apiserver"
	compEtcd              = "etcd"
	compGardenerScheduler = "gardener-scheduler"
	compSeedwarden        = "seedwarden"
)

var components = []string{compGardenerAPIServer, compKubeAPIServer, compEtcd, compGardenerScheduler, compSeedwarden}

// cpu is the CPU time (utime+stime) of each running component: the garden
// process (gardener-apiserver runs in it), its children kube-apiserver and
// etcd, gardener-scheduler and seedwarden.
func (sb *sideBySide) cpu() map[string]time.Duration {
	out := map[string]time.Duration{}
	add := func(name string, pid int) {
		if _, _, c, err := procStat(pid); err == nil {
			out[name] += c
		}
	}
	g := sb.st.garden
	add(compGardenerAPIServer, g.proc.Pid())
	for _, pid := range g.children {
		if comm, _, c, err := procStat(pid); err == nil && (comm == compKubeAPIServer || comm == compEtcd) {
			out[comm] += c
		}
	}
	if sb.gs != nil {
		add(compGardenerScheduler, sb.gs.proc.Pid())
	}
	procs := []*webhookProcess{sb.st.process()}
	if sb.replicas != nil {
		procs = append(procs, sb.replicas.procs()...)
	}
	for _, p := range procs {
		if p != nil && !p.Exited() {
			add(compSeedwarden, p.Pid())
		}
	}
	return out
}

func formatCPU(cpu map[string]time.Duration) string {
	var parts []string
	for _, c := range components {
		if v, ok := cpu[c]; ok {
			parts = append(parts, fmt.Sprintf("%s %.2fs", c, v.Seconds()))
		}
	}
	return strings.Join(parts, ", ")
}

// withLabel sets a label.
func withLabel(k, v string) shootOpt {
	return func(u *unstructured.Unstructured) {
		l := u.GetLabels()
		if l == nil {
			l = map[string]string{}
		}
		l[k] = v
		u.SetLabels(l)
	}
}
