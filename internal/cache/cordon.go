package cache

import (
	"slices"
	"strings"

	"github.com/seedwarden/seedwarden/internal/operationsapi"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// A SeedDrain cordons its seed while it exists (a dry run does not): the
// Store publishes that seed with placement's cordon, so the mutating
// webhook, the retry controller, headroom and every command built on a
// Store (plan, simulate) keep new Shoots off it with one rule. With no
// SeedDrain the landscape is the one Gardener's scheduler sees.

const kindSeedDrain = "SeedDrain"

// CordonReason is why a seed with SeedDrains takes no new Shoots; names
// are the SeedDrains, sorted.
func CordonReason(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return "seed is being drained (SeedDrain " + strings.Join(names, ", ") + ")"
}

func (s *Store) applySeedDrain(d *operationsapi.SeedDrain) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.changedLocked(objectKey{kind: kindSeedDrain, name: d.Name}, d.ResourceVersion) {
		return
	}
	old, had := s.drains[d.Name]
	seed := ""
	if d.Cordons() {
		seed = d.Spec.SeedName
	}
	if had && old == seed {
		return
	}
	if seed == "" {
		delete(s.drains, d.Name)
	} else {
		s.drains[d.Name] = seed
	}
	s.recordonLocked(old, seed)
}

func (s *Store) removeSeedDrain(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forgetLocked(objectKey{kind: kindSeedDrain, name: name})
	old, had := s.drains[name]
	if !had {
		return
	}
	delete(s.drains, name)
	s.recordonLocked(old)
}

// cordonLocked is the cordon reason of a seed ("" for none).
func (s *Store) cordonLocked(seed string) string {
	var names []string
	for name, sd := range s.drains {
		if sd == seed {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return CordonReason(names)
}

// recordonLocked publishes the named seeds (those the landscape holds)
// again with their cordon as the drains now say.
func (s *Store) recordonLocked(seeds ...string) {
	n := (*landscape)(nil)
	for _, name := range seeds {
		if name == "" {
			continue
		}
		cur, ok := s.land.Load().seeds[name]
		if n != nil {
			cur, ok = n.seeds[name]
		}
		reason := s.cordonLocked(name)
		if !ok || cur.Cordoned() == reason {
			continue
		}
		if n == nil {
			n = s.land.Load().clone()
		}
		s.putSeed(n, cur.WithCordon(reason))
	}
	if n != nil {
		s.publish(n)
	}
}

// putSeed puts sd into the landscape n (not yet published), replacing the
// seed of its name.
func (s *Store) putSeed(n *landscape, sd *placement.Seed) {
	n.snap.Seeds = upsertSorted(n.snap.Seeds, sd, func(x *placement.Seed) string { return x.Name })
	n.seeds = cloneMapWith(n.seeds, sd.Name, sd)
	n.counters = cloneMapWith(n.counters, sd.Name, s.counterLocked(sd.Name))
}

// Cordoned says why a seed takes no new Shoots ("" when it may).
func (s *Store) Cordoned(seed string) string {
	if sd, ok := s.Seed(seed); ok {
		return sd.Cordoned()
	}
	return ""
}
