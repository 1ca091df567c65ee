package placement

import (
	"fmt"
	"slices"

	"github.com/seedwarden/seedwarden/internal/api"
)

// filterCandidates is step 10, gardener-scheduler's filterCandidates:
// networks (filter_networks.go), taints (filter_taints.go) and capacity.
func (d *decider) filterCandidates(seeds []*Seed) ([]*Seed, Decision) {
	c := candidateCheck{shoot: d.shoot, nets: newShootNetworks(d.shoot), mode: d.opts.NetworkMode, d: d, exclude: d.opts.Exclude}
	kept := d.filter(seeds, c.ok, c.why)
	if len(kept) == 0 {
		return nil, d.fail(StepCandidates, "", "0/%d seed cluster candidate(s) are eligible for scheduling", len(seeds))
	}
	return kept, Decision{}
}

// candidateCheck is step 10 for one seed.
type candidateCheck struct {
	shoot *api.Shoot
	nets  *shootNetworks
	mode  NetworkMode
	d     *decider // for usage
	// exclude are Options.Exclude: treated as full, whatever the usage.
	exclude []string
}

// ok is the check; the last of it is capacity: usage below
// status.allocatable.shoots, when the seed sets it.
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
	return !s.hasAllocatable || c.d.usage(s) < s.allocatable
}

func (c *candidateCheck) why(s *Seed) (ReasonCode, string) {
	if slices.Contains(c.exclude, s.Name) {
		return SeedFullAcrossReplicas, ExcludedReason
	}
	if c.nets != nil {
		if nc := c.nets.conflict(s, c.mode); nc.found() {
			return nc.code(), nc.String()
		}
	}
	if !taintsTolerated(s.taints, c.shoot.Spec.Tolerations) {
		return TaintNotTolerated, "shoot does not tolerate the seed's taints"
	}
	return SeedFull, fmt.Sprintf("seed does not have available capacity for shoots (usage %d, allocatable %d)", c.d.usage(s), s.allocatable)
}
