package plan

import (
	"cmp"
	"slices"

	"github.com/seedwarden/seedwarden/internal/placement"
)

// SeedRow is one seed before and after the plan.
type SeedRow struct {
	Name     string `json:"name"`
	Provider string `json:"provider"`
	Region   string `json:"region"`
	// Before and After are the seed's usage (Shoots charged to it, a
	// migrating one on both seeds, plus reservations the snapshot held).
	Before int64 `json:"before"`
	After  int64 `json:"after"`
	// Allocatable is status.allocatable.shoots; nil when the seed sets none.
	Allocatable *int64 `json:"allocatable,omitempty"`
	// SoftLimit is the seed's soft limit (placement policies: a seed at or
	// past it takes a Shoot only when every seed that admits it is);
	// nil when it has none.
	SoftLimit *int64 `json:"softLimit,omitempty"`
	// Utilization is After / Allocatable; nil without Allocatable.
	Utilization *float64 `json:"utilization,omitempty"`
	// MigratingAway counts the Shoots in After whose control plane is
	// migrating away from the seed (status.seedName is this seed,
	// spec.seedName another): no drain moves them, they leave when their
	// migration completes. A drained seed keeps them.
	MigratingAway int64 `json:"migratingAway,omitempty"`
	// Stranded counts, for a removed seed, the Shoots the removal
	// stranded (Report.Stranded): those still on it and those still
	// migrating away from it.
	Stranded int64 `json:"stranded,omitempty"`
	// State is "added", "removed" or "drained"; empty otherwise.
	State string `json:"state,omitempty"`
}

// Seed states in a SeedRow.
const (
	StateAdded   = "added"
	StateRemoved = "removed"
	StateDrained = "drained"
)

// GroupRow is the free room of one provider and region.
type GroupRow struct {
	Provider string `json:"provider"`
	Region   string `json:"region"`
	// Seeds counts the group's seeds after the plan.
	Seeds int `json:"seeds"`
	// FreeBefore and FreeAfter sum allocatable minus usage over the seeds
	// that set allocatable and take Shoots (a drained seed offers none).
	FreeBefore int64 `json:"freeBefore"`
	FreeAfter  int64 `json:"freeAfter"`
	// Unlimited counts the group's seeds without allocatable after the
	// plan: room the free counts cannot express.
	Unlimited int `json:"unlimited,omitempty"`
}

// summarise builds the report's tables: before is the usage of the seeds
// the plan started with, stranded the Shoots removed seeds left.
func summarise(v *View, before map[string]int64, stranded []Stranded, policies *placement.Policies) ([]SeedRow, []GroupRow) {
	left := map[string]int64{}
	for _, s := range stranded {
		left[s.Seed]++
	}
	t := tables{groups: map[[2]string]*GroupRow{}, policies: policies}
	after := map[string]bool{}
	for _, s := range v.all {
		after[s.Name] = true
		t.addSeed(v, s, before)
	}
	for _, s := range v.base.Seeds {
		if !after[s.Name] {
			t.addRemoved(s, before[s.Name], left[s.Name])
		}
	}
	slices.SortFunc(t.rows, func(a, b SeedRow) int { return cmp.Compare(a.Name, b.Name) })
	out := make([]GroupRow, 0, len(t.groups))
	for _, g := range t.groups {
		out = append(out, *g)
	}
	slices.SortFunc(out, func(a, b GroupRow) int {
		return cmp.Or(cmp.Compare(a.Provider, b.Provider), cmp.Compare(a.Region, b.Region))
	})
	return t.rows, out
}

// tables collects the report's rows while summarise walks the seeds.
type tables struct {
	rows     []SeedRow
	groups   map[[2]string]*GroupRow
	policies *placement.Policies
}

func (t *tables) group(provider, region string) *GroupRow {
	k := [2]string{provider, region}
	if t.groups[k] == nil {
		t.groups[k] = &GroupRow{Provider: provider, Region: region}
	}
	return t.groups[k]
}

// addSeed adds a seed of the plan's end: its row and its free room.
func (t *tables) addSeed(v *View, s *placement.Seed, before map[string]int64) {
	row := SeedRow{Name: s.Name, Provider: s.Object.Spec.Provider.Type, Region: s.Object.Spec.Provider.Region, After: v.usage[s],
		MigratingAway: int64(len(v.leaving[s.Name]))}
	b, existed := before[s.Name]
	row.Before = b
	switch {
	case !existed:
		row.State = StateAdded
	case v.Cordoned(s.Name) != "":
		row.State = StateDrained
	}
	g := t.group(row.Provider, row.Region)
	g.Seeds++
	if soft, ok := t.policies.SoftLimit(s); ok {
		row.SoftLimit = &soft
	}
	if alloc, ok := s.Allocatable(); ok {
		row.Allocatable = &alloc
		if alloc > 0 {
			u := float64(row.After) / float64(alloc)
			row.Utilization = &u
		}
		if existed {
			g.FreeBefore += max(0, alloc-b)
		}
		if row.State != StateDrained {
			g.FreeAfter += max(0, alloc-row.After)
		}
	} else {
		g.Unlimited++
	}
	t.rows = append(t.rows, row)
}

// addRemoved adds a seed the plan removed: its row and its room before.
func (t *tables) addRemoved(s *placement.Seed, before, stranded int64) {
	row := SeedRow{Name: s.Name, Provider: s.Object.Spec.Provider.Type, Region: s.Object.Spec.Provider.Region, Before: before,
		Stranded: stranded, State: StateRemoved}
	g := t.group(row.Provider, row.Region)
	if alloc, ok := s.Allocatable(); ok {
		row.Allocatable = &alloc
		g.FreeBefore += max(0, alloc-row.Before)
	}
	t.rows = append(t.rows, row)
}
