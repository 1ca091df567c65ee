package seedscale

import (
	"errors"
	"fmt"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/autoscalingapi"
	"github.com/seedwarden/seedwarden/internal/placement"
	"github.com/seedwarden/seedwarden/internal/seedmanagement"
)

// Reasons, one word each, for Recommendation.Reason.
const (
	ReasonScaleUp              = "ScaleUp"
	ReasonScaleDown            = "ScaleDown"
	ReasonSteady               = "Steady"
	ReasonAtMaxReplicas        = "AtMaxReplicas"
	ReasonNewSeedsWouldNotHelp = "NewSeedsWouldNotHelp"
	ReasonNoSeedModel          = "NoSeedModel"
)

// Recommend computes the replicas the metrics of in.Spec ask for: for each
// metric, the least replicas from the floor up to maxReplicas at which its
// target holds, once the pending Shoots are placed; the largest of them,
// and minReplicas, wins.
func Recommend(in Input) (Recommendation, error) {
	if in.Spec == nil {
		return Recommendation{}, errors.New("seedscale: no spec")
	}
	// A stored object may predate the webhook that bounds it.
	if err := in.Spec.CheckBounds(); err != nil {
		return Recommendation{}, err
	}
	return recommend(in, (*recommender).scan)
}

// recommend is Recommend with the scan given: the fast one, or scanPlain,
// its specification.
func recommend(in Input, scan func(*recommender) error) (Recommendation, error) {
	rec, _, err := recommendFinal(in, scan)
	return rec, err
}

// recommendFinal is recommend with the outcome at the recommended replicas
// (the pending Shoots placed): DecideFleet goes on from its landscape.
func recommendFinal(in Input, scan func(*recommender) error) (Recommendation, *outcome, error) {
	if in.Snapshot == nil || in.Spec == nil {
		return Recommendation{}, nil, errors.New("seedscale: no landscape or no spec")
	}
	ms, err := metricsOf(&in)
	if err != nil {
		return Recommendation{}, nil, err
	}
	in.Pending = poolPending(&in, ms)
	minR, maxR := in.Spec.MinReplicasOrDefault(), in.Spec.MaxReplicas
	if maxR < 1 || minR < 0 || minR > maxR {
		return Recommendation{}, nil, fmt.Errorf("spec.minReplicas %d and spec.maxReplicas %d: want 0 <= minReplicas <= maxReplicas and maxReplicas >= 1", minR, maxR)
	}
	if maxR > autoscalingapi.MaxReplicasLimit {
		return Recommendation{}, nil, fmt.Errorf("spec.maxReplicas %d: at most %d", maxR, autoscalingapi.MaxReplicasLimit)
	}
	s := newSim(&in)
	r := &recommender{in: &in, sim: s, metrics: ms}
	r.lo, r.hi = max(minR, s.floor()), max(maxR, s.floor())
	if !s.canGrow() {
		r.hi = min(r.hi, max(s.registered(), s.floor()))
		r.lo = min(r.lo, r.hi)
	}
	r.from = min(r.lo, s.floor())
	return r.recommend(scan)
}

// metricsOf builds in.Spec's metrics.
func metricsOf(in *Input) ([]metric, error) {
	return metrics(in.Spec.Metrics, &metricEnv{profiles: in.Profiles, inline: inlineShoots(in), policies: in.Options.Policies})
}

// poolPending are the pending Shoots the set scales for: when Headroom
// metrics name seed pools, those of the pools' projects only (a pool's
// set grows for its own Shoots, never for another project's), else all.
func poolPending(in *Input, ms []metric) []*api.Shoot {
	var pools placement.PoolSet
	for _, m := range ms {
		if m.pool >= 0 {
			pools |= 1 << uint(m.pool)
		}
	}
	if pools == 0 {
		return in.Pending
	}
	var out []*api.Shoot
	for _, s := range in.Pending {
		var project *placement.Project
		if in.Snapshot.Projects != nil {
			project = in.Snapshot.Projects[s.Namespace]
		}
		if in.Options.Policies.ProjectPools(project)&pools != 0 {
			out = append(out, s)
		}
	}
	return out
}

// inlineShoots decodes the i-th metric's inline Shoot template.
func inlineShoots(in *Input) func(int) (*api.Shoot, error) {
	return func(i int) (*api.Shoot, error) {
		if in.DecodeShoot == nil {
			return nil, errors.New("no decoder for inline Shoot templates")
		}
		return in.DecodeShoot(in.Spec.Metrics[i].Headroom.Shoot.Raw)
	}
}

// recommender carries one recommendation's state.
type recommender struct {
	in      *Input
	sim     *sim
	metrics []metric
	// lo and hi bound the recommendation; from is where the metrics'
	// scan starts (the floor: what a metric asks for alone).
	lo, hi, from int32
	results      []MetricResult
	// steps counts the simulations and metric readings so far (step).
	steps int
	// takeable says, by namespace/name, which pending Shoots a new
	// replica would take (filled on first use).
	takeable map[string]bool
}

func (r *recommender) recommend(scan func(*recommender) error) (Recommendation, *outcome, error) {
	rec := Recommendation{
		Set: r.in.Set.Name, Current: r.in.Set.Replicas, Floor: r.sim.floor(),
		Metrics: []MetricResult{}, ModelSource: r.in.Set.ModelSource,
	}
	// On error no part of a recommendation is returned.
	if err := r.readCurrent(); err != nil {
		return Recommendation{}, nil, err
	}
	if err := scan(r); err != nil {
		return Recommendation{}, nil, err
	}
	rec.Metrics = r.results
	rec.Desired = r.lo
	for _, m := range r.results {
		rec.Desired = max(rec.Desired, m.Replicas)
		rec.Short = rec.Short || (!m.Met && m.WouldNotHelp == "")
	}
	rec.NotReady = r.sim.notReady()
	if rec.NotReady.Late > 0 && rec.Desired > rec.Current {
		// A set whose replicas do not come is not asked for more: its
		// ManagedSeedSet creates the next one only when the last is ready.
		rec.Desired = max(rec.Current, r.lo)
	}
	final, err := r.run(rec.Desired, true)
	if err != nil {
		return Recommendation{}, nil, err
	}
	rec.PendingPlaced, rec.PendingUnplaced = len(final.report.Placed), len(final.report.Unplaced)
	if rec.ForPending, err = r.forPending(rec.Current, rec.Desired, final); err != nil {
		return Recommendation{}, nil, err
	}
	rec.Reason, rec.Message = r.explain(&rec, final)
	return rec, final, nil
}

// forPending is the least replicas above current, at most desired, at
// which no pending Shoot a new replica would take is stuck (final is the
// outcome at desired): what pending Shoots need, which the controller
// scales to at once. Found by halving, as scan does: another replica only
// adds room.
func (r *recommender) forPending(current, desired int32, final *outcome) (int32, error) {
	if desired <= current || r.stuck(final) {
		return desired, nil
	}
	lo, hi := max(current, r.from), desired
	o, err := r.run(lo, true)
	if err != nil {
		return 0, err
	}
	if !r.stuck(o) {
		return lo, nil
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		o, err := r.run(mid, true)
		if err != nil {
			return 0, err
		}
		if r.stuck(o) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi, nil
}

// readCurrent fills each metric's target and value on the landscape as it
// is (no replica added or removed, nothing pending placed).
func (r *recommender) readCurrent() error {
	now, err := r.run(r.sim.registered(), false)
	if err != nil {
		return err
	}
	r.results = make([]MetricResult, len(r.metrics))
	for i := range r.metrics {
		m := &r.metrics[i]
		v, err := r.read(m, now)
		if err != nil {
			return err
		}
		r.results[i] = MetricResult{Type: m.typ, Name: m.name, Target: m.target(), Current: v.text}
		if m.like != nil {
			r.results[i].WouldNotHelpCode, r.results[i].WouldNotHelp = r.wouldNotTake(m.like)
		}
	}
	return nil
}

// step asks Input.Stop whether to go on, before a simulation or a metric
// reading: the units a recommendation's cost is made of.
func (r *recommender) step() error {
	if r.in.Stop == nil {
		return nil
	}
	if err := r.in.Stop(); err != nil {
		return &StoppedError{Steps: r.steps, Err: err}
	}
	r.steps++
	return nil
}

// run is sim.run, one step.
func (r *recommender) run(k int32, placePending bool) (*outcome, error) {
	if err := r.step(); err != nil {
		return nil, err
	}
	return r.sim.run(k, placePending)
}

// read is m.read at o, one step.
func (r *recommender) read(m *metric, o *outcome) (value, error) {
	if err := r.step(); err != nil {
		return value{}, err
	}
	return m.read(o, r.in.Options)
}

// stuck says whether a pending Shoot that a new replica would take found
// no seed at this outcome.
func (r *recommender) stuck(o *outcome) bool { return r.stuckCount(o) > 0 }

// stuckCount counts the pending Shoots that a new replica would take and
// that found no seed at this outcome.
func (r *recommender) stuckCount(o *outcome) int {
	if len(o.report.Unplaced) == 0 || !r.sim.canGrow() {
		return 0
	}
	if r.takeable == nil {
		r.takeable = make(map[string]bool, len(r.in.Pending))
		for _, shoot := range r.in.Pending {
			_, why := r.wouldNotTake(shoot)
			r.takeable[shoot.Namespace+"/"+shoot.Name] = why == ""
		}
	}
	n := 0
	for _, u := range o.report.Unplaced {
		if r.takeable[u.Shoot] {
			n++
		}
	}
	return n
}

// wouldNotTake says why a new replica of the set would not take a Shoot
// like this one even with the rest of the landscape full, or "" when it
// would (or when the set has no model to tell).
func (r *recommender) wouldNotTake(like *api.Shoot) (placement.ReasonCode, string) {
	model := r.in.Set.Model
	if model == nil {
		return "", ""
	}
	name := seedmanagement.ReplicaName(r.in.Set.Prefix, r.in.Set.NextOrdinal)
	alone := *r.in.Snapshot
	alone.Seeds = []*placement.Seed{placement.NewSeed(seedmanagement.Model(model, name))}
	alone.Usage = func(*placement.Seed) int64 { return 0 }
	alone.ProjectShoots = nil
	d := placement.Decide(&alone, like, r.in.Options)
	if d.Schedulable() {
		return "", ""
	}
	if why := d.Reasons[name]; why != "" {
		return d.Codes[name], why
	}
	return d.Code, d.Message
}
