package e2e

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/seedwarden/seedwarden/internal/metrics"
)

// The tables of TestCreateLatencyWebhooks, in Markdown, for BENCHMARKS.md.

// createBenchReport is every phase, then with against without per rate
// (both phases of each pooled), then where the time went.
func createBenchReport(rs []phaseResult, hooks []string) string {
	var b strings.Builder
	b.WriteString(phaseTables(rs))
	b.WriteString("\nPooled per rate (both phases of each kind), and what the webhooks add to no webhook:\n\n")
	b.WriteString("| rate | webhooks | CREATEs | p50 | p99 | p50 added | p99 added |\n|---:|---|---:|---:|---:|---:|---:|\n")
	for _, rate := range rates(rs) {
		none := pooled(rs, rate, noWebhooks)
		for _, k := range []hookKind{noWebhooks, emptyWebhooks, seedwardenWebhooks} {
			d := pooled(rs, rate, k)
			fmt.Fprintf(&b, "| %d | %s | %d | %s | %s | %s | %s |\n", rate, k, len(d),
				pct(d, .5), pct(d, .99), pct(d, .5)-pct(none, .5), pct(d, .99)-pct(none, .99))
		}
	}
	b.WriteString("\nThe API server's apiserver_admission_webhook_admission_duration_seconds (UPDATE: the retry " +
		"controller's binds in placement mode binding; the histogram's lowest bucket is 5 ms):\n\n")
	b.WriteString("| rate | webhooks | webhook | operation | calls | mean | ≤ 5 ms |\n|---:|---|---|---|---:|---:|---:|\n")
	const m = "apiserver_admission_webhook_admission_duration_seconds"
	for _, rate := range rates(rs) {
		for _, k := range []hookKind{emptyWebhooks, seedwardenWebhooks} {
			for _, h := range hooks {
				for _, op := range []string{"CREATE", "UPDATE"} {
					match := func(l map[string]string) bool { return l["name"] == h && l["operation"] == op }
					n := sumDelta(rs, rate, k, m+"_count", match)
					if n == 0 {
						continue
					}
					fast := sumDelta(rs, rate, k, m+"_bucket", func(l map[string]string) bool { return match(l) && l["le"] == "0.005" })
					fmt.Fprintf(&b, "| %d | %s | %s | %s | %.0f | %s | %.1f%% |\n", rate, k, h, op, n,
						us(meanOf(rs, rate, k, m, match)), 100*fast/n)
				}
			}
		}
	}
	b.WriteString(requestTable(rs))
	return b.String()
}

// requestTable lists the API requests (apiserver_request_total) per Shoot
// CREATE of each kind of phase, pooled over rates: what else the webhooks
// make the API server do (binds, SubjectAccessReviews, events, Leases).
func requestTable(rs []phaseResult) string {
	type key struct{ verb, resource string }
	per := map[hookKind]map[key]float64{}
	creates := map[hookKind]float64{}
	for _, r := range rs {
		creates[r.kind] += float64(len(r.call))
		if per[r.kind] == nil {
			per[r.kind] = map[key]float64{}
		}
		for i, sign := range []float64{-1, 1} {
			for _, smp := range r.api[i] {
				if smp.name != "apiserver_request_total" || smp.labels["resource"] == "" {
					continue
				}
				res := smp.labels["resource"]
				if sub := smp.labels["subresource"]; sub != "" {
					res += "/" + sub
				}
				per[r.kind][key{smp.labels["verb"], res}] += sign * smp.value
			}
		}
	}
	var keys []key
	for _, m := range per {
		for k, v := range m {
			if v > 0 && !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	slices.SortFunc(keys, func(a, b key) int { return strings.Compare(a.resource+a.verb, b.resource+b.verb) })
	var b strings.Builder
	b.WriteString("\nAPI requests per Shoot CREATE during the phases (apiserver_request_total, all clients; at least 0.05 in one column):\n\n")
	b.WriteString("| verb | resource | none | empty | seedwarden |\n|---|---|---:|---:|---:|\n")
	for _, k := range keys {
		var cells []string
		show := false
		for _, kind := range []hookKind{noWebhooks, emptyWebhooks, seedwardenWebhooks} {
			v := per[kind][k] / max(1, creates[kind])
			show = show || v >= 0.05
			cells = append(cells, fmt.Sprintf("%.2f", v))
		}
		if show {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", k.verb, k.resource, strings.Join(cells, " | "))
		}
	}
	return b.String()
}

// phaseTables are the CREATE calls of each phase as the client saw them,
// then where the time went: the API server's own mean for the request, the
// webhook's decision time, CPU per CREATE of each process, connections to
// the webhook.
func phaseTables(rs []phaseResult) string {
	var b strings.Builder
	b.WriteString("\nShoot CREATE call (sent -> response), each phase (request: the API server's own mean, " +
		"apiserver_request_duration_seconds, POST shoots):\n\n")
	b.WriteString("| # | webhooks | rate | sent/s | CREATEs | p50 | p90 | p99 | max | request | load avg |\n")
	b.WriteString("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	post := func(l map[string]string) bool {
		return l["verb"] == "POST" && l["resource"] == "shoots" && l["dry_run"] == ""
	}
	for i, r := range rs {
		one := []phaseResult{r}
		fmt.Fprintf(&b, "| %d | %s | %d | %.1f | %d | %s | %s | %s | %s | %s | %s |\n",
			i+1, r.kind, r.rate, float64(len(r.call)-1)/r.sending.Seconds(), len(r.call),
			pct(r.call, .5), pct(r.call, .9), pct(r.call, .99), pct(r.call, 1),
			us(meanOf(one, r.rate, r.kind, "apiserver_request_duration_seconds", post)), r.load)
	}
	b.WriteString("\nCPU per CREATE of each process (the test process also runs the webhook's API proxy and the empty webhook), " +
		"the webhook's decisions (seedwarden_scheduling_duration_seconds), connections to the webhook " +
		"(sampled every " + connSampleInterval.String() + "):\n\n")
	b.WriteString("| # | webhooks | rate | kube-apiserver | etcd | webhook | test | decisions | decision mean | conns used/opened/peak |\n")
	b.WriteString("|---:|---|---:|---:|---:|---:|---:|---:|---:|---|\n")
	for i, r := range rs {
		n := time.Duration(max(1, len(r.call)))
		decisions := delta(r.own, metrics.DurationName+"_count", nil)
		mean := "–"
		if decisions > 0 {
			mean = us(time.Duration(delta(r.own, metrics.DurationName+"_sum", nil) / decisions * float64(time.Second))).String()
		}
		fmt.Fprintf(&b, "| %d | %s | %d | %s | %s | %s | %s | %.0f | %s | %d/%d/%d |\n",
			i+1, r.kind, r.rate, us(r.cpu["kube-apiserver"]/n), us(r.cpu["etcd"]/n), us(r.cpu["webhook"]/n),
			us(cpuOfTest(r.cpu)/n), decisions, mean, r.conns[0], r.conns[1], r.conns[2])
	}
	return b.String()
}

func rates(rs []phaseResult) []int {
	var out []int
	for _, r := range rs {
		if !slices.Contains(out, r.rate) {
			out = append(out, r.rate)
		}
	}
	return out
}

func pooled(rs []phaseResult, rate int, kind hookKind) []time.Duration {
	var out []time.Duration
	for _, r := range rs {
		if r.rate == rate && r.kind == kind {
			out = append(out, r.call...)
		}
	}
	slices.Sort(out)
	return out
}

// delta is how much the samples of name matching match grew over a phase.
func delta(s [2][]sample, name string, match func(map[string]string) bool) float64 {
	return counterSum(s[1], name, match) - counterSum(s[0], name, match)
}

// sumDelta adds delta of the API server's metric over the phases of rate
// and kind.
func sumDelta(rs []phaseResult, rate int, kind hookKind, name string, match func(map[string]string) bool) float64 {
	var v float64
	for _, r := range rs {
		if r.rate == rate && r.kind == kind {
			v += delta(r.api, name, match)
		}
	}
	return v
}

// meanOf is a histogram's mean over the phases of rate and kind.
func meanOf(rs []phaseResult, rate int, kind hookKind, hist string, match func(map[string]string) bool) time.Duration {
	n := sumDelta(rs, rate, kind, hist+"_count", match)
	if n == 0 {
		return 0
	}
	return time.Duration(sumDelta(rs, rate, kind, hist+"_sum", match) / n * float64(time.Second))
}

func cpuOfTest(cpu map[string]time.Duration) time.Duration {
	for k, v := range cpu {
		if strings.HasPrefix(k, "test") {
			return v
		}
	}
	return 0
}

// us rounds d to microseconds for the tables.
func us(d time.Duration) time.Duration { return d.Round(time.Microsecond) }
