package autoscaleplan

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/autoscalingapi"
	"github.com/seedwarden/seedwarden/internal/landscape"
	"github.com/seedwarden/seedwarden/internal/placement"
	"github.com/seedwarden/seedwarden/internal/seedmanagement"
	"github.com/seedwarden/seedwarden/internal/seedscale"
)

// BehaviorNotApplied is the report's note on behavior: it needs the
// recommendations of the past, which a landscape read once does not have.
const BehaviorNotApplied = "not applied: offline there is no history of recommendations and scales, so no stabilization window or step limit bounds the change; the controller applies them"

// Report is the recommendation for each SeedAutoscaler, in
// namespace/name order.
type Report struct {
	// Behavior says that behavior was not applied, and why.
	Behavior    string  `json:"behavior"`
	Autoscalers []Entry `json:"autoscalers"`
}

// Entry is one SeedAutoscaler's recommendation.
type Entry struct {
	// Autoscaler is the SeedAutoscaler's namespace/name.
	Autoscaler  string `json:"autoscaler"`
	MinReplicas int32  `json:"minReplicas"`
	MaxReplicas int32  `json:"maxReplicas"`
	seedscale.Recommendation
	// ScaleIn is the replica the controller would drain to scale in, or
	// why none (seedscale.ChooseScaleIn).
	ScaleIn seedscale.ScaleInChoice `json:"scaleIn"`
}

// Met says whether every metric of the entry meets its target at the
// recommended replicas.
func (e Entry) Met() bool {
	if e.Short {
		return false
	}
	for _, m := range e.Metrics {
		if !m.Met {
			return false
		}
	}
	return true
}

// Complete says whether every SeedAutoscaler's targets are met.
func (r *Report) Complete() bool {
	for _, e := range r.Autoscalers {
		if !e.Met() {
			return false
		}
	}
	return true
}

// Input is the landscape and what to recommend for.
type Input struct {
	Snapshot *placement.Snapshot
	// Shoots are the landscape's Shoots: the pending among them are placed
	// in the simulation, and the replicas' own mark protected seeds.
	Shoots      []*api.Shoot
	Options     placement.Options
	Autoscalers []*autoscalingapi.SeedAutoscaler
	Sets        []*seedmanagement.ManagedSeedSet
	// Profiles are the headroom profiles by name.
	Profiles map[string]*api.Shoot
	// Scheduler is the scheduler name whose unplaced Shoots are pending.
	Scheduler string
	// Hold says why no drain may move a Shoot now (opted out, moved by a
	// drain recently), "" when one may; nil: none is held.
	Hold func(*api.Shoot) string
	// Budget, when set, gives each SeedAutoscaler's recommendation its
	// seedscale.Input.Stop (a fresh deadline each), so that a run always
	// ends.
	Budget func() func() error
}

// Run recommends replicas for each SeedAutoscaler, all decided together
// as the controller decides them (seedscale.DecideFleet: one decision
// across all sets). A SeedAutoscaler whose ManagedSeedSet is not among the
// sets is an error naming both.
func Run(in Input) (*Report, error) {
	sets := map[string]*seedmanagement.ManagedSeedSet{}
	for _, s := range in.Sets {
		sets[s.Namespace+"/"+s.Name] = s
	}
	pending := seedscale.Pending(in.Shoots, in.Scheduler)
	autoscalers := slices.SortedFunc(slices.Values(in.Autoscalers), func(a, b *autoscalingapi.SeedAutoscaler) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	fleet := make([]seedscale.FleetSet, 0, len(autoscalers))
	for i, sa := range autoscalers {
		if i > 0 && sa.Namespace == autoscalers[i-1].Namespace && sa.Name == autoscalers[i-1].Name {
			return nil, fmt.Errorf("SeedAutoscaler %s/%s: given twice", sa.Namespace, sa.Name)
		}
		sin, err := input(in, sa, sets, pending)
		if err != nil {
			return nil, fmt.Errorf("SeedAutoscaler %s/%s: %w", sa.Namespace, sa.Name, err)
		}
		fleet = append(fleet, seedscale.FleetSet{Autoscaler: sa.Namespace + "/" + sa.Name, Priority: sa.Spec.Priority, DryRun: sa.Spec.DryRun, Input: sin})
	}
	r := &Report{Behavior: BehaviorNotApplied, Autoscalers: []Entry{}}
	for i, fe := range seedscale.DecideFleet(fleet) {
		sa := autoscalers[i]
		if fe.Err != nil {
			return nil, fmt.Errorf("SeedAutoscaler %s/%s: %w", sa.Namespace, sa.Name, fe.Err)
		}
		e, err := entry(in, sa, fleet[i].Input, fe.Recommendation)
		if err != nil {
			return nil, fmt.Errorf("SeedAutoscaler %s/%s: %w", sa.Namespace, sa.Name, err)
		}
		r.Autoscalers = append(r.Autoscalers, e)
	}
	return r, nil
}

// input is what seedscale reads for one SeedAutoscaler.
func input(in Input, sa *autoscalingapi.SeedAutoscaler, sets map[string]*seedmanagement.ManagedSeedSet, pending []*api.Shoot) (seedscale.Input, error) {
	key := sa.Namespace + "/" + sa.Spec.ScaleTargetRef.Name
	mss, ok := sets[key]
	if !ok {
		return seedscale.Input{}, fmt.Errorf("no ManagedSeedSet %s", key)
	}
	set, err := seedscale.NewSet(mss, in.Snapshot, seedscale.Protected(mss.Namespace, in.Shoots))
	if err != nil {
		return seedscale.Input{}, err
	}
	var stop func() error
	if in.Budget != nil {
		stop = in.Budget()
	}
	return seedscale.Input{
		Snapshot:    in.Snapshot,
		Pending:     pending,
		Options:     in.Options,
		Set:         set,
		Spec:        &sa.Spec,
		Profiles:    in.Profiles,
		DecodeShoot: landscape.DecodeShoot,
		Stop:        stop,
	}, nil
}

// entry is one SeedAutoscaler's part of the report: its recommendation and
// the scale-in it would choose.
func entry(in Input, sa *autoscalingapi.SeedAutoscaler, sin seedscale.Input, rec seedscale.Recommendation) (Entry, error) {
	choice, err := seedscale.ChooseScaleIn(sin, rec, seedscale.ScaleIn{Shoots: in.Shoots, Hold: in.Hold})
	if err != nil {
		return Entry{}, fmt.Errorf("scale-in: %w", err)
	}
	e := Entry{Autoscaler: sa.Namespace + "/" + sa.Name, MaxReplicas: sa.Spec.MaxReplicas, MinReplicas: sa.Spec.MinReplicasOrDefault(),
		Recommendation: rec, ScaleIn: choice}
	if e.Metrics == nil {
		e.Metrics = []seedscale.MetricResult{}
	}
	return e, nil
}
