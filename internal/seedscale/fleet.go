package seedscale

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// One decision across all sets. Decided alone, two sets whose new seeds
// would take the same pending Shoots (or serve the same Headroom template)
// both grow for them. DecideFleet decides the sets of a garden in turn, in
// an expander's order, each on the landscape the sets before it leave:
// their new replicas as seats (counted as seeds, with the pending Shoots
// they take placed on them), and only the pending Shoots still without a
// seed left for the next: replicas on their way count as seats. A set that grows for Shoots takes them from the
// others, so no two grow for the same Shoots; a Headroom target one set's
// growth meets is met for the next.
//
// The expander, as cluster-autoscaler's: the set whose new seed takes the
// most pending Shoots (the pending Shoots its new seeds take when it is
// decided alone, per new seed; then in all) first (a Shoot goes to a
// new seed in the simulation only where that seed scores best for it
// among all seeds with room, so the count is of the Shoots the set serves
// best), then the higher spec.priority, then the name. A set that is
// backed off (its ManagedSeedSet's pending replica fails) comes after the
// others and is not asked for more (ReasonBackedOff); a dry-run set last.

// FleetSet is one SeedAutoscaler of the garden.
type FleetSet struct {
	// Autoscaler is the SeedAutoscaler's namespace/name.
	Autoscaler string
	// Priority is its spec.priority: higher is tried first among sets
	// whose new seeds take as many pending Shoots.
	Priority int32
	// DryRun says the set's replicas are never written (spec.dryRun): it
	// is decided after every set that writes, so that its growth on paper
	// takes no Shoots from a set that would grow for them.
	DryRun bool
	// Input is what Recommend reads for the set alone. Every set's
	// Snapshot and Pending are the garden's, the same for all.
	Input Input
}

// FleetEntry is one set's part of the decision, in the order of the sets
// given.
type FleetEntry struct {
	Autoscaler string
	// Recommendation is the set's recommendation in the fleet: decided
	// after the sets before it in Order, on the landscape they leave.
	Recommendation
	// Alone is the set's recommendation decided alone (Recommend), which
	// the expander orders by.
	Alone Recommendation
	// Order is the set's place in the expander's order, 0 first.
	Order int
	// Takes counts the pending Shoots the set's new replicas and its
	// replicas on their way take in the fleet decision.
	Takes int
	// Err is the set's recommendation error; the set is then left as it
	// is, and the others are decided without it.
	Err error
}

// decided is one set's recommendation and the landscape it leaves.
type decided struct {
	rec   Recommendation
	final *outcome
	takes int
	err   error
}

// DecideFleet decides every set together. It is pure. Each set is decided
// alone for the expander, then every set but the first again, on the
// landscape the sets before it leave: at most twice the sets' Recommend,
// and near once in practice, since the sets after the first find the
// pending Shoots seated and their targets met after few simulations
// (BENCHMARKS.md §27).
func DecideFleet(sets []FleetSet) []FleetEntry {
	alone := make([]decided, len(sets))
	for i := range sets {
		alone[i] = decide(sets[i].Input)
	}
	order := fleetOrder(sets, alone)
	out := make([]FleetEntry, len(sets))
	// snap and pending are the landscape the sets decided so far leave.
	var snap *placement.Snapshot
	var pending []*api.Shoot
	for pos, i := range order {
		d := alone[i]
		if snap != nil && d.err == nil {
			in := sets[i].Input
			in.Snapshot, in.Pending = snap, pending
			d = decide(in)
		}
		out[i] = FleetEntry{Autoscaler: sets[i].Autoscaler, Recommendation: d.rec, Alone: alone[i].rec, Order: pos, Takes: d.takes, Err: d.err}
		if d.err != nil {
			continue
		}
		// The next sets see this one at its recommended replicas (those
		// on the way included, as seats) with the pending Shoots placed,
		// and decide for the Shoots still waiting.
		if snap == nil {
			snap, pending = sets[i].Input.Snapshot, sets[i].Input.Pending
		}
		snap, pending = seats(snap, d.final, pending)
	}
	return out
}

// decide is Recommend, with the outcome at the recommended replicas and
// the pending Shoots it places on new seeds.
func decide(in Input) decided {
	if in.Spec == nil {
		return decided{err: fmt.Errorf("seedscale: no spec")}
	}
	if err := in.Spec.CheckBounds(); err != nil {
		return decided{err: err}
	}
	rec, final, err := recommendFinal(in, (*recommender).scan)
	if err != nil {
		return decided{err: err}
	}
	return decided{rec: rec, final: final, takes: seatedShoots(final)}
}

// seatedShoots counts the pending Shoots an outcome places on the seeds it
// adds: new replicas, and replicas on their way (asked for, or registered
// and not ready), which take their Shoots before any other set's new seed.
func seatedShoots(o *outcome) int {
	added := make(map[string]bool, len(o.added))
	for _, s := range o.added {
		added[s.Name] = true
	}
	n := 0
	for _, p := range o.report.Placed {
		if added[p.To] {
			n++
		}
	}
	return n
}

// seats is snap with a decided set's outcome applied as seats: the seeds
// it adds (its replicas on the way, as the ready seeds they will become)
// holding the pending Shoots they take.
// The pending Shoots it places on seeds that exist already are left
// pending: where they go among those is for the sets decided later to see
// in their own simulations, as each would alone. The second result are
// the pending Shoots without a seat.
func seats(snap *placement.Snapshot, o *outcome, pending []*api.Shoot) (*placement.Snapshot, []*api.Shoot) {
	added := make(map[string]int64, len(o.added))
	for _, s := range o.added {
		added[s.Name] = 0
	}
	seated := map[string]bool{}
	for _, p := range o.report.Placed {
		if _, ok := added[p.To]; ok {
			added[p.To]++
			seated[p.Shoot] = true
		}
	}
	// Only a starting seed added back ready is replaced: the seeds a
	// scale-down would remove stay, since the sets after this one would
	// take the pending Shoots that the scale-down counts on them for, and
	// grow for them; a scale-down is slow (its window) and the next sync
	// decides again with the seeds gone.
	gone := make(map[string]bool, len(o.added))
	for _, s := range o.added {
		gone[s.Name] = true
	}
	next := *snap
	next.Seeds = make([]*placement.Seed, 0, len(snap.Seeds)+len(o.added))
	for _, s := range snap.Seeds {
		if !gone[s.Name] {
			next.Seeds = append(next.Seeds, s)
		}
	}
	for _, s := range o.added {
		next.Seeds = append(next.Seeds, placement.NewSeed(s))
	}
	slices.SortFunc(next.Seeds, func(a, b *placement.Seed) int { return cmp.Compare(a.Name, b.Name) })
	base := snap.Usage
	next.Usage = func(s *placement.Seed) int64 {
		if n, ok := added[s.Name]; ok {
			return n
		}
		if base == nil {
			return 0
		}
		return base(s)
	}
	left := []*api.Shoot{}
	for _, s := range pending {
		if !seated[s.Namespace+"/"+s.Name] {
			left = append(left, s)
		}
	}
	return &next, left
}

// fleetOrder is the expander's order of the sets, by index.
func fleetOrder(sets []FleetSet, alone []decided) []int {
	order := make([]int, len(sets))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		backedOff := func(i int) bool { return sets[i].Input.Set.Failing != "" || alone[i].err != nil }
		if c := cmp.Or(compareBool(sets[a].DryRun, sets[b].DryRun), compareBool(backedOff(a), backedOff(b))); c != 0 {
			return c
		}
		return cmp.Or(
			comparePerSeed(alone[a], alone[b]),
			cmp.Compare(sets[b].Priority, sets[a].Priority),
			cmp.Compare(sets[a].Autoscaler, sets[b].Autoscaler),
		)
	})
	return order
}

// comparePerSeed orders a set whose new seeds take more pending Shoots
// each first (takes over new seeds, compared by cross-multiplying), then
// one whose new seeds take more in all; a set that adds no seed takes
// none.
func comparePerSeed(a, b decided) int {
	na, nb := int64(max(1, a.rec.Desired-a.rec.Current)), int64(max(1, b.rec.Desired-b.rec.Current))
	ta, tb := int64(a.takes), int64(b.takes)
	return cmp.Or(cmp.Compare(tb*na, ta*nb), cmp.Compare(tb, ta))
}

// compareBool orders false before true.
func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}
