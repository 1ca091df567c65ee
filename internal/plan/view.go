package plan

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// View is a landscape the plan may change without touching the snapshot it
// started from: usage and per-project counts are copied (usage once, per
// project on first write), seeds may be added, removed or cordoned.
type View struct {
	base *placement.Snapshot
	// all are the plan's seeds, sorted by name: what the report lists.
	all []*placement.Seed
	// usage is each seed's usage as the snapshot's Usage gave it when the
	// view was made, moved by the plan since.
	usage map[*placement.Seed]int64
	// spread holds the project counts the plan wrote (namespace -> seed ->
	// Shoots), copied from base.ProjectShoots on first write.
	spread map[string]map[string]int64
	// cordoned are seeds that take no Shoots (drained), with the reason.
	cordoned map[string]string
	// onSeed lists, by seed name, the Shoots whose spec.seedName it is, in
	// no order: what a drain moves (in its own order).
	onSeed map[string][]*api.Shoot
	// leaving lists, by seed name, the Shoots charged to it by
	// status.seedName while spec.seedName names another, in no order: their
	// migration is under way, so no drain moves them, they stay charged, and
	// the seed cannot go before they have left.
	leaving map[string][]*api.Shoot
	// snap is what decisions see: base with the view's seeds (cordoned
	// ones left out), usage and project counts.
	snap placement.Snapshot
}

// NewView starts a view of snap, whose Usage it reads once per seed.
// shoots are the landscape's Shoots (those on a seed can be drained); they
// must be the ones snap's usage counts, and are not modified.
func NewView(snap *placement.Snapshot, shoots []*api.Shoot) *View {
	v := &View{
		base:     snap,
		all:      slices.Clone(snap.Seeds),
		usage:    make(map[*placement.Seed]int64, len(snap.Seeds)),
		spread:   map[string]map[string]int64{},
		cordoned: map[string]string{},
		onSeed:   map[string][]*api.Shoot{},
		leaving:  map[string][]*api.Shoot{},
	}
	for _, s := range v.all {
		if snap.Usage != nil {
			v.usage[s] = snap.Usage(s)
		}
	}
	for _, sh := range shoots {
		seed, away := placement.ChargedSeeds(sh)
		if seed != "" {
			v.onSeed[seed] = append(v.onSeed[seed], sh)
		}
		if away != "" {
			v.leaving[away] = append(v.leaving[away], sh)
		}
	}
	v.snap = *snap
	v.snap.Usage = func(s *placement.Seed) int64 { return v.usage[s] }
	v.snap.ProjectShoots = v.projectShoots
	v.refresh()
	return v
}

// compareShoots orders Shoots by namespace, then name.
func compareShoots(a, b *api.Shoot) int {
	return cmp.Or(strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
}

// refresh rebuilds the seeds decisions see after seeds were added, removed
// or cordoned.
func (v *View) refresh() {
	if len(v.cordoned) == 0 {
		v.snap.Seeds = v.all
		return
	}
	v.snap.Seeds = slices.DeleteFunc(slices.Clone(v.all), func(s *placement.Seed) bool {
		_, ok := v.cordoned[s.Name]
		return ok
	})
}

// Snapshot is the landscape decisions see now. It is valid until the view
// changes next.
func (v *View) Snapshot() *placement.Snapshot { return &v.snap }

// Seed returns the seed of that name.
func (v *View) Seed(name string) (*placement.Seed, bool) {
	i, ok := slices.BinarySearchFunc(v.all, name, func(s *placement.Seed, n string) int { return strings.Compare(s.Name, n) })
	if !ok {
		return nil, false
	}
	return v.all[i], true
}

// Cordoned says why the seed takes no Shoots, or "": drained by the plan,
// or cordoned in the landscape (a SeedDrain of it, placement.Seed's
// cordon), which decisions already leave out at step Usable.
func (v *View) Cordoned(name string) string {
	if why := v.cordoned[name]; why != "" {
		return why
	}
	if s, ok := v.Seed(name); ok {
		return s.Cordoned()
	}
	return ""
}

func (v *View) projectShoots(namespace string) map[string]int64 {
	if m, ok := v.spread[namespace]; ok {
		return m
	}
	if v.base.ProjectShoots == nil {
		return nil
	}
	return v.base.ProjectShoots(namespace)
}

// charge moves one Shoot of namespace onto seed (delta 1) or off it (-1).
func (v *View) charge(namespace string, seed *placement.Seed, delta int64) {
	v.usage[seed] += delta
	m, ok := v.spread[namespace]
	if !ok {
		m = maps.Clone(v.projectShoots(namespace))
		if m == nil {
			m = map[string]int64{}
		}
		v.spread[namespace] = m
	}
	m[seed.Name] += delta
}

// cordon keeps the seed from taking Shoots from now on.
func (v *View) cordon(name, reason string) {
	v.cordoned[name] = reason
	v.refresh()
}

// addSeed adds a seed that holds no Shoots; the name must be new.
func (v *View) addSeed(s *placement.Seed) {
	i, _ := slices.BinarySearchFunc(v.all, s.Name, func(x *placement.Seed, n string) int { return strings.Compare(x.Name, n) })
	v.all = slices.Insert(v.all, i, s)
	v.usage[s] = 0
	v.refresh()
}

// removeSeed takes the seed out of the view and returns the Shoots still
// on it (spec.seedName) and those whose control plane is still migrating
// away from it (status.seedName): a seed removed under a migration takes
// the control plane the migration has not yet moved with it.
func (v *View) removeSeed(s *placement.Seed) (on, leaving []*api.Shoot) {
	v.all = slices.DeleteFunc(slices.Clone(v.all), func(x *placement.Seed) bool { return x == s })
	delete(v.usage, s)
	delete(v.cordoned, s.Name)
	on, leaving = v.onSeed[s.Name], v.leaving[s.Name]
	delete(v.onSeed, s.Name)
	delete(v.leaving, s.Name)
	v.refresh()
	return on, leaving
}

// place records a Shoot on seed: counted, and listed for a later drain.
func (v *View) place(shoot *api.Shoot, seed *placement.Seed) {
	v.charge(shoot.Namespace, seed, 1)
	v.onSeed[seed.Name] = append(v.onSeed[seed.Name], shoot)
}

// unplace takes a Shoot off seed: uncounted and off its list.
func (v *View) unplace(shoot *api.Shoot, seed *placement.Seed) {
	v.charge(shoot.Namespace, seed, -1)
	v.onSeed[seed.Name] = slices.DeleteFunc(v.onSeed[seed.Name], func(s *api.Shoot) bool { return s == shoot })
}
