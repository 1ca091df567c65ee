package placement

import (
	"fmt"
	"slices"
	"sync"

	"k8s.io/utils/ptr"

	"github.com/seedwarden/seedwarden/internal/api"
)

// Decide places a Shoot: it runs the steps of Gardener's scheduler in order
// and returns the least-used remaining seed (ties broken by name), or an
// unschedulable Decision naming the step that left no seed.
//
// The fast path records nothing per seed; only when the Shoot turns out to be
// unschedulable is the decision replayed with explanations switched on, so
// scheduled Shoots pay for no strings or maps.
func Decide(snap *Snapshot, shoot *api.Shoot, opts Options) Decision {
	d := run(snap, shoot, opts, passFast)
	if d.Schedulable() {
		return d
	}
	// Replayed with explanations. Should usage have moved in between and the
	// replay found room, the replay is the more recent truth either way.
	return run(snap, shoot, opts, passExplain)
}

// Admits reports whether seed is among the final candidates Decide would
// choose the least-used one from: it passes every filter and the strategy.
// A Shoot announced to a seed (the binding placement mode) is bound there
// as long as this holds, so that other placements shifting the usage in
// between do not move it; the caller discounts the place the Shoot already
// holds from the seed's usage.
func Admits(snap *Snapshot, shoot *api.Shoot, opts Options, seed string) bool {
	d := runWith(snap, shoot, opts, passFast, func(_ *Snapshot, seeds []*Seed) Decision {
		for _, s := range seeds {
			if s.Name == seed {
				return Decision{Seed: seed}
			}
		}
		return Decision{}
	})
	return d.Schedulable()
}

// pass says how run applies steps 1-5.
type pass uint8

const (
	// passFast applies steps 1-5 in one fused pass over the seeds (fused.go),
	// through the seed index (index.go) from minIndexed seeds, and falls back
	// to the ordered steps whenever that pass leaves nothing, so failures are
	// reported exactly as passOrdered reports them.
	passFast pass = iota
	// passOrdered applies every step on its own, in order: the reference
	// passFast is tested against (TestFastPassMatchesOrdered).
	passOrdered
	// passExplain is passOrdered recording why each seed was dropped.
	passExplain
	// passScan and passIndexed are passFast never and always using the index,
	// so tests cover both ways on landscapes of any size.
	passScan
	passIndexed
)

// decider carries one decision's state through the steps.
type decider struct {
	snap    *Snapshot
	shoot   *api.Shoot
	opts    Options
	profile *CloudProfile
	explain bool
	reasons map[string]string

	// bufs are the scratch sets steps fill in turn. Three suffice: a step
	// reads the previous set and writes the next, and zone selection, the only
	// step that may fall back to an earlier set, needs one more.
	bufs *[3][]*Seed
	next int
}

var bufPool = sync.Pool{New: func() any { return new([3][]*Seed) }}

// scratch returns the next empty buffer, with room for every seed.
func (d *decider) scratch() []*Seed {
	if d.bufs == nil {
		return make([]*Seed, 0, len(d.snap.Seeds))
	}
	b := d.bufs[d.next][:0]
	d.next = (d.next + 1) % len(d.bufs)
	return b
}

func (d *decider) release() {
	if d.bufs == nil {
		return
	}
	for i := range d.bufs {
		// Drop seed pointers so old snapshots can be collected. Steps only
		// append (never nil) from the start of a buffer, and every release
		// clears what was used, so the used part ends at the first nil.
		buf := d.bufs[i][:cap(d.bufs[i])]
		if used := slices.Index(buf, nil); used >= 0 {
			buf = buf[:used]
		}
		clear(buf)
		if cap(d.bufs[i]) < len(d.snap.Seeds) {
			d.bufs[i] = make([]*Seed, 0, len(d.snap.Seeds))
		}
	}
	bufPool.Put(d.bufs)
	d.bufs = nil
}

func (d *decider) drop(s *Seed, reason string) {
	if d.explain {
		d.reasons[s.Name] = reason
	}
}

// filter keeps the seeds for which keep is true. why explains a dropped seed
// and is only called when explaining, so the fast path formats nothing. It
// fills a fresh slice so earlier step results stay intact for steps that need
// them (zone selection falls back to them).
func (d *decider) filter(seeds []*Seed, keep func(*Seed) bool, why func(*Seed) string) []*Seed {
	out := d.scratch()
	for _, s := range seeds {
		if keep(s) {
			out = append(out, s)
			continue
		}
		if d.explain {
			d.drop(s, why(s))
		}
	}
	return out
}

// filterBy filters with a check that returns a reason ("" to keep) for filter;
// only for checks whose reason costs nothing in the fast path.
func (d *decider) filterBy(seeds []*Seed, check func(*Seed) string) []*Seed {
	return d.filter(seeds, func(s *Seed) bool { return check(s) == "" }, check)
}

func (d *decider) fail(step Step, format string, args ...any) Decision {
	return Decision{
		Step:    step,
		Message: fmt.Sprintf(format, args...),
		Reasons: d.reasons,
		Total:   len(d.snap.Seeds),
	}
}

func run(snap *Snapshot, shoot *api.Shoot, opts Options, p pass) Decision {
	return runWith(snap, shoot, opts, p, leastUsed)
}

// runWith applies the filters and the strategy, then choose picks from the
// seeds left (never none).
func runWith(snap *Snapshot, shoot *api.Shoot, opts Options, p pass, choose func(*Snapshot, []*Seed) Decision) Decision {
	explain := p == passExplain
	d := &decider{snap: snap, shoot: shoot, opts: opts, explain: explain}
	d.bufs = bufPool.Get().(*[3][]*Seed)
	for i := range d.bufs {
		if cap(d.bufs[i]) < len(snap.Seeds) {
			d.bufs[i] = make([]*Seed, 0, len(snap.Seeds))
		}
	}
	defer d.release()
	if explain {
		d.reasons = make(map[string]string, len(snap.Seeds))
	}
	if opts.NetworkMode == "" {
		d.opts.NetworkMode = Disjoint
	}

	if pool, ok := api.SelfHostedPool(shoot); ok {
		return d.fail(StepSelfHosted, "shoot is self-hosted (worker pool %q has controlPlane): its control plane runs in its own cluster, it is not scheduled to a seed", pool)
	}
	profile, err := resolveCloudProfile(snap, shoot)
	if err != nil {
		return d.fail(StepCloudProfile, "%v", err)
	}
	d.profile = profile

	// Steps 1-5: usable, CloudProfile selector, Shoot selector, provider,
	// zones (or failure tolerance).
	var seeds []*Seed
	if p != passOrdered && p != passExplain {
		seeds = d.fused(p)
	}
	if len(seeds) == 0 {
		var failed Decision
		if seeds, failed = d.ordered(); len(seeds) == 0 {
			return failed
		}
	}

	n := len(seeds)
	keep, why := supportsAccessRestrictions(shoot.Spec.AccessRestrictions)
	seeds = d.filter(seeds, keep, why)
	if len(seeds) == 0 {
		return d.fail(StepAccessRestrictions, "none of the %d seeds supports the access restrictions configured in the shoot specification", n)
	}

	n = len(seeds)
	seeds, err = d.matchDomain(seeds)
	if err != nil {
		return d.fail(StepDomain, "%v", err)
	}
	if len(seeds) == 0 {
		return d.fail(StepDomain, "none of the %d seeds support the domain %q configured in the shoot specification", n, ptr.Deref(shoot.Spec.DNS.Domain, ""))
	}

	n = len(seeds)
	seeds = d.filterBy(seeds, notEmergencyStopped)
	if len(seeds) == 0 {
		return d.fail(StepEmergencyStop, "all of the %d seeds have reconciliations stopped by emergency annotation %s", n, api.AnnotationEmergencyStop)
	}

	n = len(seeds)
	c := candidateCheck{shoot: shoot, nets: newShootNetworks(shoot), mode: d.opts.NetworkMode, snap: snap, exclude: opts.Exclude}
	seeds = d.filter(seeds, c.ok, c.why)
	if len(seeds) == 0 {
		return d.fail(StepCandidates, "0/%d seed cluster candidate(s) are eligible for scheduling", n)
	}

	seeds, err = d.applyStrategy(seeds)
	if err != nil {
		return d.fail(StepStrategy, "%v", err)
	}
	if len(seeds) == 0 {
		return d.fail(StepStrategy, "no matching seed candidate found for Configuration (Cloud Profile '%s', Region '%s', SeedDeterminationStrategy '%s')", profile.Name, shoot.Spec.Region, d.opts.Strategy)
	}
	return choose(snap, seeds)
}

// ordered applies steps 1-5 one after the other. It returns the surviving
// seeds, or none and the unschedulable Decision of the step that left none.
func (d *decider) ordered() ([]*Seed, Decision) {
	snap, shoot, profile := d.snap, d.shoot, d.profile
	seeds := d.filter(snap.Seeds, isUsable, usable)
	if len(seeds) == 0 {
		return nil, d.fail(StepUsable, "none of the %d seeds is valid for scheduling (not deleting, visible and ready)", len(snap.Seeds))
	}

	n := len(seeds)
	if profile.SeedSelector != nil {
		if profile.selectorErr != nil {
			return nil, d.fail(StepCloudProfileSelector, "cloudProfile %q: spec.seedSelector: %v", profile.Name, profile.selectorErr)
		}
		if !profile.selector.Empty() { // a selector with only providerTypes matches every seed
			keep, why := matchesSelector(profile.selector, "CloudProfile")
			seeds = d.filter(seeds, keep, why)
		}
		if len(seeds) == 0 {
			return nil, d.fail(StepCloudProfileSelector, "none out of the %d seeds has the matching labels required by seed selector of 'CloudProfile' (selector: '%s')", n, profile.selector)
		}
	}

	n = len(seeds)
	if sel := shoot.Spec.SeedSelector; sel != nil {
		selector, err := shootSelector(sel)
		if err != nil {
			return nil, d.fail(StepShootSelector, "%v", err)
		}
		if !selector.Empty() {
			keep, why := matchesSelector(selector, "Shoot")
			seeds = d.filter(seeds, keep, why)
		}
		if len(seeds) == 0 {
			return nil, d.fail(StepShootSelector, "none out of the %d seeds has the matching labels required by seed selector of 'Shoot' (selector: '%s')", n, selector)
		}
	}

	n = len(seeds)
	keep, why := providerMatches(shoot.Spec.Provider.Type, profile.ProviderTypes())
	seeds = d.filter(seeds, keep, why)
	if len(seeds) == 0 {
		return nil, d.fail(StepProvider, "none out of the %d seeds has a matching provider for %q", n, shoot.Spec.Provider.Type)
	}

	zonal := failureToleranceZone(shoot)
	if zonal {
		n = len(seeds)
		seeds = d.filterBy(seeds, hasThreeZones)
		if len(seeds) == 0 {
			return nil, d.fail(StepFailureTolerance, "none of the %d seeds has at least 3 zones for hosting a shoot control plane with failure tolerance type 'zone'", n)
		}
	} else {
		n = len(seeds)
		seeds = d.selectZones(seeds)
		if len(seeds) == 0 {
			return nil, d.fail(StepZones, "none of the %d seeds offers the zones the shoot asks for", n)
		}
	}

	return seeds, Decision{}
}

// candidateCheck is step 10: networks, taints and capacity, per seed.
type candidateCheck struct {
	shoot *api.Shoot
	nets  *shootNetworks
	mode  NetworkMode
	snap  *Snapshot
	// exclude are Options.Exclude: treated as full, whatever the usage.
	exclude []string
}

func (c *candidateCheck) ok(s *Seed) bool {
	if len(c.exclude) > 0 && slices.Contains(c.exclude, s.Name) {
		return false
	}
	if c.nets != nil && c.nets.conflicts(s, c.mode) {
		return false
	}
	if !taintsTolerated(s.taints, c.shoot.Spec.Tolerations) {
		return false
	}
	return !s.hasAllocatable || c.snap.usage(s) < s.allocatable
}

func (c *candidateCheck) why(s *Seed) string {
	if slices.Contains(c.exclude, s.Name) {
		return ExcludedReason
	}
	if c.nets != nil {
		if nc := c.nets.conflict(s, c.mode); nc.found() {
			return nc.String()
		}
	}
	if !taintsTolerated(s.taints, c.shoot.Spec.Tolerations) {
		return "shoot does not tolerate the seed's taints"
	}
	return fmt.Sprintf("seed does not have available capacity for shoots (usage %d, allocatable %d)", c.snap.usage(s), s.allocatable)
}

// leastUsed picks the seed with the least usage; seeds come sorted by name, so
// the first minimum is the name-order tie-break.
func leastUsed(snap *Snapshot, seeds []*Seed) Decision {
	best, least := 0, snap.usage(seeds[0])
	for i, s := range seeds[1:] {
		if u := snap.usage(s); u < least {
			best, least = i+1, u
		}
	}
	var tied []string
	for _, s := range seeds[best:] {
		if snap.usage(s) == least {
			tied = append(tied, s.Name)
		}
	}
	return Decision{Seed: seeds[best].Name, Tied: tied, Usage: least, Total: len(snap.Seeds)}
}
