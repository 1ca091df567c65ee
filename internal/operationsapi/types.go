package operationsapi

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SeedDrain empties one seed through Gardener's control-plane migration:
// while it exists the seed takes no new Shoots (unless it is a dry run),
// and seedwarden's leader moves the seed's Shoots, each to the seed
// `webhook plan --drain` names, a budget's worth at a time.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=sdr
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Seed",type=string,JSONPath=`.spec.seedName`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Moved",type=integer,JSONPath=`.status.counts.moved`
// +kubebuilder:printcolumn:name="Migrating",type=integer,JSONPath=`.status.counts.migrating`
// +kubebuilder:printcolumn:name="Left",type=integer,JSONPath=`.status.counts.remaining`
// +kubebuilder:printcolumn:name="DryRun",type=boolean,JSONPath=`.spec.dryRun`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type SeedDrain struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   SeedDrainSpec   `json:"spec"`
	Status SeedDrainStatus `json:"status,omitempty"`
}

// SeedDrainList is a list of SeedDrains.
//
// +kubebuilder:object:root=true
type SeedDrainList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SeedDrain `json:"items"`
}

// SeedDrainSpec is what the operator asks for.
type SeedDrainSpec struct {
	// SeedName is the seed to empty. It cannot change: a drain of another
	// seed is another SeedDrain.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="seedName is immutable"
	SeedName string `json:"seedName"`
	// Budget bounds how many migrations run at once and per hour.
	// +optional
	Budget Budget `json:"budget,omitempty"`
	// RespectMaintenanceWindow starts a Shoot's migration only inside its
	// spec.maintenance.timeWindow (a Shoot without one may move any time).
	// +optional
	RespectMaintenanceWindow bool `json:"respectMaintenanceWindow,omitempty"`
	// DryRun plans and reports in status without cordoning the seed or
	// moving any Shoot.
	// +optional
	DryRun bool `json:"dryRun,omitempty"`
	// Deadline is the time after which no further migration starts; those
	// in flight are still waited for, and the drain ends DeadlineExceeded
	// if Shoots are left. An absolute time, so that it means the same
	// after a restart of the controller or a re-created SeedDrain.
	// +optional
	Deadline *metav1.Time `json:"deadline,omitempty"`
}

// Budget bounds the migrations of one drain.
type Budget struct {
	// MaxInFlight is the most migrations at once, counting Shoots whose
	// migration off the seed was started by someone else. Default 1.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=50
	// +optional
	MaxInFlight *int32 `json:"maxInFlight,omitempty"`
	// MaxPerHour is the most migrations this drain starts within any
	// hour. Unset: no hourly limit.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +optional
	MaxPerHour *int32 `json:"maxPerHour,omitempty"`
}

// Bounds of a budget; the CRD's markers repeat them (a test ties them).
const (
	DefaultMaxInFlight int32 = 1
	MaxInFlightLimit   int32 = 50
	MaxPerHourLimit    int32 = 1000
)

// MaxInFlightOrDefault is budget.maxInFlight, or DefaultMaxInFlight.
func (b Budget) MaxInFlightOrDefault() int32 {
	if b.MaxInFlight == nil {
		return DefaultMaxInFlight
	}
	return *b.MaxInFlight
}

// Phase is where a drain stands.
type Phase string

// The phases. A drain moves Pending -> Draining -> Drained, or stops in
// Blocked (nothing more can move and nothing is in flight) or
// DeadlineExceeded; a dry run stays Planned. Blocked and DeadlineExceeded
// are left as soon as something can move again (a Shoot opts back in, a
// seed gets room, the deadline is moved).
const (
	PhasePending          Phase = "Pending"
	PhasePlanned          Phase = "Planned"
	PhaseDraining         Phase = "Draining"
	PhaseDrained          Phase = "Drained"
	PhaseBlocked          Phase = "Blocked"
	PhaseDeadlineExceeded Phase = "DeadlineExceeded"
)

// ShootState is where one Shoot of the drained seed stands.
type ShootState string

// The states of a Shoot in a drain.
const (
	// ShootPlanned: a destination is chosen; the migration waits for a
	// budget slot (or the drain is a dry run).
	ShootPlanned ShootState = "Planned"
	// ShootWaiting: the migration waits for the Shoot's maintenance window.
	ShootWaiting ShootState = "Waiting"
	// ShootMigrating: spec.seedName is the destination, the control plane
	// is still on the drained seed or being restored.
	ShootMigrating ShootState = "Migrating"
	// ShootMoved: the migration finished on the destination.
	ShootMoved ShootState = "Moved"
	// ShootFailed: the migration failed; the drain does not retry it.
	ShootFailed ShootState = "Failed"
	// ShootOptedOut: the Shoot carries AnnotationNoDrain.
	ShootOptedOut ShootState = "OptedOut"
	// ShootUnplaceable: no seed may take it (reason says which rule).
	ShootUnplaceable ShootState = "Unplaceable"
)

// SeedDrainStatus is what the controller last saw and did.
type SeedDrainStatus struct {
	// ObservedGeneration is the spec generation the status is about.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Phase is where the drain stands.
	// +optional
	Phase Phase `json:"phase,omitempty"`
	// Message says in words what the drain does or waits for.
	// +optional
	Message string `json:"message,omitempty"`
	// Counts are the Shoots per state.
	// +optional
	Counts Counts `json:"counts,omitempty"`
	// Shoots is every Shoot of the seed the drain knows, in
	// namespace/name order; a moved Shoot stays listed.
	// +optional
	Shoots []ShootStatus `json:"shoots,omitempty"`
	// LastProgressTime is when a migration last started or finished.
	// +optional
	LastProgressTime *metav1.Time `json:"lastProgressTime,omitempty"`
	// Conditions: Cordoned, Progressing.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Counts are the Shoots of a drain per state. Remaining is every Shoot
// not Moved.
type Counts struct {
	Total       int32 `json:"total"`
	Remaining   int32 `json:"remaining"`
	Planned     int32 `json:"planned,omitempty"`
	Waiting     int32 `json:"waiting,omitempty"`
	Migrating   int32 `json:"migrating,omitempty"`
	Moved       int32 `json:"moved,omitempty"`
	Failed      int32 `json:"failed,omitempty"`
	OptedOut    int32 `json:"optedOut,omitempty"`
	Unplaceable int32 `json:"unplaceable,omitempty"`
}

// ShootStatus is one Shoot of the drained seed.
type ShootStatus struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Destination is the seed the Shoot goes (or went) to.
	// +optional
	Destination string     `json:"destination,omitempty"`
	State       ShootState `json:"state"`
	// Reason says why the Shoot is in its state, in words.
	// +optional
	Reason string `json:"reason,omitempty"`
	// StartedAt is when the drain wrote the Shoot's binding.
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`
	// FinishedAt is when its migration was seen to end.
	// +optional
	FinishedAt *metav1.Time `json:"finishedAt,omitempty"`
}

// Condition types of a SeedDrain.
const (
	// ConditionCordoned is True while the seed takes no new Shoots because
	// of this drain (False for a dry run).
	ConditionCordoned = "Cordoned"
	// ConditionProgressing is True while migrations can start or are in
	// flight; False with the phase as reason otherwise.
	ConditionProgressing = "Progressing"
)

// Cordons says whether the drain keeps new Shoots off its seed: every
// SeedDrain does, except a dry run.
func (d *SeedDrain) Cordons() bool {
	return d != nil && !d.Spec.DryRun && d.Spec.SeedName != ""
}
