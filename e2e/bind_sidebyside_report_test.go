package e2e

import (
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"time"
)

// The markdown report of TestBindSideBySide: figures pooled per scenario
// and binder (the median of the rounds), the acceptance ratios of the
// bind-speed goal, and every phase.

// reportContext is what the report says about the run.
type reportContext struct {
	quick   bool
	fill    int
	started time.Time
	took    time.Duration
	shapes  string // BenchShapesEnv as set
}

// pooledFigures are a scenario's phases of one binder, pooled.
type pooledFigures struct {
	phases              int
	p50, p99            time.Duration
	bindsPerSecond      float64
	apiCPU, schedCPU    time.Duration // per placed Shoot
	etcdCPU             time.Duration // per placed Shoot
	requests            float64       // seedwarden's API requests per placed Shoot
	createP50           time.Duration
	unannounced, shoots int
	placed              int // Shoots of every round
}

func pool(rs []phaseFigures, sc scenario, b binder) pooledFigures {
	var p50, p99, bps, api, sched, etcd, req, call []float64
	out := pooledFigures{}
	for _, r := range rs {
		if r.scenario != sc || r.binder != b || len(r.bound) == 0 {
			continue
		}
		n := time.Duration(len(r.bound))
		out.phases++
		out.shoots = len(r.bound)
		out.placed += len(r.bound)
		out.unannounced += r.unannounced
		p50 = append(p50, pct(r.bound, .5).Seconds())
		p99 = append(p99, pct(r.bound, .99).Seconds())
		call = append(call, pct(r.calls, .5).Seconds())
		bps = append(bps, r.bindsPerSecond())
		api = append(api, r.apiCPUPerShoot().Seconds())
		own := compGardenerScheduler
		if b == bySeedwarden {
			own = compSeedwarden
		}
		sched = append(sched, (r.cpu[own] / n).Seconds())
		etcd = append(etcd, (r.cpu[compEtcd] / n).Seconds())
		var sum float64
		for _, v := range r.requests {
			sum += v
		}
		req = append(req, sum/float64(n))
	}
	sec := func(v []float64) time.Duration { return time.Duration(median(v) * float64(time.Second)) }
	out.p50, out.p99, out.createP50 = sec(p50), sec(p99), sec(call)
	out.bindsPerSecond = median(bps)
	out.apiCPU, out.schedCPU, out.etcdCPU = sec(api), sec(sched), sec(etcd)
	out.requests = median(req)
	return out
}

// median of v (the mean of the middle two for an even count); 0 for none.
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(v))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// scenariosOf lists the scenarios of rs in the order run.
func scenariosOf(rs []phaseFigures) []scenario {
	var out []scenario
	for _, r := range rs {
		if !slices.Contains(out, r.scenario) {
			out = append(out, r.scenario)
		}
	}
	return out
}

func sideBySideReport(rs []phaseFigures, rc reportContext) string {
	var b strings.Builder
	shapes := rc.shapes
	if shapes == "" {
		shapes = "unset, " + defaultBenchShapes
	}
	fmt.Fprintf(&b, "Run %s, %s, %d CPUs (GOMAXPROCS %d), load at the end %s; %s=%q; garden filled with %d Shoots for the full scenarios",
		rc.started.UTC().Format("2006-01-02 15:04 MST"), rc.took.Round(time.Second), runtime.NumCPU(), runtime.GOMAXPROCS(0), loadAverage(), BenchShapesEnv, shapes, rc.fill)
	if rc.quick {
		fmt.Fprintf(&b, "; QUICK run (%s=1): not comparable figures", BenchQuickEnv)
	}
	b.WriteString(".\n\n")
	b.WriteString(shapesTable(rs))
	b.WriteString("\n")
	b.WriteString(pooledTable(rs))
	b.WriteString("\n")
	b.WriteString(acceptanceTable(rs))
	b.WriteString("\n")
	b.WriteString(phaseTable(rs))
	return b.String()
}

func ms(d time.Duration) string {
	switch {
	case d >= 10*time.Second:
		return fmt.Sprintf("%.1f s", d.Seconds())
	case d >= time.Second:
		return fmt.Sprintf("%.2f s", d.Seconds())
	default:
		return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond))
	}
}

func cpuMS(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d)/float64(time.Millisecond)) }

func pooledTable(rs []phaseFigures) string {
	var b strings.Builder
	b.WriteString("Pooled per scenario (median of the rounds); CPU in ms per placed Shoot; API servers = gardener-apiserver + kube-apiserver; own = the binder's process.\n\n")
	b.WriteString("| scenario | binder | rounds | Shoots | bound p50 | bound p99 | binds/s | kept up (p99 < 1 s) | CREATE p50 | CPU API servers | CPU etcd | CPU own | own API requests/Shoot | unannounced (all rounds) |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, sc := range scenariosOf(rs) {
		for _, bd := range []binder{byGardener, bySeedwarden} {
			p := pool(rs, sc, bd)
			kept := "—"
			if sc.sustained() {
				kept = yesNo(p.p99 < keptUpBound)
			}
			fmt.Fprintf(&b, "| %s | %s | %d | %d | %s | %s | %.1f | %s | %s | %s | %s | %s | %.2f | %d |\n",
				sc.label(), bd, p.phases, p.shoots, ms(p.p50), ms(p.p99), p.bindsPerSecond, kept, ms(p.createP50),
				cpuMS(p.apiCPU), cpuMS(p.etcdCPU), cpuMS(p.schedCPU), p.requests, p.unannounced)
		}
	}
	return b.String()
}

func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "no"
}

func phaseTable(rs []phaseFigures) string {
	var b strings.Builder
	b.WriteString("Every phase (CPU in s over the phase, from the first CREATE to the last bind seen; requests: the binder's own API requests by method, per placed Shoot):\n\n")
	b.WriteString("| # | scenario | binder | round | p50 | p99 | binds/s | CREATE p50 | gardener-apiserver | kube-apiserver | etcd | gardener-scheduler | seedwarden | requests/Shoot | queue wait mean | reconcile mean (count) | webhook calls/Shoot (mean) | decision mean | unannounced (reservations refused) | load |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rs {
		n := float64(len(r.bound))
		var req []string
		for _, m := range slices.Sorted(maps.Keys(r.requests)) {
			req = append(req, fmt.Sprintf("%s %.2f", m, r.requests[m]/n))
		}
		decide := "—"
		if r.decisions > 0 {
			decide = short(r.decideTime / time.Duration(r.decisions))
		}
		cpu := func(c string) string {
			if v, ok := r.cpu[c]; ok {
				return fmt.Sprintf("%.2f", v.Seconds())
			}
			return "—"
		}
		var hooks []string
		for _, path := range slices.Sorted(maps.Keys(r.webhooks)) {
			if h := r.webhooks[path]; h.count > 0 {
				hooks = append(hooks, fmt.Sprintf("%s %.2f (%s)", path, h.count/n, short(h.mean())))
			}
		}
		unannounced := "—"
		if r.binder == bySeedwarden {
			var why []string
			for _, reason := range slices.Sorted(maps.Keys(r.refused)) {
				why = append(why, fmt.Sprintf("%s %.0f", reason, r.refused[reason]))
			}
			unannounced = fmt.Sprintf("%d (%s)", r.unannounced, orDash(strings.Join(why, ", ")))
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %d | %s | %s | %.1f | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			r.n, r.label(), r.binder, r.round, ms(pct(r.bound, .5)), ms(pct(r.bound, .99)), r.bindsPerSecond(), ms(pct(r.calls, .5)),
			cpu(compGardenerAPIServer), cpu(compKubeAPIServer), cpu(compEtcd), cpu(compGardenerScheduler), cpu(compSeedwarden),
			orDash(strings.Join(req, ", ")), short(r.queueWait.mean()), fmt.Sprintf("%s (%.2f/Shoot)", short(r.reconcile.mean()), r.reconcile.count/n), orDash(strings.Join(hooks, ", ")), decide, unannounced, r.load)
	}
	return b.String()
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// short is d to three significant digits or so.
func short(d time.Duration) string {
	switch {
	case d == 0:
		return "—"
	case d >= time.Second:
		return d.Round(10 * time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	default:
		return d.Round(time.Microsecond).String()
	}
}
