package main

import (
	"fmt"
	"io"
	"time"
)

// The HTTP benchmark's targets: at least 0.9 of the empty baseline's
// throughput, and a p99 under 2 ms where the machine is not saturated.
const (
	targetThroughputRatio = 0.9
	targetP99             = 2 * time.Millisecond
)

// printTable prints one benchmark's runs and the seedwarden/baseline ratios
// as Markdown.
func printTable(w io.Writer, title string, o *options, tmpls []*template, kind string, runs []*result, placed bool) {
	fmt.Fprintf(w, "\n### %s\n\n", title)
	fmt.Fprintf(w, "Workload: %d clients, each with a keep-alive HTTP/1.1 connection over TLS on loopback, sending CREATE AdmissionReviews of %s bytes (a %s-byte %s; a fresh UID and name per request) for %s after a %s warm-up per run",
		o.concurrency, bodySizes(tmpls), objectSizes(tmpls), kind, o.duration, o.warmup)
	if placed {
		fmt.Fprintf(w, "; the Shoot in each of the %d regions in turn; landscape of %d seeds and %d Shoots, reservationTTL %s, placement mode %s", len(tmpls), o.seeds, o.shoots, o.reservationTTL, o.placementMode)
	}
	if o.rate > 0 {
		fmt.Fprintf(w, ". Open loop: %.0f requests per second in all, each client on a fixed schedule; latency counts from the scheduled send time", o.rate)
	} else {
		fmt.Fprint(w, ". Closed loop: each client sends its next request when the last is answered, so the servers run at saturation and latency is mostly queueing (about clients / throughput)")
	}
	fmt.Fprintln(w, ". Every answer is checked (200, the request's UID, allowed"+map[bool]string{true: ", a patch naming the seed for seedwarden: spec.seedName in placement mode patch, annotation seedwarden.io/seed in mode binding", false: ""}[placed]+"); errors count failed checks. Server CPU is the server process's user+system time in the window (/proc), client CPU the load generator's.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| # | Server | Requests | Errors | req/s | p50 | p90 | p99 | max | Server CPU/req | Client CPU/req | Load avg |")
	fmt.Fprintln(w, "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
	for i, r := range runs {
		fmt.Fprintf(w, "| %d | %s | %d | %d | %.0f | %s | %s | %s | %s | %s | %s | %s |\n",
			i+1, r.server, r.requests, r.errors, r.rps(),
			fmtDur(r.percentile(.5)), fmtDur(r.percentile(.9)), fmtDur(r.percentile(.99)), fmtDur(r.percentile(1)),
			fmtCPU(r.serverCPU, r.requests), fmtCPU(r.clientCPU, r.requests), r.loadAvg)
	}

	base, ours := split(runs)
	if len(base) == 0 || len(ours) == 0 {
		return
	}
	bRPS, oRPS := mean(base, (*result).rps), mean(ours, (*result).rps)
	bP99, oP99 := mean(base, p99ms), mean(ours, p99ms)
	bCPU, oCPU := mean(base, cpuPerReq), mean(ours, cpuPerReq)
	fmt.Fprintln(w)
	fmt.Fprintf(w, "| seedwarden / baseline (means: %d seedwarden, %d baseline runs) | req/s | p99 | Server CPU/req |\n", len(ours), len(base))
	fmt.Fprintln(w, "|---|---:|---:|---:|")
	fmt.Fprintf(w, "| seedwarden | %.0f | %s | %s |\n", oRPS, fmtDur(msDur(oP99)), fmtCPUPerReq(oCPU))
	fmt.Fprintf(w, "| baseline | %.0f | %s | %s |\n", bRPS, fmtDur(msDur(bP99)), fmtCPUPerReq(bCPU))
	fmt.Fprintf(w, "| **ratio** | **%.2f** | **%.2f** | **%s** |\n", oRPS/bRPS, oP99/bP99, ratio(oCPU, bCPU))
	fmt.Fprintln(w)
	throughput := fmt.Sprintf("throughput at least %.1f of the baseline's: %s (%.2f)", targetThroughputRatio, verdict(oRPS/bRPS >= targetThroughputRatio), oRPS/bRPS)
	if o.rate > 0 {
		throughput = "throughput: not measured in an open-loop run (-rate fixes it)"
	}
	fmt.Fprintf(w, "Targets: %s; seedwarden p99 under %s: %s (%s, mean of its runs).\n",
		throughput, fmtDur(targetP99), verdict(msDur(oP99) < targetP99), fmtDur(msDur(oP99)))
	errs, unsched := 0, 0
	seeds := map[string]bool{}
	placements := 0
	for _, r := range runs {
		errs += r.errors + r.warmupErrors
		unsched += r.unschedulable
		for s, n := range r.seeds {
			seeds[s] = true
			placements += n
		}
	}
	if placed {
		fmt.Fprintf(w, "seedwarden placed %d Shoots (measured windows) on %d seeds; unschedulable answers: %d; errors in all runs, warm-ups included: %d.\n", placements, len(seeds), unsched, errs)
	} else {
		fmt.Fprintf(w, "Errors in all runs, warm-ups included: %d.\n", errs)
	}
}

func split(runs []*result) (base, ours []*result) {
	for _, r := range runs {
		if r.server == "baseline" {
			base = append(base, r)
		} else {
			ours = append(ours, r)
		}
	}
	return base, ours
}

func mean(rs []*result, f func(*result) float64) float64 {
	sum, n := 0.0, 0
	for _, r := range rs {
		if v := f(r); v >= 0 {
			sum += v
			n++
		}
	}
	if n == 0 {
		return -1
	}
	return sum / float64(n)
}

func p99ms(r *result) float64 { return float64(r.percentile(.99)) / float64(time.Millisecond) }

func msDur(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

// cpuPerReq is server CPU seconds per request, or -1.
func cpuPerReq(r *result) float64 {
	if r.serverCPU < 0 || r.requests == 0 {
		return -1
	}
	return r.serverCPU / float64(r.requests)
}

func fmtCPU(seconds float64, requests int) string {
	if seconds < 0 || requests == 0 {
		return "?"
	}
	return fmtCPUPerReq(seconds / float64(requests))
}

func fmtCPUPerReq(s float64) string {
	if s < 0 {
		return "?"
	}
	return fmt.Sprintf("%.0f µs", s*1e6)
}

func ratio(a, b float64) string {
	if a < 0 || b <= 0 {
		return "?"
	}
	return fmt.Sprintf("%.2f", a/b)
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}

// fmtDur prints µs below a millisecond, else ms with two decimals.
func fmtDur(d time.Duration) string {
	if d < time.Millisecond {
		return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond))
	}
	return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
}

func objectSizes(ts []*template) string {
	return sizeRange(ts, func(t *template) int { return t.objectBytes })
}

func bodySizes(ts []*template) string {
	return sizeRange(ts, func(t *template) int { return len(t.body) })
}

func sizeRange(ts []*template, size func(*template) int) string {
	lo, hi := size(ts[0]), size(ts[0])
	for _, t := range ts {
		lo, hi = min(lo, size(t)), max(hi, size(t))
	}
	if lo == hi {
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d-%d", lo, hi)
}
