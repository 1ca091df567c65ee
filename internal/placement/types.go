// Package placement decides which Seed a Shoot goes to, following Gardener's
// scheduler step by step. It is pure: no clients, no goroutines, no I/O. The
// caller hands it a Snapshot of the landscape and a Shoot and gets a Decision.
package placement

import (
	"fmt"
	"sort"
	"strings"
)

// Strategy is the candidate determination strategy of Gardener's scheduler.
type Strategy string

const (
	// SameRegion keeps seeds of the Shoot's provider type in the Shoot's region.
	SameRegion Strategy = "SameRegion"
	// MinimalDistance keeps the seeds closest to the Shoot's region.
	MinimalDistance Strategy = "MinimalDistance"
)

// NetworkMode says which seed networks a Shoot's networks must avoid.
type NetworkMode string

const (
	// Disjoint means no shoot network may intersect a seed network (what the seed
	// documents require, because of the VPN).
	Disjoint NetworkMode = "Disjoint"
	// AllowIPv4 means only IPv6 shoot networks must avoid the seed's networks
	// (current Gardener without HA VPN).
	AllowIPv4 NetworkMode = "AllowIPv4"
)

// Options are the knobs of a decision.
type Options struct {
	Strategy    Strategy
	NetworkMode NetworkMode
	// Exclude names seeds to treat as full: they drop out at the
	// candidates step (10) with ExcludedReason. The mutating webhook
	// decides again without a seed its cluster-wide reservation found full
	// (a few at most: the list is searched linearly). Not configuration.
	Exclude []string
	// Policies are seedwarden's placement policies (policies.go); nil:
	// none configured (a Seed's policy annotations still act).
	Policies *Policies
	// Scoring, when set, replaces step 12 (least used wins) by weighted
	// scoring (score.go); nil is Gardener's rule, decision for decision.
	Scoring *Profile
}

// ExcludedReason is why a seed in Options.Exclude is not a candidate.
const ExcludedReason = "seed has no capacity left across replicas"

// Validate names the offending field and value.
func (o Options) Validate() error {
	switch o.Strategy {
	case SameRegion, MinimalDistance:
	default:
		return fmt.Errorf("strategy: unsupported value %q (want %q or %q)", o.Strategy, SameRegion, MinimalDistance)
	}
	switch o.NetworkMode {
	case Disjoint, AllowIPv4, "":
	default:
		return fmt.Errorf("networkOverlap: unsupported value %q (want %q or %q)", o.NetworkMode, Disjoint, AllowIPv4)
	}
	if err := o.Policies.Validate(); err != nil {
		return fmt.Errorf("policies: %w", err)
	}
	if o.Scoring != nil {
		return o.Scoring.Validate()
	}
	return nil
}

// Step names a stage of the algorithm; an unschedulable Decision says which
// step left no seed.
type Step string

// The steps, in the order they run.
const (
	// StepSelfHosted: the Shoot is self-hosted (a worker pool has
	// controlPlane) and is not scheduled at all, as in Gardener.
	StepSelfHosted   Step = "SelfHosted"
	StepCloudProfile Step = "CloudProfile"
	// StepProject: no Project owns the Shoot's namespace; Gardener's
	// scheduler looks its Project up before any filter and stops there.
	StepProject              Step = "Project"
	StepUsable               Step = "Usable"
	StepCloudProfileSelector Step = "CloudProfileSeedSelector"
	StepShootSelector        Step = "ShootSeedSelector"
	StepProvider             Step = "Provider"
	StepFailureTolerance     Step = "FailureToleranceZone"
	StepZones                Step = "Zones"
	StepAccessRestrictions   Step = "AccessRestrictions"
	StepDomain               Step = "Domain"
	StepEmergencyStop        Step = "EmergencyStop"
	StepCandidates           Step = "Candidates"
	// StepPools: the Required seed pools (policies.go), seedwarden's own.
	StepPools    Step = "SeedPools"
	StepStrategy Step = "Strategy"
	// The preference policies rank the seeds the strategy kept
	// (policies_step.go); they drop none for good, so no decision fails
	// there and they have no Step.
	// StepScoring: Options.Scoring is invalid (Profile.Validate), so no
	// seed can be ranked. Configuration is validated at start-up; this
	// only keeps a decision from acting on a profile that was not.
	StepScoring Step = "Scoring"
)

// Decision is the outcome of placing one Shoot.
type Decision struct {
	// Seed is the chosen seed; empty when the Shoot is unschedulable.
	Seed string
	// Tied are the final candidates with the chosen seed's usage (sorted,
	// including Seed): any of them would have been as good. A scored
	// decision ties on the total score instead.
	Tied []string
	// Usage is the chosen seed's usage at decision time.
	Usage int64
	// Scores is the breakdown of a scored decision (Options.Scoring set):
	// the chosen seed first, then up to ScoreRanks-1 runners-up, best
	// first; nil without a profile. ScoreSummary renders it.
	Scores []SeedScore
	// Scored is the number of seeds the profile ranked (scored decisions).
	Scored int
	// Policy is what the placement policies did (policies_step.go); the
	// zero value when none acted.
	Policy PolicyEffect

	// Step is the step that left no seed (unschedulable only).
	Step Step
	// Message says why, in the reference scheduler's terms.
	Message string
	// Reasons gives, for an unschedulable Shoot, why each seed was dropped
	// (seed name -> reason). Seeds dropped before the failing step carry the
	// reason of the step that dropped them.
	Reasons map[string]string
	// Codes gives each seed of Reasons its ReasonCode (same keys): what
	// programs count and compare, where Reasons is for people.
	Codes map[string]ReasonCode
	// Code is the failure's own code when no seed is to blame (no
	// CloudProfile, no Project, a selector or region config that does not
	// parse, no seeds at all, ...); empty when Codes says why.
	Code ReasonCode
	// Total is the number of seeds in the snapshot.
	Total int
}

// Schedulable reports whether a seed was chosen.
func (d *Decision) Schedulable() bool { return d.Seed != "" }

// Eligible is the count of an unschedulable decision, as the admission
// warning and simulate give it: "0/N seeds eligible", N every seed of the
// landscape (Total) whichever step failed. Message keeps Gardener's own
// wording, whose count is only of the seeds that reached its step ("0/1
// seed cluster candidate(s)" with 5 of 6 dropped before): one Shoot gets
// one count.
func (d *Decision) Eligible() string { return fmt.Sprintf("0/%d seeds eligible", d.Total) }

// Headline is Eligible with the failing step's message where it adds news
// (past the per-seed step: an unparsable region config, no seed in the
// Shoot's region); a self-hosted Shoot's message alone, as no seed was
// considered.
func (d *Decision) Headline() string {
	switch {
	case d.Step == StepSelfHosted:
		return d.Message
	case d.Step != StepCandidates && d.Message != "":
		return d.Eligible() + ": " + d.Message
	}
	return d.Eligible()
}

// Summary is a one-line explanation for admission warnings and events:
// "0/7 seeds eligible: seed-a: taints not tolerated, seed-b: ...". In large
// landscapes seeds sharing a reason are grouped, most common reason first
// ("0/900 seeds eligible: 512 seeds (seed-001, seed-004, ...): taints not
// tolerated; ..."), so the message stays short and says what matters.
func (d *Decision) Summary() string {
	if d.Schedulable() {
		return fmt.Sprintf("scheduled to seed %q", d.Seed)
	}
	if d.Step == StepSelfHosted {
		return d.Message // no seed was considered
	}
	var b strings.Builder
	b.WriteString(d.Eligible() + ": ")
	if len(d.Reasons) == 0 {
		b.WriteString(d.Message)
		return b.String()
	}
	// Past the per-seed step the failing step's own message carries the news
	// (an unparsable region config, no seed in the Shoot's region), and seeds
	// that reached it have no reason of their own.
	if d.Step != StepCandidates && d.Message != "" {
		b.WriteString(d.Message + "; ")
	}
	names := make([]string, 0, len(d.Reasons))
	for n := range d.Reasons {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) <= summaryListAll {
		for i, n := range names {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(n + ": " + d.Reasons[n])
		}
		return b.String()
	}
	writeGrouped(&b, names, d.Reasons)
	return b.String()
}

// writeGrouped writes the seeds (names, sorted) grouped by reason, the most
// common reason first, each group with up to summaryExamples names.
func writeGrouped(b *strings.Builder, names []string, reasonOf map[string]string) {
	groups := map[string][]string{}
	var reasons []string
	for _, n := range names {
		r := reasonOf[n]
		if _, ok := groups[r]; !ok {
			reasons = append(reasons, r)
		}
		groups[r] = append(groups[r], n)
	}
	sort.SliceStable(reasons, func(i, j int) bool { return len(groups[reasons[i]]) > len(groups[reasons[j]]) })
	for i, r := range reasons {
		if i > 0 {
			b.WriteString("; ")
		}
		seeds := groups[r]
		if len(seeds) == 1 {
			b.WriteString(seeds[0] + ": " + r)
			continue
		}
		shown := seeds
		if len(shown) > summaryExamples {
			shown = shown[:summaryExamples]
		}
		fmt.Fprintf(b, "%d seeds (%s", len(seeds), strings.Join(shown, ", "))
		if len(seeds) > len(shown) {
			b.WriteString(", ...")
		}
		b.WriteString("): " + r)
	}
}

// Up to summaryListAll seeds are listed one by one; beyond, reasons are
// grouped with summaryExamples names each.
const (
	summaryListAll  = 10
	summaryExamples = 3
)
