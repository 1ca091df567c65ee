package autoscalingapi

// ScaleInPhase is where a scale-in by drain stands.
type ScaleInPhase string

// The phases of a scale-in by drain.
const (
	// ScaleInWaiting: a replica is chosen, the scale-down stabilization
	// window or a policy holds the scale-in back.
	ScaleInWaiting ScaleInPhase = "Waiting"
	// ScaleInDraining: the SeedDrain empties the replica; spec.replicas is
	// not lowered before it is empty.
	ScaleInDraining ScaleInPhase = "Draining"
	// ScaleInRemoving: the replica is empty and spec.replicas was lowered;
	// the SeedDrain keeps it cordoned until Gardener has deleted it.
	ScaleInRemoving ScaleInPhase = "Removing"
	// ScaleInDryRun: the plan, shown and not carried out (no SeedDrain).
	ScaleInDryRun ScaleInPhase = "DryRun"
)

// MaxScaleInMoves bounds status.scaleIn.moves: a replica of more Shoots
// is listed in part (status.scaleIn.shoots counts them all).
const MaxScaleInMoves = 100

// ScaleInStatus is one scale-in by drain.
type ScaleInStatus struct {
	Phase ScaleInPhase `json:"phase"`
	// Replica is the seed to be emptied and removed.
	Replica string `json:"replica"`
	// Replicas is spec.replicas once the replica is gone.
	Replicas int32 `json:"replicas"`
	// Shoots counts the Shoots still to move off the replica.
	Shoots int32 `json:"shoots"`
	// SeedDrain names the SeedDrain that empties the replica (cluster
	// scoped), once created.
	// +optional
	SeedDrain string `json:"seedDrain,omitempty"`
	// Moves are where the Shoots go, as planned (at most MaxScaleInMoves).
	// +optional
	// +kubebuilder:validation:MaxItems=100
	Moves []ScaleInMove `json:"moves,omitempty"`
	// Message says the plan and what it waits for, in words.
	// +optional
	Message string `json:"message,omitempty"`
}

// ScaleInMove is one Shoot's planned destination.
type ScaleInMove struct {
	// Shoot is namespace/name.
	Shoot string `json:"shoot"`
	// To is the seed it goes to.
	To string `json:"to"`
}
