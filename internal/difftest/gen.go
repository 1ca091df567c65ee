package difftest

import (
	"fmt"
	"math/rand/v2"
)

// DefaultSeed is the generator seed the differential test uses unless told
// otherwise; any other seed gives another, equally reproducible, set.
const DefaultSeed = 20261127

// Generate returns n scenarios for the given seed. Scenario i depends only on
// (seed, i), so a disagreement found in a long run is reproduced by its name
// alone (gen-<seed>-<i>) with a short one.
func Generate(seed uint64, n int) []Scenario {
	out := make([]Scenario, n)
	for i := range out {
		out[i] = One(seed, i)
	}
	return out
}

// One returns scenario i of the given seed.
func One(seed uint64, i int) Scenario {
	g := newGen(seed, i)
	return g.scenario(fmt.Sprintf("gen-%d-%05d", seed, i))
}

// gen builds one scenario. The landscape is small (3-8 seeds) so that the
// choices are contested and the rare values of several families meet in the
// same decision.
type gen struct {
	r     *rand.Rand
	focus map[feature]bool
	// crash is the input Gardener's scheduler is known to crash on that
	// this scenario carries, if any (rarely: the whole scenario is lost to
	// the comparison, but the crashes stay listed).
	crash crashKind

	provider, region string   // the Shoot's
	regions          []string // the regions of the landscape, the Shoot's first
	seeds            []object
	seedNames        []string
	projectName      string // the Project owning the Shoot's namespace, if any
	contested        bool   // two Projects claim the Shoot's namespace
	namespace        string // the Shoot's
}

func newGen(seed uint64, i int) *gen {
	g := &gen{r: rand.New(rand.NewPCG(seed, uint64(i)))}
	g.focus = map[feature]bool{}
	// One to three families are stressed; the others keep their base odds,
	// so every family still meets every other now and then.
	for range 1 + g.r.IntN(3) {
		g.focus[features[g.r.IntN(len(features))]] = true
	}
	if g.chance(crashOdds) {
		g.crash = crashKind(1 + g.r.IntN(int(crashKinds)-1))
	}
	return g
}

func (g *gen) scenario(name string) Scenario {
	g.pickShootPlace()
	objects := g.landscape()
	shoot := g.shoot()
	if g.on(fShuffle) {
		g.r.Shuffle(len(objects), func(i, j int) { objects[i], objects[j] = objects[j], objects[i] })
	}
	strategy := g.pick("SameRegion", "MinimalDistance")
	if (g.focus[fOddTable] || g.focus[fRegionConfigs]) && g.chance(0.6) {
		strategy = "MinimalDistance" // the only one that reads region configs
	}
	sc := Scenario{
		Name:           name,
		Strategy:       strategy,
		NetworkOverlap: g.pick("Disjoint", "AllowIPv4"),
		Shoot:          marshal(shoot),
	}
	for _, o := range objects {
		sc.Objects = append(sc.Objects, marshal(o))
	}
	return sc
}

// landscape returns every object but the new Shoot: profiles, projects,
// region configs, seeds and the Shoots that give the seeds their usage.
func (g *gen) landscape() []object {
	var objs []object
	objs = append(objs, g.cloudProfiles()...)
	objs = append(objs, g.projects()...)
	objs = append(objs, g.regionConfigs()...)
	n := 3 + g.r.IntN(6)
	for i := range n {
		s := g.seed(i)
		g.seeds = append(g.seeds, s)
		g.seedNames = append(g.seedNames, s["metadata"].(object)["name"].(string))
	}
	existing := g.existingShoots()
	g.setCapacities(existing)
	objs = append(objs, g.seeds...)
	return append(objs, existing...)
}

// on reports whether a rare value of family f goes into this draw: often
// when the scenario stresses f, now and then otherwise.
func (g *gen) on(f feature) bool {
	if g.focus[f] {
		return g.r.Float64() < 0.6
	}
	return g.r.Float64() < baseOdds
}

// stressed is on without the base odds: for values that end a decision
// early (no Project), which would otherwise hide the rest of the scenario.
func (g *gen) stressed(f feature) bool { return g.focus[f] && g.chance(0.6) }

// baseOdds is how often an unstressed family shows its rare values.
const baseOdds = 0.06

func (g *gen) chance(p float64) bool { return g.r.Float64() < p }

func (g *gen) pick(vals ...string) string { return vals[g.r.IntN(len(vals))] }

func (g *gen) pickList(vals []string) string { return vals[g.r.IntN(len(vals))] }

// word is v as a string field's value: now and then an edge value instead
// (edge.go), so every field placement reads meets empty, `*`, whitespace,
// case variants, very long strings and other kinds' names.
func (g *gen) word(v string) string {
	if g.on(fEdgeStrings) && g.chance(edgeOdds) {
		return edgeValue(g.r, v, crossKind)
	}
	return v
}

// words is word on each of vs.
func (g *gen) words(vs []string) []string {
	for i := range vs {
		vs[i] = g.word(vs[i])
	}
	return vs
}

// edgeOdds is how often a drawn field becomes an edge value when the family
// is on: most fields keep their ordinary values, so the decision still
// turns on the rest of the scenario.
const edgeOdds = 0.35

// some returns up to limit values of pool, in random order, possibly repeated
// when dup is set.
func (g *gen) some(pool []string, limit int, dup bool) []string {
	n := g.r.IntN(limit + 1)
	var out []string
	for _, i := range g.r.Perm(len(pool))[:min(n, len(pool))] {
		out = append(out, pool[i])
	}
	if dup && len(out) > 0 {
		for range 1 + g.r.IntN(2) {
			out = append(out, out[g.r.IntN(len(out))])
		}
	}
	return out
}
