package e2e

import (
	"fmt"
	"strings"
	"time"
)

// The two summary tables of TestBindSideBySide's report: every shape and
// load with seedwarden's figures against gardener-scheduler's, and issue
// 40's acceptance targets, met or not.

// shapesTable is a row per shape and load: each figure as
// gardener-scheduler's / seedwarden's (their ratio), pooled over the rounds.
func shapesTable(rs []phaseFigures) string {
	var b strings.Builder
	b.WriteString("Per shape and load, gardener-scheduler / seedwarden (ratio seedwarden ÷ gardener-scheduler), median of the rounds; requests = the binder's own API requests per placed Shoot; announced = Shoots whose CREATE came back with a seed announced, of all rounds:\n\n")
	b.WriteString("| shape | load | CREATE→bound p50 | binds/s | API-server CPU per Shoot | requests per placed Shoot | announced at CREATE |\n")
	b.WriteString("|---|---|---|---|---|---|---|\n")
	for _, sc := range scenariosOf(rs) {
		gs, sw := pool(rs, sc, byGardener), pool(rs, sc, bySeedwarden)
		announced := "—"
		if sw.placed > 0 {
			a := sw.placed - sw.unannounced
			announced = fmt.Sprintf("%d of %d (%.0f %%)", a, sw.placed, 100*float64(a)/float64(sw.placed))
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", sc.shape, sc,
			sideBySideCell(ms(gs.p50), ms(sw.p50), gs.p50.Seconds(), sw.p50.Seconds()),
			sideBySideCell(fmt.Sprintf("%.1f", gs.bindsPerSecond), fmt.Sprintf("%.1f", sw.bindsPerSecond), gs.bindsPerSecond, sw.bindsPerSecond),
			sideBySideCell(cpuMS(gs.apiCPU)+" ms", cpuMS(sw.apiCPU)+" ms", gs.apiCPU.Seconds(), sw.apiCPU.Seconds()),
			sideBySideCell(fmt.Sprintf("%.2f", gs.requests), fmt.Sprintf("%.2f", sw.requests), gs.requests, sw.requests),
			announced)
	}
	return b.String()
}

// sideBySideCell is "g / s (ratio×)", without the ratio when g is 0.
func sideBySideCell(g, s string, gv, sv float64) string {
	if gv <= 0 {
		return g + " / " + s
	}
	return fmt.Sprintf("%s / %s (**%.2f×**)", g, s, sv/gv)
}

// goal is one acceptance target: seedwarden's figure over
// gardener-scheduler's, met when within the bound (at least, or at most).
type goal struct {
	what    string
	sc      scenario
	figure  func(pooledFigures) float64
	unit    func(float64) string
	atLeast bool
	bound   float64
}

// acceptanceGoals are issue 40's targets for each scenario of rs, in every
// shape it ran in: binds/s ≥ 1.2× in a burst and at 50/s (empty and full
// garden), CREATE→bound p50 ≤ 1.5× at 20/s in the empty garden and ≤ 0.1×
// at a sustained rate in the full one, API-server CPU per placed Shoot
// ≤ 1.3× in every load.
func acceptanceGoals(rs []phaseFigures) []goal {
	secs := func(v float64) string { return ms(time.Duration(v * float64(time.Second))) }
	rate := func(v float64) string { return fmt.Sprintf("%.1f/s", v) }
	cpu := func(v float64) string { return cpuMS(time.Duration(v*float64(time.Second))) + " ms" }
	p50 := func(p pooledFigures) float64 { return p.p50.Seconds() }
	bps := func(p pooledFigures) float64 { return p.bindsPerSecond }
	apiCPU := func(p pooledFigures) float64 { return p.apiCPU.Seconds() }
	var goals []goal
	for _, sc := range scenariosOf(rs) {
		switch {
		case !sc.sustained() || sc.rate == 50:
			goals = append(goals, goal{what: "binds/s", sc: sc, figure: bps, unit: rate, atLeast: true, bound: 1.2})
		case !sc.full && sc.rate == 20:
			goals = append(goals, goal{what: "CREATE→bound p50", sc: sc, figure: p50, unit: secs, bound: 1.5})
		}
		if sc.full && sc.sustained() {
			goals = append(goals, goal{what: "CREATE→bound p50", sc: sc, figure: p50, unit: secs, bound: 0.1})
		}
		goals = append(goals, goal{what: "API-server CPU per placed Shoot", sc: sc, figure: apiCPU, unit: cpu, bound: 1.3})
	}
	return goals
}

func acceptanceTable(rs []phaseFigures) string {
	var b strings.Builder
	b.WriteString("Acceptance (ratio = seedwarden / gardener-scheduler, pooled figures of the same run):\n\n")
	b.WriteString("| target | shape | load | gardener-scheduler | seedwarden | ratio | bound | met |\n|---|---|---|---|---|---|---|---|\n")
	for _, g := range acceptanceGoals(rs) {
		gs, sw := pool(rs, g.sc, byGardener), pool(rs, g.sc, bySeedwarden)
		gv, sv := g.figure(gs), g.figure(sw)
		ratio := 0.0
		if gv > 0 {
			ratio = sv / gv
		}
		target, met := fmt.Sprintf("≤ %.2g", g.bound), gv > 0 && ratio <= g.bound
		if g.atLeast {
			target, met = fmt.Sprintf("≥ %.1f", g.bound), ratio >= g.bound
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %.2f | %s | %s |\n", g.what, g.sc.shape, g.sc, g.unit(gv), g.unit(sv), ratio, target, map[bool]string{true: "met", false: "**not met**"}[met])
	}
	return b.String()
}
