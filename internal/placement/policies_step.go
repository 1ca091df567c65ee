package placement

import (
	"fmt"
	"math/bits"
	"slices"
	"strings"
)

// The policies in a decision (policies.go): the Required pools filter after
// step 4 (StepPools, filters.go says why there), the preferences rank the seeds after step 11
// (StepPreferences) and step 12 picks from those of the best rank only.
// Without policies and without a marked seed among those left, neither
// does any work: the decision is Gardener's, allocation for allocation.

// Rank is a seed's standing under the preferences, a bit per preference
// that counts against it, the most important highest: a lower Rank is
// better, and only the seeds of the lowest Rank left go on to step 12.
type Rank uint8

// The preferences, least important first.
const (
	// RankOutsidePreferredPool: the Shoot's project is in a Preferred pool
	// and the seed is in none of its Preferred pools.
	RankOutsidePreferredPool Rank = 1 << iota
	// RankPastSoftLimit: the seed holds at least its soft limit.
	RankPastSoftLimit
	// RankKeptSeat: the Shoot is not zone-redundant and would take one of
	// the places the seed keeps for those that are.
	RankKeptSeat
	// RankAvoided: the seed carries api.AnnotationSeedAvoid.
	RankAvoided
)

// Preferences lists the preferences, most important first.
var Preferences = [...]Rank{RankAvoided, RankKeptSeat, RankPastSoftLimit, RankOutsidePreferredPool}

// prefIndex is the preference's index in Preferences.
func prefIndex(r Rank) int { return len(Preferences) - 1 - bits.TrailingZeros8(uint8(r)) }

// String names the preferences set in r, most important first.
func (r Rank) String() string {
	if r == 0 {
		return "none"
	}
	var names []string
	for _, p := range Preferences {
		if r&p != 0 {
			names = append(names, preferenceNames[prefIndex(p)])
		}
	}
	return strings.Join(names, ", ")
}

// preferenceNames, in the order of Preferences.
var preferenceNames = [len(Preferences)]string{"avoided", "kept seats", "past soft limit", "outside preferred pool"}

// PolicyEffect is what the policies did to a decision; the zero value
// when none acted.
type PolicyEffect struct {
	// Ranked is the number of seeds the preferences ranked (those the
	// strategy kept); 0 when no preference could tell them apart.
	Ranked int
	// SetAside counts, per preference (the order of Preferences), the seeds
	// it set aside: those of a worse rank than the chosen seed's whose
	// most important difference from it is that preference.
	SetAside [len(Preferences)]int
	// Rank is the chosen seed's.
	Rank Rank
	// Avoid is the chosen seed's avoid reason, when Rank has RankAvoided.
	Avoid string
	// BoundTo names the Required pools the Shoot's project is in (it goes
	// only to their seeds), Withheld the other Required pools (their seeds
	// do not take it). Both come from the configuration: how many seeds
	// they removed depends on how many a decision's path looked at.
	BoundTo, Withheld []string
}

// Acted reports whether any policy changed what step 12 chose from.
func (e *PolicyEffect) Acted() bool {
	if len(e.BoundTo) > 0 || len(e.Withheld) > 0 || e.Rank != 0 {
		return true
	}
	for _, n := range e.SetAside {
		if n > 0 {
			return true
		}
	}
	return false
}

// Summary says in a line what the policies did, for the score breakdown
// (simulate, plan) and events; "" when nothing.
func (e *PolicyEffect) Summary() string {
	if !e.Acted() {
		return ""
	}
	var parts []string
	if len(e.BoundTo) > 0 {
		parts = append(parts, "only seeds of Required pools "+quoteList(e.BoundTo))
	}
	if len(e.Withheld) > 0 {
		parts = append(parts, "seeds of Required pools "+quoteList(e.Withheld)+" withheld")
	}
	for i, n := range e.SetAside {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%s set aside %d", preferenceNames[i], n))
		}
	}
	if e.Rank != 0 {
		chosen := "chosen seed is " + e.Rank.String()
		if e.Avoid != "" {
			chosen += " (" + e.Avoid + ")"
		}
		parts = append(parts, chosen+": no better seed admits the shoot")
	}
	return "policies: " + strings.Join(parts, "; ")
}

// policyState is what a decision computes of the policies once.
type policyState struct {
	ready     bool
	pools     requiredPools
	preferred PoolSet // the project's Preferred pools
}

// requiredPools is the Required pools' rule for one Shoot's project.
type requiredPools struct {
	policies *Policies
	required PoolSet // the Required pools
	project  PoolSet // the Shoot's project's pools
}

// refusal is the pool that refuses s, if any (Policies.RequiredRefusal).
func (rp *requiredPools) refusal(s *Seed) (RequiredViolation, bool) {
	if rp.required == 0 {
		return RequiredViolation{}, false
	}
	return rp.policies.requiredRefusal(rp.required, rp.project, s)
}

func (d *decider) policyState() *policyState {
	ps := &d.pol
	if ps.ready {
		return ps
	}
	ps.ready = true
	p := d.opts.Policies
	if p == nil || len(p.Pools) == 0 {
		return ps
	}
	var project *Project
	if d.snap.Projects != nil {
		project = d.snap.Projects[d.shoot.Namespace]
	}
	projectPools := p.ProjectPools(project)
	ps.pools = requiredPools{policies: p, required: p.PoolsOf(PoolRequired), project: projectPools}
	ps.preferred = projectPools & p.PoolsOf(PoolPreferred)
	return ps
}

// filterPools is StepPools: for every Required pool, a seed takes the
// Shoot only if both or neither are in it (policies.go, RequiredRefusal).
func (d *decider) filterPools(seeds []*Seed) ([]*Seed, Decision) {
	rp := &d.policyState().pools
	if rp.required == 0 {
		return seeds, Decision{}
	}
	kept := d.filter(seeds, func(s *Seed) bool {
		_, refused := rp.refusal(s)
		return !refused
	}, func(s *Seed) (ReasonCode, string) {
		v, _ := rp.refusal(s)
		return v.Code(), v.String()
	})
	if len(kept) == 0 {
		return nil, d.fail(StepPools, "", "none of the %d seeds left is allowed by the Required seed pools", len(seeds))
	}
	return kept, Decision{}
}

// notePools records the Required pools that acted on the decision.
func (d *decider) notePools() {
	rp := &d.policyState().pools
	if rp.required == 0 {
		return
	}
	d.effect.BoundTo = rp.policies.PoolNames(rp.required & rp.project)
	d.effect.Withheld = rp.policies.PoolNames(rp.required &^ rp.project)
}

// rank is the seed's Rank for this decision.
func (d *decider) rank(s *Seed) Rank {
	p := d.opts.Policies
	var r Rank
	if s.avoided {
		r |= RankAvoided
	}
	if !s.hasAllocatable {
		return r | d.poolRank(s)
	}
	used := d.usage(s)
	if limit, ok := p.SoftLimit(s); ok && used >= limit {
		r |= RankPastSoftLimit
	}
	if k := p.KeptSeatsOf(s); k > 0 && !failureToleranceZone(d.shoot) && s.allocatable-used <= k {
		r |= RankKeptSeat
	}
	return r | d.poolRank(s)
}

func (d *decider) poolRank(s *Seed) Rank {
	ps := d.policyState()
	if ps.preferred != 0 && !d.opts.Policies.inAny(s, ps.preferred) {
		return RankOutsidePreferredPool
	}
	return 0
}

// prefersAny: some seed of seeds may rank other than 0.
func (d *decider) prefersAny(seeds []*Seed) bool {
	if p := d.opts.Policies; p != nil {
		if p.SoftLimitPercent > 0 || p.KeptSeats > 0 || p.KeptSeatsPercent > 0 || d.policyState().preferred != 0 {
			return true
		}
	}
	for _, s := range seeds {
		if s.marked() {
			return true
		}
	}
	return false
}

// withPreferences is StepPreferences before choose (step 12): choose gets
// the seeds of the lowest rank, and the decision says what the policies did.
func (d *decider) withPreferences(choose func(*Snapshot, []*Seed) Decision) func(*Snapshot, []*Seed) Decision {
	return func(snap *Snapshot, seeds []*Seed) Decision {
		d.notePools()
		if !d.prefersAny(seeds) {
			dec := choose(snap, seeds)
			dec.Policy = d.effect
			return dec
		}
		ranks := d.ranks[:0]
		for _, s := range seeds {
			ranks = append(ranks, d.rank(s))
		}
		d.ranks = ranks
		best := slices.Min(ranks)
		e := d.effect
		e.Ranked = len(seeds)
		if slices.ContainsFunc(ranks, func(r Rank) bool { return r != best }) {
			kept := d.scratch()
			for i, s := range seeds {
				if r := ranks[i]; r != best {
					e.SetAside[prefIndex(Rank(1)<<(7-bits.LeadingZeros8(uint8(r^best))))]++
					continue
				}
				kept = append(kept, s)
			}
			seeds = kept
		}
		dec := choose(snap, seeds)
		e.Rank = best
		if best&RankAvoided != 0 {
			e.Avoid = seeds[0].avoid
			for _, s := range seeds {
				if s.Name == dec.Seed {
					e.Avoid = s.avoid
				}
			}
		}
		dec.Policy = e
		return dec
	}
}
