package placement

import (
	"maps"
	"slices"
)

// ReasonCode names, for programs, why a seed was dropped or why a Shoot
// could not be placed at all: one CamelCase word per distinct reason, finer
// than Step where a step drops seeds for several reasons. The texts of
// Decision.Reasons and Decision.Message stay what they are (conformance and
// Gardener's messages depend on them); codes are stable across releases: a
// code is never renamed or reused, only added (docs/placement.md, "Reason
// codes", documents each one; TestReasonCodesDocumented holds the table to
// this list).
type ReasonCode string

// The codes of seeds dropped one by one (Decision.Codes), in step order.
const (
	// Step 1, Usable.
	SeedDeleting   ReasonCode = "SeedDeleting"
	SeedNotVisible ReasonCode = "SeedNotVisible"
	SeedNotReady   ReasonCode = "SeedNotReady"
	SeedCordoned   ReasonCode = "SeedCordoned" // a SeedDrain (seedwarden only)
	// SeedNotFound: the seed a Shoot is bound to does not exist
	// (CheckStaying, the audit); Decide only sees seeds that do.
	SeedNotFound ReasonCode = "SeedNotFound"
	// Steps 2 and 3, the CloudProfile's and the Shoot's seed selector.
	CloudProfileSelectorMismatch ReasonCode = "CloudProfileSelectorMismatch"
	ShootSelectorMismatch        ReasonCode = "ShootSelectorMismatch"
	// Step 4, provider.
	ProviderMismatch   ReasonCode = "ProviderMismatch"
	ProviderNotEnabled ReasonCode = "ProviderNotEnabled" // not in the CloudProfile's providerTypes
	// Step 4b, the Required seed pools (seedwarden only, Policies).
	SeedOutsideRequiredPool ReasonCode = "SeedOutsideRequiredPool"
	SeedReservedForPool     ReasonCode = "SeedReservedForPool"
	// Step 5, failure tolerance "zone"; step 6, zones.
	TooFewZones             ReasonCode = "TooFewZones"
	ControlPlaneZoneMissing ReasonCode = "ControlPlaneZoneMissing"
	ZoneEnforceMismatch     ReasonCode = "ZoneEnforceMismatch"
	ZonePreferMismatch      ReasonCode = "ZonePreferMismatch"
	// Step 7, access restrictions.
	AccessRestrictionUnsupported ReasonCode = "AccessRestrictionUnsupported"
	AccessRestrictionsTooMany    ReasonCode = "AccessRestrictionsTooMany"
	// Step 8, domain; step 9, emergency stop.
	DomainMismatch   ReasonCode = "DomainMismatch"
	EmergencyStopped ReasonCode = "EmergencyStopped"
	// Step 10, candidates: networks, taints, capacity.
	NetworkOverlap         ReasonCode = "NetworkOverlap"
	NetworkReservedRange   ReasonCode = "NetworkReservedRange"
	StatusNetworkMissing   ReasonCode = "StatusNetworkMissing"
	TaintNotTolerated      ReasonCode = "TaintNotTolerated"
	SeedFull               ReasonCode = "SeedFull"
	SeedFullAcrossReplicas ReasonCode = "SeedFullAcrossReplicas" // Options.Exclude
	// Step 11, strategy.
	TestingProviderMismatch ReasonCode = "TestingProviderMismatch"
	RegionMismatch          ReasonCode = "RegionMismatch"
	RegionFartherByConfig   ReasonCode = "RegionFartherByConfig"
	RegionFartherByName     ReasonCode = "RegionFartherByName"
)

// The codes of a decision that failed as a whole (Decision.Code): before
// any seed was looked at, or on something no seed is to blame for.
const (
	ShootSelfHosted             ReasonCode = "ShootSelfHosted"
	CloudProfileUnset           ReasonCode = "CloudProfileUnset"
	CloudProfileNotFound        ReasonCode = "CloudProfileNotFound"
	CloudProfileKindUnsupported ReasonCode = "CloudProfileKindUnsupported"
	ProjectNotFound             ReasonCode = "ProjectNotFound"
	NoSeeds                     ReasonCode = "NoSeeds"
	CloudProfileSelectorInvalid ReasonCode = "CloudProfileSelectorInvalid"
	ShootSelectorInvalid        ReasonCode = "ShootSelectorInvalid"
	RegionConfigInvalid         ReasonCode = "RegionConfigInvalid"
	ScoringProfileInvalid       ReasonCode = "ScoringProfileInvalid"
	PoliciesInvalid             ReasonCode = "PoliciesInvalid"
)

// ReasonCodeInfo is one row of the table of codes.
type ReasonCodeInfo struct {
	Code ReasonCode
	Step Step
	// PerSeed: the code is a seed's (Decision.Codes), not the decision's
	// (Decision.Code).
	PerSeed bool
}

// ReasonCodes lists every code placement gives, with the step that gives
// it, in step order: the one list docs, tests and tools walk.
var ReasonCodes = []ReasonCodeInfo{
	{ShootSelfHosted, StepSelfHosted, false},
	{CloudProfileUnset, StepCloudProfile, false},
	{CloudProfileNotFound, StepCloudProfile, false},
	{CloudProfileKindUnsupported, StepCloudProfile, false},
	{ProjectNotFound, StepProject, false},
	{NoSeeds, StepUsable, false},
	{SeedDeleting, StepUsable, true},
	{SeedNotVisible, StepUsable, true},
	{SeedNotReady, StepUsable, true},
	{SeedCordoned, StepUsable, true},
	{SeedNotFound, StepUsable, true},
	{CloudProfileSelectorInvalid, StepCloudProfileSelector, false},
	{CloudProfileSelectorMismatch, StepCloudProfileSelector, true},
	{ShootSelectorInvalid, StepShootSelector, false},
	{ShootSelectorMismatch, StepShootSelector, true},
	{ProviderMismatch, StepProvider, true},
	{ProviderNotEnabled, StepProvider, true},
	{SeedOutsideRequiredPool, StepPools, true},
	{SeedReservedForPool, StepPools, true},
	{PoliciesInvalid, StepPools, false},
	{TooFewZones, StepFailureTolerance, true},
	{ControlPlaneZoneMissing, StepZones, true},
	{ZoneEnforceMismatch, StepZones, true},
	{ZonePreferMismatch, StepZones, true},
	{AccessRestrictionUnsupported, StepAccessRestrictions, true},
	{AccessRestrictionsTooMany, StepAccessRestrictions, true},
	{ProjectNotFound, StepDomain, false},
	{DomainMismatch, StepDomain, true},
	{EmergencyStopped, StepEmergencyStop, true},
	{SeedFullAcrossReplicas, StepCandidates, true},
	{NetworkOverlap, StepCandidates, true},
	{NetworkReservedRange, StepCandidates, true},
	{StatusNetworkMissing, StepCandidates, true},
	{TaintNotTolerated, StepCandidates, true},
	{SeedFull, StepCandidates, true},
	{RegionConfigInvalid, StepStrategy, false},
	{TestingProviderMismatch, StepStrategy, true},
	{RegionMismatch, StepStrategy, true},
	{RegionFartherByConfig, StepStrategy, true},
	{RegionFartherByName, StepStrategy, true},
	{ScoringProfileInvalid, StepScoring, false},
}

// codedError is an error that carries its code, so a failing step reports
// both without parsing text.
type codedError struct {
	code ReasonCode
	err  error
}

func (e *codedError) Error() string { return e.err.Error() }
func (e *codedError) Unwrap() error { return e.err }

// CodeSummary is an unschedulable decision's codes as programs read them
// (`simulate -o json`, `plan -o json`, a pending Shoot's annotation, the
// pending-Shoot metric): the failing step, the decision's own code, and
// how many seeds each code dropped. Its JSON is stable (map keys sorted),
// so equal summaries marshal to equal bytes.
type CodeSummary struct {
	Step Step       `json:"step"`
	Code ReasonCode `json:"code,omitempty"`
	// Seeds is the number of seeds in the landscape (Decision.Total).
	Seeds int `json:"seeds"`
	// Counts counts the seeds dropped per code (Decision.Codes).
	Counts map[ReasonCode]int `json:"counts,omitempty"`
}

// CodeSummary summarises an unschedulable decision's codes; the zero
// CodeSummary for a schedulable one.
func (d *Decision) CodeSummary() CodeSummary {
	if d.Schedulable() {
		return CodeSummary{}
	}
	s := CodeSummary{Step: d.Step, Code: d.Code, Seeds: d.Total}
	if len(d.Codes) > 0 {
		s.Counts = make(map[ReasonCode]int, 8)
		for _, c := range d.Codes {
			s.Counts[c]++
		}
	}
	return s
}

// All lists the summary's distinct codes, the decision's first, then the
// seeds' by name: what a Shoot is counted under per code.
func (s CodeSummary) All() []ReasonCode {
	out := make([]ReasonCode, 0, len(s.Counts)+1)
	if s.Code != "" {
		out = append(out, s.Code)
	}
	for _, c := range slices.Sorted(maps.Keys(s.Counts)) {
		if c != s.Code {
			out = append(out, c)
		}
	}
	return out
}
