package placement

import (
	"k8s.io/apimachinery/pkg/labels"
)

// The fast path: steps 1-6 (usable, CloudProfile selector, Shoot selector,
// provider, the Required seed pools, then failure tolerance or zones;
// filters.go) in one pass over
// the seeds instead of one pass per step, comparing hashes NewSeed digested
// instead of strings (fast_rules.go); from indexFrom seeds it visits only
// the seeds of the buckets (fast_buckets.go) of the seed index
// (fast_index.go) the Shoot's provider, zones and region leave plausible.
// The index is an accelerator inside this one path: every seed it lets
// through is checked in full by fastPass.add. TestFastPathMatchesPlain holds
// the path, with and without the index, to the plain filters.
//
// A first attempt also narrows steps 1-6 to the seeds step 11 (the
// strategy) can keep at best (fast_narrow.go); decide drops the narrowing
// when that attempt leaves no seed, so what it changes is only how many
// seeds steps 7-10 look at (step 11 then keeps them all and is skipped).
//
// Steps 1-4 are independent per-seed predicates, so their conjunction keeps
// exactly the seeds, in snapshot order, that the plain filters keep. Step 6
// is per-seed too, except that zone selection falls back from the Prefer set
// (C) to the Enforce set (B) when C is empty; the pass collects both. What
// the plain filters add is only which step failed, with its counts: so the
// fast path returns nothing whenever a failure is possible (a selector that
// does not parse, or no seed left), and the decision then applies the plain
// filters, which report that failure exactly. A non-empty result means every
// intermediate set was non-empty, so no plain filter would have failed.
func (d *decider) fast() []*Seed {
	var f fastPass // on the stack: a decision allocates nothing for it
	if !d.initFastPass(&f) {
		return nil
	}
	if len(d.snap.Seeds) >= d.indexFrom {
		if seeds, done := f.throughIndex(indexFor(d.snap.Seeds), d.marks()); done {
			return seeds
		}
	}
	return f.scan(d.snap.Seeds)
}

// marks returns the decider's cleared bit set of one bit per seed.
func (d *decider) marks() []uint64 {
	n := (len(d.snap.Seeds) + 63) / 64
	if cap(d.bits) < n {
		d.bits = make([]uint64, n)
	}
	return d.bits[:n]
}

// fastPass is one run of the fused steps 1-6.
type fastPass struct {
	// sels are the seed selectors that may drop a seed (the CloudProfile's,
	// then the Shoot's), in an array so the pass allocates nothing.
	sels  [2]labels.Selector
	nSels int
	prov  providerRule
	zone  zoneRule
	// narrow is what step 11 keeps at best, while the decider narrows.
	narrow narrowRule
	// pools is step 4b, the Required seed pools.
	pools requiredPools
	b     []*Seed // the survivors; under worker-pool zones the Enforce set B
	c     []*Seed // worker-pool zones only: the Prefer set C ⊆ B
}

// initFastPass prepares the pass; false when a selector does not parse
// (the plain filters report that).
func (d *decider) initFastPass(f *fastPass) bool {
	shoot, profile := d.shoot, d.profile
	if profile.SeedSelector != nil {
		if profile.selectorErr != nil {
			return false
		}
		f.addSelector(profile.selector)
	}
	if sel := shoot.Spec.SeedSelector; sel != nil {
		s, err := shootSelector(sel)
		if err != nil {
			return false
		}
		f.addSelector(s)
	}
	f.prov = newProviderRule(shoot.Spec.Provider.Type, profile.ProviderTypes())
	f.zone = newZoneRule(shoot)
	if d.narrow {
		f.narrow = d.narrowing
	}
	f.pools = d.policyState().pools
	f.b = d.scratch()
	if f.zone.kind == zoneWorkers {
		f.c = d.scratch()
	}
	return true
}

// addSelector adds sel unless it matches every seed.
func (f *fastPass) addSelector(sel labels.Selector) {
	if !sel.Empty() {
		f.sels[f.nSels] = sel
		f.nSels++
	}
}

// throughIndex runs the pass on the seeds idx cannot rule out. It is not
// done when, under worker-pool zones, C is empty: then B, which the index
// does not narrow down to, needs the full scan (unless the pass narrows:
// see scan).
func (f *fastPass) throughIndex(idx *seedIndex, marks []uint64) ([]*Seed, bool) {
	if f.zone.kind != zoneWorkers {
		// The candidates hold every usable seed of a matching provider
		// (and narrowed region), so B is complete.
		idx.candidates(f, false, marks)
		return f.b, true
	}
	// The candidates hold every seed that can be in C.
	idx.candidates(f, true, marks)
	if len(f.c) > 0 || f.narrow.on {
		return f.c, true
	}
	f.b, f.c = f.b[:0], f.c[:0]
	return nil, false
}

// scan runs the pass on every seed. Narrowed, an empty C says nothing of
// the C the plain filters fall back from (seeds of other regions may be
// in it), so the pass returns nothing and the decision drops the narrowing.
func (f *fastPass) scan(seeds []*Seed) []*Seed {
	for _, s := range seeds {
		f.add(s)
	}
	if len(f.c) > 0 || (f.narrow.on && f.zone.kind == zoneWorkers) {
		return f.c
	}
	return f.b
}

// add files s under b and c if it passes steps 1-6. It is the hot loop's
// body, so it stays one function (no calls beyond the checks themselves).
func (f *fastPass) add(s *Seed) {
	if !isUsable(s) || !f.prov.matches(s) || (f.narrow.on && !f.narrow.keeps(s)) {
		return
	}
	for _, sel := range f.sels[:f.nSels] {
		if !sel.Matches(s.labels) {
			return
		}
	}
	if _, refused := f.pools.refusal(s); refused {
		return
	}
	switch f.zone.kind {
	case zoneNone:
		f.b = append(f.b, s)
	case zoneThree:
		if len(s.zones) >= 3 {
			f.b = append(f.b, s)
		}
	case zoneControlPlane:
		if containsAll(s.zones, f.zone.cpZones) {
			f.b = append(f.b, s)
		}
	case zoneWorkers:
		switch s.zoneSel {
		case zoneEnforce:
			if f.zone.sharedBy(s) {
				f.b = append(f.b, s)
				f.c = append(f.c, s)
			}
		case zonePrefer:
			f.b = append(f.b, s)
			if f.zone.sharedBy(s) {
				f.c = append(f.c, s)
			}
		default:
			f.b = append(f.b, s)
			f.c = append(f.c, s)
		}
	}
}
