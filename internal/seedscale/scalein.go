package seedscale

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/placement"
	"github.com/seedwarden/seedwarden/internal/plan"
	"github.com/seedwarden/seedwarden/internal/seedmanagement"
)

// Scale-in by drain. A ManagedSeedSet deletes only replicas that hold no
// Shoots, and least-used placement spreads Shoots over every seed, so a
// set whose targets would hold with one seed fewer rarely has an empty one
// to give. ChooseScaleIn picks the replica cheapest to empty: the one whose
// Shoots a drain can move (plan's drain, Gardener's migration rules) with
// every target still holding at one replica fewer, the fewest Shoots
// first, and among equals the one Gardener's ManagedSeedSet deletes first
// (seedmanagement.ScaleInOrder: a seed that is not ready, then the lowest
// ordinal), so that once it is empty the lowered replicas delete it.

// ScaleIn is what a scale-in choice reads besides the recommendation's
// Input.
type ScaleIn struct {
	// Shoots are the landscape's Shoots (those on the set's seeds at
	// least): what a drain would move.
	Shoots []*api.Shoot
	// Hold says why no drain may move this Shoot now ("" when one may): it
	// opted out of drains, or a drain moved it recently. A replica holding
	// such a Shoot is not chosen. Nil: none is held.
	Hold func(*api.Shoot) string
	// MaxShoots is the most Shoots one scale-in drains (the drain's
	// budget); 0 means no limit.
	MaxShoots int
	// Avoid are replicas not to choose, with why (a drain of theirs got
	// stuck, say).
	Avoid map[string]string
	// Draining is the replica a scale-in drains already, "" for none: it
	// is tried first, and its Shoots already migrating away from it do not
	// count against it.
	Draining string
}

// ScaleInPlan is the chosen replica and where its Shoots go.
type ScaleInPlan struct {
	// Replica is the seed to empty.
	Replica string `json:"replica"`
	// Shoots counts the Shoots to move (those already migrating away from
	// it not included).
	Shoots int `json:"shoots"`
	// Replicas is the set's replicas once the replica is empty and gone.
	Replicas int32 `json:"replicas"`
	// Moves are each Shoot's destination, in the drain's order.
	Moves []plan.Placed `json:"moves"`
}

// ScaleInCandidate is one replica considered, and why it was not chosen.
type ScaleInCandidate struct {
	Replica string `json:"replica"`
	Shoots  int    `json:"shoots"`
	// Blocked says why the replica cannot be emptied for scale-in; empty
	// for the chosen one and for those not tried (a cheaper one was
	// chosen first).
	Blocked string `json:"blocked,omitempty"`
}

// ScaleInChoice is ChooseScaleIn's answer: a plan, or why there is none.
type ScaleInChoice struct {
	// Plan is nil when no replica is to be emptied.
	Plan *ScaleInPlan `json:"plan,omitempty"`
	// Why says, without a plan, why not.
	Why string `json:"why,omitempty"`
	// Candidates are the replicas considered, in the order tried.
	Candidates []ScaleInCandidate `json:"candidates,omitempty"`
}

// ChooseScaleIn says which replica of the set to empty for a scale-in, if
// any: only when rec (Recommend on in) keeps the replicas where they are
// because every replica holds Shoots or is protected (Desired is the
// floor, the floor every registered replica, no replica on its way), every
// target holds and no pending Shoot is left, and one replica fewer stays
// within minReplicas. A replica with fewer Shoots is preferred; one is
// chosen only when the plan's drain moves all of its Shoots and every
// target of the set still holds without it, the pending Shoots placed.
func ChooseScaleIn(in Input, rec Recommendation, si ScaleIn) (ScaleInChoice, error) {
	ms, err := metricsOf(&in)
	if err != nil {
		return ScaleInChoice{}, err
	}
	in.Pending = poolPending(&in, ms)
	s := newSim(&in)
	if why := scaleInBlocked(&in, rec, s); why != "" {
		return ScaleInChoice{Why: why}, nil
	}
	r := &recommender{in: &in, sim: s, metrics: ms}
	cands := candidates(&in, s, si)
	out := ScaleInChoice{Candidates: make([]ScaleInCandidate, 0, len(cands))}
	for _, c := range cands {
		if out.Plan != nil {
			out.Candidates = append(out.Candidates, ScaleInCandidate{Replica: c.name, Shoots: len(c.shoots)})
			continue
		}
		p, blocked, err := r.tryScaleIn(c, si)
		if err != nil {
			return ScaleInChoice{}, err
		}
		out.Candidates = append(out.Candidates, ScaleInCandidate{Replica: c.name, Shoots: len(c.shoots), Blocked: blocked})
		out.Plan = p
	}
	if out.Plan == nil {
		out.Why = "no replica can be emptied: each one's reason is listed"
	}
	return out, nil
}

// ScaleInBlocked says why the set is not one to scale in by draining
// (ChooseScaleIn would choose nothing for it), or "": cheap, asked before
// the Shoots a choice needs are read.
func ScaleInBlocked(in Input, rec Recommendation) string {
	return scaleInBlocked(&in, rec, newSim(&in))
}

// scaleInBlocked says why the set is not one to scale in by draining, or
// "".
func scaleInBlocked(in *Input, rec Recommendation, s *sim) string {
	registered := s.registered()
	switch {
	case rec.Short || rec.PendingUnplaced > 0:
		return "the targets need more seeds, not fewer"
	case rec.Desired < rec.Current:
		return "the set scales in without a drain: a replica without Shoots can go"
	case rec.Desired > rec.Floor:
		return fmt.Sprintf("the targets need %d replicas", rec.Desired)
	case rec.Current != registered:
		return fmt.Sprintf("spec.replicas is %d and %d replicas are registered: a change is under way", rec.Current, registered)
	case s.floor() != registered:
		return "a replica without Shoots can go without a drain"
	case registered-1 < in.Spec.MinReplicasOrDefault():
		return fmt.Sprintf("at minReplicas %d", in.Spec.MinReplicasOrDefault())
	}
	return ""
}

// candidate is a replica with the Shoots a drain of it would move.
type candidate struct {
	name      string
	shoots    []*api.Shoot
	protected bool
	ready     bool
}

// candidates are the set's active replicas in the order they are tried:
// the one being drained first, then the fewest Shoots, then Gardener's
// scale-in order (not ready first, then the lowest ordinal).
func candidates(in *Input, s *sim, si ScaleIn) []candidate {
	byName := make(map[string]*candidate, len(s.active))
	out := make([]candidate, 0, len(s.active))
	for _, seed := range s.active {
		out = append(out, candidate{name: seed.Name, protected: in.Set.Protected[seed.Name], ready: seed.Ready()})
	}
	for i := range out {
		byName[out[i].name] = &out[i]
	}
	for _, sh := range si.Shoots {
		spec, _ := placement.ChargedSeeds(sh)
		if c := byName[spec]; c != nil {
			c.shoots = append(c.shoots, sh)
		}
	}
	slices.SortStableFunc(out, func(a, b candidate) int {
		if (a.name == si.Draining) != (b.name == si.Draining) {
			if a.name == si.Draining {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(len(a.shoots), len(b.shoots)); c != 0 {
			return c
		}
		if a.ready != b.ready {
			if a.ready {
				return 1
			}
			return -1
		}
		return cmp.Compare(seedmanagement.Ordinal(a.name), seedmanagement.Ordinal(b.name))
	})
	return out
}

// tryScaleIn drains c in a plan and checks the targets without it: a plan
// when they hold, or why not.
func (r *recommender) tryScaleIn(c candidate, si ScaleIn) (*ScaleInPlan, string, error) {
	if why := held(c, si); why != "" {
		return nil, why, nil
	}
	o, err := r.runWithout(c, si.Shoots)
	if err != nil {
		return nil, "", err
	}
	for _, u := range o.report.Unplaced {
		if u.From == c.name {
			return nil, fmt.Sprintf("the drain finds no seed for Shoot %s: %s", u.Shoot, u.Message), nil
		}
	}
	for _, st := range o.report.Stranded {
		// A Shoot migrating away from the replica being drained leaves
		// when its migration completes; from any other, a migration not
		// of the drain's making is under way.
		if st.MigratingTo == "" || c.name != si.Draining {
			return nil, fmt.Sprintf("Shoot %s would be stranded: its control plane is migrating", st.Shoot), nil
		}
	}
	if len(o.report.Unplaced) > 0 {
		return nil, fmt.Sprintf("without it %d pending Shoots find no seed", len(o.report.Unplaced)), nil
	}
	for i := range r.metrics {
		v, err := r.read(&r.metrics[i], o)
		if err != nil {
			return nil, "", err
		}
		if !v.met {
			return nil, fmt.Sprintf("without it %s does not hold (%s)", r.metrics[i].target(), v.text), nil
		}
	}
	p := &ScaleInPlan{Replica: c.name, Replicas: o.k}
	for _, pl := range o.report.Placed {
		if pl.From == c.name {
			p.Moves = append(p.Moves, plan.Placed{Shoot: pl.Shoot, From: pl.From, To: pl.To})
		}
	}
	p.Shoots = len(p.Moves)
	return p, "", nil
}

// held says why c cannot be drained at all, before any plan, or "".
func held(c candidate, si ScaleIn) string {
	if why := si.Avoid[c.name]; why != "" {
		return why
	}
	switch {
	case c.protected:
		return "protected from deletion (" + seedmanagement.AnnotationProtectFromDeletion + ")"
	case si.MaxShoots > 0 && len(c.shoots) > si.MaxShoots:
		return fmt.Sprintf("%d Shoots, more than the %d one scale-in drains", len(c.shoots), si.MaxShoots)
	}
	if si.Hold == nil {
		return ""
	}
	for _, sh := range slices.SortedFunc(slices.Values(c.shoots), func(a, b *api.Shoot) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	}) {
		if why := si.Hold(sh); why != "" {
			return fmt.Sprintf("Shoot %s/%s cannot move: %s", sh.Namespace, sh.Name, why)
		}
	}
	return ""
}

// runWithout is the landscape with c drained and removed, replicas still
// starting counted as the ready seeds they will become, and the pending
// Shoots placed: the set at one replica fewer. One step.
func (r *recommender) runWithout(c candidate, shoots []*api.Shoot) (*outcome, error) {
	if err := r.step(); err != nil {
		return nil, err
	}
	s := r.sim
	var ops []plan.Operation
	var added []*api.Seed
	for _, ready := range s.starting {
		ops = append(ops, plan.RemoveSeed{Seed: ready.Name})
		added = append(added, ready)
	}
	if len(added) > 0 {
		ops = append(ops, plan.AddSeeds{Seeds: added})
	}
	ops = append(ops, plan.Drain{Seed: c.name}, plan.RemoveSeed{Seed: c.name})
	if len(r.in.Pending) > 0 {
		ops = append(ops, plan.PlaceShoots{Shoots: r.in.Pending})
	}
	report, view, err := plan.Simulate(r.in.Snapshot, shoots, r.in.Options, ops)
	if err != nil {
		return nil, err
	}
	seeds := make([]string, 0, len(s.active))
	for _, seed := range s.active {
		if seed.Name != c.name {
			seeds = append(seeds, seed.Name)
		}
	}
	return &outcome{k: s.registered() - 1, report: report, view: view, seeds: seeds}, nil
}
