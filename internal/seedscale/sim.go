package seedscale

import (
	"slices"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/placement"
	"github.com/seedwarden/seedwarden/internal/plan"
	"github.com/seedwarden/seedwarden/internal/seedmanagement"
)

// sim answers "what would the landscape look like with k replicas":
// the set's registered seeds, replicas still starting counted as the
// ready seeds they will become, new replicas modelled on Set.Model, and
// for fewer replicas the seeds the ManagedSeedSet controller would
// delete taken out.
type sim struct {
	in *Input
	// active are the set's seeds that count as replicas (not being
	// deleted), in the snapshot's order.
	active []*placement.Seed
	// starting are active seeds not ready yet and holding nothing: in
	// the simulation they are the ready seeds they will become.
	starting []*api.Seed
	// removable are the active seeds the controller may delete, in the
	// order it deletes them.
	removable []string
	// late are the active seeds not ready, holding nothing and past the
	// provisioning time: they stay not ready in the simulation, no room.
	late []string
	// lateAsked are the replicas asked for (spec.replicas above the
	// registered) past the provisioning time: the first lateAsked new
	// replicas of a simulation are no room either.
	lateAsked int32
}

func newSim(in *Input) *sim {
	s := &sim{in: in}
	members := map[string]bool{}
	for _, name := range in.Set.Seeds {
		members[name] = true
	}
	var replicas []seedmanagement.Replica
	for _, seed := range in.Snapshot.Seeds {
		if !members[seed.Name] || seed.Object.DeletionTimestamp != nil {
			continue
		}
		s.active = append(s.active, seed)
		used := in.Snapshot.Usage != nil && in.Snapshot.Usage(seed) > 0
		switch {
		case seed.Ready() || used:
		case in.Set.Failing != "" || in.lateSeed(seed):
			s.late = append(s.late, seed.Name)
		default:
			s.starting = append(s.starting, s.readyLike(seed.Object))
		}
		replicas = append(replicas, seedmanagement.Replica{
			Name: seed.Name, HasShoots: used, Protected: in.Set.Protected[seed.Name], Ready: seed.Ready(),
		})
	}
	for _, r := range seedmanagement.ScaleInOrder(replicas) {
		s.removable = append(s.removable, r.Name)
	}
	if asked := in.Set.Replicas - s.registered(); asked > 0 && (in.Set.Failing != "" || in.late(in.Set.AskedAt)) {
		s.lateAsked = asked
	}
	return s
}

// readyLike is a starting seed as it will be once ready: its own spec,
// and the model's allocatable when its gardenlet has not reported one.
func (s *sim) readyLike(obj *api.Seed) *api.Seed {
	ready := seedmanagement.Model(obj, obj.Name)
	if _, ok := ready.Status.Allocatable[api.ResourceShoots]; !ok && s.in.Set.Model != nil {
		ready.Status.Allocatable = s.in.Set.Model.Status.Allocatable.DeepCopy()
	}
	return ready
}

// registered is how many replicas the landscape shows.
func (s *sim) registered() int32 { return int32(len(s.active)) }

// floor is the least number of replicas reachable without deleting a seed
// that holds Shoots or is protected.
func (s *sim) floor() int32 { return s.registered() - int32(len(s.removable)) }

// canGrow says whether replicas beyond the registered ones can be modelled.
func (s *sim) canGrow() bool { return s.in.Set.Model != nil }

// outcome is the landscape with k replicas.
type outcome struct {
	k      int32
	report *plan.Report
	view   *plan.View
	// seeds are the set's seed names at k.
	seeds []string
	// added are the seeds the simulation added: starting seeds as the
	// ready seeds they will become (under their own names), new replicas.
	added []*api.Seed
}

// run simulates k replicas (floor <= k; k above the registered ones only
// when canGrow), placing the pending Shoots when placePending.
func (s *sim) run(k int32, placePending bool) (*outcome, error) {
	var ops []plan.Operation
	seeds := make([]string, 0, len(s.active))
	for _, seed := range s.active {
		seeds = append(seeds, seed.Name)
	}
	var added []*api.Seed
	for _, ready := range s.starting {
		ops = append(ops, plan.RemoveSeed{Seed: ready.Name})
		added = append(added, ready)
	}
	// The replicas asked for and late come first: no room, and no seed.
	for i := s.lateAsked; i < k-s.registered(); i++ {
		name := seedmanagement.ReplicaName(s.in.Set.Prefix, s.in.Set.NextOrdinal+i)
		added = append(added, seedmanagement.Model(s.in.Set.Model, name))
		seeds = append(seeds, name)
	}
	if len(added) > 0 {
		ops = append(ops, plan.AddSeeds{Seeds: added})
	}
	for _, name := range s.removable[:max(0, s.registered()-k)] {
		ops = append(ops, plan.RemoveSeed{Seed: name})
		seeds = slices.DeleteFunc(seeds, func(n string) bool { return n == name })
	}
	if placePending && len(s.in.Pending) > 0 {
		ops = append(ops, plan.PlaceShoots{Shoots: s.in.Pending})
	}
	report, view, err := plan.Simulate(s.in.Snapshot, nil, s.in.Options, ops)
	if err != nil {
		return nil, err
	}
	return &outcome{k: k, report: report, view: view, seeds: seeds, added: added}, nil
}

// usage sums the set's Shoots, and the allocatable of those of its seeds
// that set one, at this outcome.
func (o *outcome) usage() (used, allocatable int64) {
	rows := make(map[string]*plan.SeedRow, len(o.report.Seeds))
	for i := range o.report.Seeds {
		rows[o.report.Seeds[i].Name] = &o.report.Seeds[i]
	}
	for _, name := range o.seeds {
		r, ok := rows[name]
		if !ok {
			continue
		}
		used += r.After
		if r.Allocatable != nil {
			allocatable += *r.Allocatable
		}
	}
	return used, allocatable
}
