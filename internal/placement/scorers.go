package placement

import (
	"math"
	"math/bits"
	"slices"
	"strings"
)

// The scorers of a Profile. Each fills out[j] with the score (0 to 100) of
// seeds[j]; usage[j] is that seed's usage (Snapshot.Usage: its Shoots, a
// migrating Shoot counted on both its seeds, plus reservations), read only
// when the profile has a scorer that needs it (scoreSeeds).
//
// Two kinds of normalisation, as in kube-scheduler:
//   - absolute (LeastAllocated, MostAllocated): a seed's score depends on
//     that seed alone;
//   - relative (RegionDistance, LeastShoots, ProjectSpread): the scorer
//     rates a cost per seed and lowerIsBetter maps the costs of the seeds
//     being ranked onto 0-100, so the best get 100 and the worst 0. Ranking
//     a different set of seeds (Options.Exclude after a seed turned out
//     full) may therefore move the others' scores, never their order by
//     that scorer.
type scoreFunc func(d *decider, seeds []*Seed, usage, out []int64)

var scorers = map[ScorerName]scoreFunc{
	ScoreRegionDistance: scoreRegionDistance,
	ScoreLeastAllocated: scoreLeastAllocated,
	ScoreMostAllocated:  scoreMostAllocated,
	ScoreLeastShoots:    scoreLeastShoots,
	ScoreProjectSpread:  scoreProjectSpread,
}

// scoreRegionDistance: the distance MinimalDistance computes (strategy.go),
// relative. When a region config applies to the Shoot's cloud profile and
// its table for the Shoot's region lists at least one of the seeds (a
// seed in the Shoot's own region counts as listed at 0 unless listed
// otherwise), the cost is the table's distance and unlisted seeds score 0;
// otherwise the cost is RegionDistance(seed region, Shoot region), plus 2
// for a seed of another provider type. Score = 100 × (far − cost) /
// (far − near) over the rated seeds, rounded down: the seeds the
// MinimalDistance strategy would keep get 100, the farthest 0.
func scoreRegionDistance(d *decider, seeds []*Seed, _, out []int64) {
	region := d.shoot.Spec.Region
	memo := &d.scores.distMemo
	clear(memo[:])
	listed := false
	if d.distTable != nil {
		for j, s := range seeds {
			out[j] = memo.cost(s, func() int64 {
				if v, ok := tableDistance(d.distTable, region, s); ok {
					return min(int64(v), unrated-1)
				}
				return unrated
			})
			listed = listed || out[j] != unrated
		}
	}
	if !listed {
		clear(memo[:])
		for j, s := range seeds {
			out[j] = memo.cost(s, func() int64 { return int64(d.nameDistance(s)) })
		}
	}
	lowerIsBetter(out)
}

// distMemo caches distance costs by region and provider type, the only
// things of a seed the cost depends on: a landscape has thousands of seeds
// but a few dozen regions, and the region's hash digested into each Seed
// spares a map lookup (or a Levenshtein distance) per seed. A slot holds
// the last pair hashed to it.
type distMemo [64]struct {
	region, providerType string
	cost                 int64
	set                  bool
}

// cost returns the memoised cost of s's region and provider type, or
// computes, stores and returns it.
func (m *distMemo) cost(s *Seed, compute func() int64) int64 {
	e := &m[(s.regionHash^s.providerHash)%uint64(len(m))]
	if !e.set || e.region != s.region || e.providerType != s.providerType {
		e.region, e.providerType, e.cost, e.set = s.region, s.providerType, compute(), true
	}
	return e.cost
}

// scoreLeastAllocated: absolute. Capacity c is status.allocatable.shoots
// or, without it, Profile.DefaultCapacity; u is the usage. Score = 100 ×
// (c − (u+1)) / c, rounded down and at least 0: the share of the seed left
// free once the Shoot is placed. A seed of unknown capacity (c = 0) scores 0.
func scoreLeastAllocated(d *decider, seeds []*Seed, usage, out []int64) {
	for j, s := range seeds {
		out[j] = leastAllocated(usage[j], d.opts.Scoring.capacity(s))
	}
}

// scoreMostAllocated: absolute, the bin-packing opposite. Score = 100 ×
// (u+1) / c, rounded down and at most 100: the share of the seed in use
// once the Shoot is placed. A seed of unknown capacity scores 0, so packing
// never prefers a seed it cannot size.
func scoreMostAllocated(d *decider, seeds []*Seed, usage, out []int64) {
	for j, s := range seeds {
		out[j] = mostAllocated(usage[j], d.opts.Scoring.capacity(s))
	}
}

// scoreLeastShoots: Gardener's step 12 as a score, relative over the usage:
// 100 × (most − u) / (most − least), rounded down, so the least-used seeds
// and only they get 100 (all 100 when every usage is equal). With it alone
// (and the strategy filter) a profile decides exactly as no profile does.
// A usage of MaxInt64 scores 0 (it is the unrated mark).
func scoreLeastShoots(_ *decider, _ []*Seed, usage, out []int64) {
	copy(out, usage)
	lowerIsBetter(out)
}

// scoreProjectSpread: relative over p, the Shoots of the Shoot's project
// (its namespace) on the seed (Snapshot.ProjectShoots): 100 × (most − p) /
// (most − fewest), rounded down, so new Shoots of a project go first to the
// seeds holding fewest of its Shoots, spreading a project's blast radius.
// Without Snapshot.ProjectShoots every seed scores 100.
func scoreProjectSpread(d *decider, seeds []*Seed, _, out []int64) {
	clear(out)
	if d.snap.ProjectShoots != nil {
		byProject := d.snap.ProjectShoots(d.shoot.Namespace)
		if len(byProject) <= len(seeds) {
			// A project holds Shoots on a few seeds: finding those among
			// the seeds (sorted by name) costs less than a lookup per seed.
			for name, n := range byProject {
				if j, ok := slices.BinarySearchFunc(seeds, name, func(s *Seed, name string) int { return strings.Compare(s.Name, name) }); ok {
					out[j] = min(n, unrated-1)
				}
			}
		} else {
			// A project on more seeds than are ranked: one lookup each.
			for j, s := range seeds {
				if n, ok := byProject[s.Name]; ok {
					out[j] = min(n, unrated-1)
				}
			}
		}
	}
	lowerIsBetter(out)
}

// capacity is the seed's status.allocatable.shoots or, without it, the
// profile's default.
func (p *Profile) capacity(s *Seed) int64 {
	if s.hasAllocatable {
		return s.allocatable
	}
	return p.DefaultCapacity
}

// leastAllocated is LeastAllocated's score for usage u and capacity c.
func leastAllocated(u, c int64) int64 {
	after := placed(u)
	if c <= 0 || after >= c {
		return 0
	}
	return percentOf(uint64(c-after), uint64(c))
}

// mostAllocated is MostAllocated's score for usage u and capacity c.
func mostAllocated(u, c int64) int64 {
	after := placed(u)
	switch {
	case c <= 0:
		return 0
	case after >= c:
		return 100 // only a seed without allocatable can be past its (default) capacity
	}
	return percentOf(uint64(after), uint64(c))
}

// placed is the usage once the Shoot is placed: one more, counting a
// negative usage as none and never overflowing.
func placed(u int64) int64 {
	if u < 0 {
		return 1
	}
	if u == math.MaxInt64 {
		return u
	}
	return u + 1
}

// unrated marks a seed a relative scorer has no cost for: it scores 0 and
// does not count for the bounds.
const unrated = math.MaxInt64

// lowerIsBetter turns the costs in place into scores: 100 × (hi − cost) /
// (hi − lo), rounded down, over the rated costs, so only the lowest cost
// gets 100 and the highest 0; 100 for all when they are equal.
func lowerIsBetter(costs []int64) {
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for _, c := range costs {
		if c != unrated {
			lo, hi = min(lo, c), max(hi, c)
		}
	}
	for j, c := range costs {
		switch {
		case c == unrated:
			costs[j] = 0
		case hi == lo:
			costs[j] = 100
		default:
			// Unsigned differences are exact for any int64 hi ≥ c ≥ lo.
			costs[j] = percentOf(uint64(hi)-uint64(c), uint64(hi)-uint64(lo))
		}
	}
}

// percentOf is 100 × num / den rounded down, for 0 ≤ num ≤ den and den > 0,
// in 128 bits so that no capacity or usage can overflow it.
func percentOf(num, den uint64) int64 {
	hi, lo := bits.Mul64(num, 100)
	q, _ := bits.Div64(hi, lo, den) // hi < den since num ≤ den
	return int64(q)
}
