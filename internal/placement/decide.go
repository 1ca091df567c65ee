package placement

import (
	"fmt"

	"k8s.io/utils/ptr"

	"github.com/seedwarden/seedwarden/internal/api"
)

// Decide places a Shoot: it runs the steps of Gardener's scheduler in order
// and returns the least-used remaining seed (ties broken by name) or, with
// Options.Scoring, the best-scored one (score.go), or an unschedulable
// Decision naming the step that left no seed.
//
// The fast path records nothing per seed; only when the Shoot turns out to be
// unschedulable is the decision replayed with explanations switched on, so
// scheduled Shoots pay for no strings or maps.
func Decide(snap *Snapshot, shoot *api.Shoot, opts Options) Decision {
	d := run(snap, shoot, opts, fastPath)
	if d.Schedulable() {
		return d
	}
	// Replayed with explanations. Should usage have moved in between and the
	// replay found room, the replay is the more recent truth either way.
	return run(snap, shoot, opts, explainPath)
}

// Admits reports whether seed is among the final candidates Decide would
// choose the least-used (or best-scored) one from: it passes every filter
// and the strategy (which a profile with RegionDistance makes a preference).
// A Shoot announced to a seed (the binding placement mode) is bound there
// as long as this holds, so that other placements shifting the usage in
// between do not move it; the caller discounts the place the Shoot already
// holds from the seed's usage.
func Admits(snap *Snapshot, shoot *api.Shoot, opts Options, seed string) bool {
	d := newDecider(snap, shoot, opts, fastPath)
	defer d.release()
	decision := d.decide(func(_ *Snapshot, seeds []*Seed) Decision {
		for _, s := range seeds {
			if s.Name == seed {
				return Decision{Seed: seed}
			}
		}
		return Decision{}
	})
	return decision.Schedulable()
}

// path says how a decision applies the per-seed steps 1-6.
type path uint8

const (
	// plainPath applies the filters of filters.go one at a time, in order:
	// the specification the fast path is held to.
	plainPath path = iota
	// explainPath is plainPath recording why each seed was dropped, for
	// the explanation of an unschedulable Shoot.
	explainPath
	// fastPath applies steps 1-6 in one pass (fast.go) and falls back to
	// plainPath whenever that pass leaves nothing, so failures are reported
	// exactly as plainPath reports them. The later steps are the plain ones.
	fastPath
)

func run(snap *Snapshot, shoot *api.Shoot, opts Options, p path) Decision {
	d := newDecider(snap, shoot, opts, p)
	defer d.release()
	return d.decide(d.withPreferences(d.chooser()))
}

// chooser is step 12: Gardener's least-used rule, or the scoring profile.
func (d *decider) chooser() func(*Snapshot, []*Seed) Decision {
	if d.opts.Scoring == nil {
		return d.leastUsed
	}
	return d.scoreSeeds
}

// decide checks the Shoot can be placed at all, applies the filters and the
// strategy, then choose picks from the seeds left (never none).
func (d *decider) decide(choose func(*Snapshot, []*Seed) Decision) Decision {
	if p := d.opts.Scoring; p != nil {
		if err := p.Validate(); err != nil {
			return d.fail(StepScoring, ScoringProfileInvalid, "%v", err)
		}
	}
	if p := d.opts.Policies; p != nil && p.err != nil {
		return d.fail(StepPools, PoliciesInvalid, "%v", p.err)
	}
	if failed, ok := d.prepare(); !ok {
		return failed
	}
	// The fast path first tries the seeds the strategy can keep at best
	// (fast_narrow.go); if that leaves none, it decides on every seed.
	if d.path == fastPath && !d.noNarrow {
		d.narrowing = d.narrowRule()
		d.narrow = d.narrowing.on
	}
	seeds, failed := d.filterSteps()
	if len(seeds) == 0 && d.narrow {
		d.narrow = false
		seeds, failed = d.filterSteps()
	}
	if len(seeds) == 0 {
		return failed
	}
	return choose(d.snap, seeds)
}

// filterSteps applies steps 1-11.
func (d *decider) filterSteps() ([]*Seed, Decision) {
	seeds, failed := d.perSeedSteps()
	if len(seeds) == 0 {
		return nil, failed
	}
	later := laterFilters[:]
	if d.narrow && !d.opts.Scoring.has(ScoreRegionDistance) {
		// Narrowed, step 11 keeps every seed left (fast_narrow.go); only
		// the RegionDistance scorer needs what it looks up.
		later = later[:len(later)-1]
	}
	return d.apply(later, seeds)
}

// perSeedSteps applies steps 1-6 by the decider's path. A narrowed fast
// path that leaves nothing returns nothing: decide tries again without.
func (d *decider) perSeedSteps() ([]*Seed, Decision) {
	if d.path == fastPath {
		if seeds := d.fast(); len(seeds) > 0 || d.narrow {
			return seeds, Decision{}
		}
	}
	return d.apply(perSeedFilters[:], d.snap.Seeds)
}

// prepare is what gardener-scheduler does before filtering: it leaves
// self-hosted Shoots alone, resolves the Shoot's cloud profile and looks up
// the Project owning the Shoot's namespace (DetermineSeed fails without
// one). A Snapshot without Projects (nil: tests and tools that do not
// track them) counts every namespace as owned.
func (d *decider) prepare() (Decision, bool) {
	if pool, ok := api.SelfHostedPool(d.shoot); ok {
		return d.fail(StepSelfHosted, ShootSelfHosted, "shoot is self-hosted (worker pool %q has controlPlane): its control plane runs in its own cluster, it is not scheduled to a seed", pool), false
	}
	profile, err := resolveCloudProfile(d.snap, d.shoot)
	if err != nil {
		return d.failErr(StepCloudProfile, CloudProfileNotFound, err), false
	}
	d.profile = profile
	if d.snap.Projects != nil && d.snap.Projects[d.shoot.Namespace] == nil {
		return d.fail(StepProject, ProjectNotFound, "no Project owns namespace %q (spec.namespace)", d.shoot.Namespace), false
	}
	return Decision{}, true
}

// resolveCloudProfile finds the Shoot's profile: spec.cloudProfile (kind
// CloudProfile by default, or a NamespacedCloudProfile in the Shoot's
// namespace) or the deprecated spec.cloudProfileName.
func resolveCloudProfile(snap *Snapshot, shoot *api.Shoot) (*CloudProfile, error) {
	kind, name := api.KindCloudProfile, ptr.Deref(shoot.Spec.CloudProfileName, "")
	if ref := shoot.Spec.CloudProfile; ref != nil {
		name = ref.Name
		if ref.Kind != "" {
			kind = ref.Kind
		}
	}
	if name == "" {
		return nil, &codedError{CloudProfileUnset, fmt.Errorf("spec.cloudProfile.name: the shoot names no cloud profile")}
	}
	switch kind {
	case api.KindCloudProfile:
		if p, ok := snap.CloudProfiles[name]; ok {
			return p, nil
		}
		return nil, fmt.Errorf("spec.cloudProfile: CloudProfile %q not found", name)
	case api.KindNamespacedCloudProfile:
		if p, ok := snap.NamespacedCloudProfiles[shoot.Namespace+"/"+name]; ok {
			return p, nil
		}
		return nil, fmt.Errorf("spec.cloudProfile: NamespacedCloudProfile %q not found in namespace %q", name, shoot.Namespace)
	default:
		return nil, &codedError{CloudProfileKindUnsupported, fmt.Errorf("spec.cloudProfile.kind: unsupported value %q (want %s or %s)", kind, api.KindCloudProfile, api.KindNamespacedCloudProfile)}
	}
}

// leastUsed is step 12, gardener-scheduler's getSeedWithLeastShootsDeployed:
// it picks the seed with the least usage; seeds come sorted by name, so the
// first minimum is the name-order tie-break.
func (d *decider) leastUsed(snap *Snapshot, seeds []*Seed) Decision {
	best, least, n := 0, d.usage(seeds[0]), 1
	for i, s := range seeds[1:] {
		switch u := d.usage(s); {
		case u < least:
			best, least, n = i+1, u, 1
		case u == least:
			n++
		}
	}
	// Sized once: in a balanced landscape most seeds tie. The second pass
	// reads the decision's memo, not the snapshot.
	tied := make([]string, 0, n)
	for _, s := range seeds[best:] {
		if d.usage(s) == least {
			tied = append(tied, s.Name)
		}
	}
	return Decision{Seed: seeds[best].Name, Tied: tied, Usage: least, Total: len(snap.Seeds)}
}
