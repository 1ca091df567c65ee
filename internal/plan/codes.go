package plan

import "github.com/seedwarden/seedwarden/internal/placement"

// The reason codes a plan adds to placement's (placement.ReasonCodes):
// for seeds the plan itself rules out, and for Shoots it cannot move at
// all. docs/placement.md's table lists them under "Codes a plan adds".
const (
	SeedDrainedByPlan placement.ReasonCode = "SeedDrainedByPlan"
	// The control plane migration rules (seedVetoes, domainVetoes).
	MigrationOldSeedNoBackup        placement.ReasonCode = "MigrationOldSeedNoBackup"
	MigrationSeedNoBackup           placement.ReasonCode = "MigrationSeedNoBackup"
	MigrationInternalDomainChange   placement.ReasonCode = "MigrationInternalDomainChange"
	MigrationDefaultDomainNotServed placement.ReasonCode = "MigrationDefaultDomainNotServed"
	// BindingRefused: the seed the rules chose would be refused as a binding.
	BindingRefused placement.ReasonCode = "BindingRefused"
	// Of a Shoot as a whole (Unplaced.Code).
	MigrationRefused    placement.ReasonCode = "MigrationRefused"
	ShootDeleting       placement.ReasonCode = "ShootDeleting"
	MigrationInProgress placement.ReasonCode = "MigrationInProgress"
)

// ReasonCodes are the codes a plan adds, as placement.ReasonCodes lists
// placement's. The Shoots a plan cannot move at all have no step ("").
var ReasonCodes = []placement.ReasonCodeInfo{
	{Code: SeedDrainedByPlan, Step: placement.StepUsable, PerSeed: true},
	{Code: MigrationOldSeedNoBackup, Step: StepMigration, PerSeed: true},
	{Code: MigrationSeedNoBackup, Step: StepMigration, PerSeed: true},
	{Code: MigrationInternalDomainChange, Step: StepMigration, PerSeed: true},
	{Code: MigrationDefaultDomainNotServed, Step: StepMigration, PerSeed: true},
	{Code: BindingRefused, Step: placement.StepCandidates, PerSeed: true},
	{Code: MigrationRefused, Step: StepMigration},
	{Code: ShootDeleting, Step: ""},
	{Code: MigrationInProgress, Step: ""},
}
