package plan

import (
	"cmp"
	"fmt"
	"slices"

	"k8s.io/utils/ptr"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// Operation is one step of a plan; Run applies them in order.
type Operation interface {
	apply(p *planner) error
}

// Drain moves every Shoot whose spec.seedName is Seed elsewhere, one by
// one in namespace/name order (drain.go), and keeps the seed from taking
// Shoots for the rest of the plan.
type Drain struct{ Seed string }

// RemoveSeed takes a seed out of the landscape. Shoots still on it are
// reported as stranded, not moved: drain it first to move them. So are the
// Shoots whose control plane is still migrating away from it (status.seedName
// the seed, spec.seedName another): no drain moves them, and the seed can go
// only once their migration has completed.
type RemoveSeed struct{ Seed string }

// AddSeeds adds seeds that hold no Shoots yet. A seed given without
// lastOperation and conditions is taken as ready (assumeReady); one with
// either counts as its status says.
type AddSeeds struct{ Seeds []*api.Seed }

// assumeReady is obj as its gardenlet would report it once up: a planned
// seed does not exist yet, and one written without a status would
// otherwise be not ready, take nothing and answer "a new seed would not
// help" for the wrong reason. A status written on purpose (a seed planned
// unready) is kept.
func assumeReady(obj *api.Seed) *api.Seed {
	if obj.Status.LastOperation != nil || len(obj.Status.Conditions) > 0 {
		return obj
	}
	obj = obj.DeepCopy()
	obj.Status.LastOperation = &api.LastOperation{Type: "Reconcile", State: "Succeeded"}
	obj.Status.Conditions = []api.Condition{{Type: api.ConditionGardenletReady, Status: api.ConditionTrue}}
	if obj.Spec.Backup != nil {
		obj.Status.Conditions = append(obj.Status.Conditions, api.Condition{Type: api.ConditionBackupBucketsReady, Status: api.ConditionTrue})
	}
	return obj
}

// PlaceShoots places Shoots as they are, in order, each counted before the
// next is decided: Shoots awaiting a seed, say.
type PlaceShoots struct{ Shoots []*api.Shoot }

// AddShoots places Count copies of Like in sequence, each counted before the
// next is decided. Copy k (from 1) is named after Like's name (or
// generateName) with "-k" appended.
type AddShoots struct {
	Like  *api.Shoot
	Count int
}

// Report is what a plan did.
type Report struct {
	// Seeds are every seed before or after, sorted by name.
	Seeds []SeedRow `json:"seeds"`
	// Groups are the free slots per provider and region, sorted.
	Groups []GroupRow `json:"groups"`
	// Placed are the Shoots moved or added, in the order they were placed.
	Placed []Placed `json:"placed"`
	// Unplaced are the Shoots that found no seed, in that order.
	Unplaced []Unplaced `json:"unplaced"`
	// Stranded are Shoots left on a removed seed, or still migrating away
	// from it: seeds in the order they were removed, each one's by Shoot.
	Stranded []Stranded `json:"stranded"`
}

// Complete reports whether every Shoot the plan moved or added found a
// seed and none was stranded.
func (r *Report) Complete() bool { return len(r.Unplaced) == 0 && len(r.Stranded) == 0 }

// Placed is a Shoot the plan put on a seed; From is empty for a new one.
type Placed struct {
	Shoot string `json:"shoot"`
	From  string `json:"from,omitempty"`
	To    string `json:"to"`
	// Scores is the breakdown of a scored decision (a scoring profile).
	Scores []placement.SeedScore `json:"scores,omitempty"`
}

// Unplaced is a Shoot that found no seed, with why: the step that left no
// seed, its message, and each seed's reason.
type Unplaced struct {
	Shoot   string            `json:"shoot"`
	From    string            `json:"from,omitempty"`
	Step    placement.Step    `json:"step"`
	Message string            `json:"message"`
	Reasons map[string]string `json:"reasons,omitempty"`
	// Code, Codes and Counts are the reasons for programs: the Shoot's own
	// code, each seed's, and the seeds per code (placement.CodeSummary);
	// placement's codes and the plan's (codes.go).
	Code   placement.ReasonCode            `json:"code,omitempty"`
	Codes  map[string]placement.ReasonCode `json:"codes,omitempty"`
	Counts map[placement.ReasonCode]int    `json:"counts,omitempty"`
}

// Stranded is a Shoot left on a seed the plan removed.
type Stranded struct {
	Shoot string `json:"shoot"`
	Seed  string `json:"seed"`
	// MigratingTo is, for a Shoot whose control plane is still migrating
	// away from Seed, the seed it migrates to (spec.seedName): it is
	// stranded until that migration completes. Empty for a Shoot on Seed.
	MigratingTo string `json:"migratingTo,omitempty"`
}

// OpError is an operation that could not apply: Index is its position in
// the list given to Run (from 0), so a caller can name the flag it came from.
type OpError struct {
	Index int
	Err   error
}

func (e *OpError) Error() string { return fmt.Sprintf("operation %d: %v", e.Index+1, e.Err) }

func (e *OpError) Unwrap() error { return e.Err }

// planner carries a plan's state through its operations.
type planner struct {
	view   *View
	opts   placement.Options
	before map[string]int64
	report Report
}

// Run applies ops in order to a view of snap and shoots (NewView) and
// reports the outcome. An operation that cannot apply (an unknown seed, a
// seed added twice, no Shoot to copy) stops the plan with an error naming
// it; Shoots that find no seed do not, they are reported.
func Run(snap *placement.Snapshot, shoots []*api.Shoot, opts placement.Options, ops []Operation) (*Report, error) {
	r, _, err := Simulate(snap, shoots, opts, ops)
	return r, err
}

// Simulate is Run that also returns the view the plan left, for questions
// asked after it (such as Headroom on the view's Snapshot).
func Simulate(snap *placement.Snapshot, shoots []*api.Shoot, opts placement.Options, ops []Operation) (*Report, *View, error) {
	p := &planner{view: NewView(snap, shoots), opts: opts, before: map[string]int64{}}
	for _, s := range p.view.all {
		p.before[s.Name] = p.view.usage[s]
	}
	for i, op := range ops {
		if err := op.apply(p); err != nil {
			return nil, nil, &OpError{Index: i, Err: err}
		}
	}
	p.report.Seeds, p.report.Groups = summarise(p.view, p.before, p.report.Stranded, p.opts.Policies)
	return &p.report, p.view, nil
}

func (op RemoveSeed) apply(p *planner) error {
	s, ok := p.view.Seed(op.Seed)
	if !ok {
		return fmt.Errorf("no seed %q", op.Seed)
	}
	on, leaving := p.view.removeSeed(s)
	stranded := make([]Stranded, 0, len(on)+len(leaving))
	for _, sh := range on {
		stranded = append(stranded, Stranded{Shoot: shootKey(sh), Seed: s.Name})
	}
	for _, sh := range leaving {
		stranded = append(stranded, Stranded{Shoot: shootKey(sh), Seed: s.Name, MigratingTo: ptr.Deref(sh.Spec.SeedName, "")})
	}
	slices.SortFunc(stranded, func(a, b Stranded) int { return cmp.Compare(a.Shoot, b.Shoot) })
	p.report.Stranded = append(p.report.Stranded, stranded...)
	return nil
}

func (op AddSeeds) apply(p *planner) error {
	for _, obj := range op.Seeds {
		if obj == nil || obj.Name == "" {
			return fmt.Errorf("metadata.name: a seed needs a name")
		}
		if _, ok := p.view.Seed(obj.Name); ok {
			return fmt.Errorf("seed %q exists already", obj.Name)
		}
		p.view.addSeed(placement.NewSeed(assumeReady(obj)))
	}
	return nil
}

func (op AddShoots) apply(p *planner) error {
	if op.Like == nil {
		return fmt.Errorf("no Shoot to copy")
	}
	if op.Count <= 0 {
		return fmt.Errorf("count %d: must be at least 1", op.Count)
	}
	base := op.Like.Name
	if base == "" {
		base = op.Like.GenerateName
	}
	for k := 1; k <= op.Count; k++ {
		p.placeNew(newShootLike(op.Like, fmt.Sprintf("%s-%d", base, k)))
	}
	return nil
}

func (op PlaceShoots) apply(p *planner) error {
	for _, shoot := range op.Shoots {
		if shoot == nil {
			return fmt.Errorf("no Shoot to place")
		}
		p.placeNew(shoot)
	}
	return nil
}

// placeNew decides a Shoot that is on no seed yet and records the outcome.
func (p *planner) placeNew(shoot *api.Shoot) {
	d, seed := p.view.decide(shoot, p.opts, nil)
	if seed == nil {
		p.report.Unplaced = append(p.report.Unplaced, unplaced(shoot, "", d))
		return
	}
	p.view.place(shoot, seed)
	p.report.Placed = append(p.report.Placed, Placed{Shoot: shootKey(shoot), To: seed.Name, Scores: d.Scores})
}

// newShootLike is a copy of like, named name, without a seed. The copy is
// shallow: it shares like's maps and slices, which nothing here writes.
func newShootLike(like *api.Shoot, name string) *api.Shoot {
	s := *like
	s.Name, s.GenerateName = name, ""
	s.Spec.SeedName, s.Status.SeedName = nil, nil
	return &s
}

// vetoes are seeds left out of decisions, with the reason. The decision
// view without them is built once and shared by every decision that uses
// the same vetoes: the view's seeds must not change meanwhile (a drain adds,
// removes and cordons none while it moves Shoots).
type vetoes struct {
	reasons map[string]string
	codes   map[string]placement.ReasonCode // of the same seeds
	snap    *placement.Snapshot
}

// veto records a vetoed seed's reason and code.
func (vt *vetoes) veto(seed string, code placement.ReasonCode, reason string) {
	vt.reasons[seed], vt.codes[seed] = reason, code
}

// without returns the view's snapshot without the vetoed seeds.
func (vt *vetoes) without(v *View) *placement.Snapshot {
	if vt.snap == nil {
		view := v.snap
		view.Seeds = make([]*placement.Seed, 0, len(v.snap.Seeds))
		for _, s := range v.snap.Seeds {
			if _, ok := vt.reasons[s.Name]; !ok {
				view.Seeds = append(view.Seeds, s)
			}
		}
		vt.snap = &view
	}
	return vt.snap
}

// decide places shoot on the view, with the seeds vt vetoes (nil: none)
// left out too. An unschedulable decision gives every seed the view left
// out its reason, so the report names them all. The seed is nil when none
// was found.
func (v *View) decide(shoot *api.Shoot, opts placement.Options, vt *vetoes) (placement.Decision, *placement.Seed) {
	snap := &v.snap
	if vt != nil && len(vt.reasons) > 0 {
		snap = vt.without(v)
	}
	d := placement.Decide(snap, shoot, opts)
	if d.Schedulable() {
		s, _ := v.Seed(d.Seed)
		return d, s
	}
	if seedsConsidered(d.Step) {
		if d.Reasons == nil {
			d.Reasons = map[string]string{}
		}
		if d.Codes == nil {
			d.Codes = map[string]placement.ReasonCode{}
		}
		for name, why := range v.cordoned {
			d.Reasons[name], d.Codes[name] = why, SeedDrainedByPlan
		}
		if vt != nil {
			for name, why := range vt.reasons {
				d.Reasons[name], d.Codes[name] = why, vt.codes[name]
			}
		}
		d.Total = len(v.all)
	}
	return d, nil
}

// seedsConsidered says whether a decision that failed at step got as far
// as looking at seeds (before, the Shoot itself ruled out placement).
func seedsConsidered(step placement.Step) bool {
	switch step {
	case placement.StepSelfHosted, placement.StepCloudProfile, placement.StepProject, placement.StepScoring:
		return false
	}
	return true
}

func unplaced(shoot *api.Shoot, from string, d placement.Decision) Unplaced {
	return Unplaced{Shoot: shootKey(shoot), From: from, Step: d.Step, Message: d.Message, Reasons: d.Reasons,
		Code: d.Code, Codes: d.Codes, Counts: d.CodeSummary().Counts}
}

func shootKey(s *api.Shoot) string { return s.Namespace + "/" + s.Name }
