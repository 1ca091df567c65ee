// Package seedscale computes how many replicas a ManagedSeedSet needs for
// its SeedAutoscaler's metrics, with the placement rules: a replica counts
// only for the Shoots that would really go to it. It is pure, like
// internal/placement: the controller and `webhook plan --autoscale` give it
// a landscape and read its recommendation.
package seedscale

import (
	"fmt"
	"time"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/autoscalingapi"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// Set is the ManagedSeedSet as the landscape shows it.
type Set struct {
	// Name is namespace/name, for messages.
	Name string
	// Prefix names new replicas: Prefix-<ordinal>, as Gardener does.
	Prefix string
	// NextOrdinal is the ordinal of the next replica.
	NextOrdinal int32
	// Replicas is the scale subresource's spec.replicas.
	Replicas int32
	// Seeds are the set's registered seeds (its selector's), by name, as
	// in the snapshot.
	Seeds []string
	// Protected are the set's seeds the ManagedSeedSet controller must
	// not delete (the protect-from-deletion annotation).
	Protected map[string]bool
	// Model is the Seed a new replica registers, status.allocatable
	// included; its name is replaced.
	Model *api.Seed
	// ModelSource says what Model was taken from, in words.
	ModelSource string
	// AskedAt is when the replicas above the registered ones were asked
	// for (the last scale-up); zero when unknown, and then they count as
	// room however long they take.
	AskedAt time.Time
	// Failing is the reason of the ManagedSeedSet's status.pendingReplica
	// when it says the replica fails (ShootReconcileFailed, ...), else "":
	// the set is backed off (ReasonBackedOff): its replicas on the way are
	// no room, and it is not asked for more.
	Failing string
}

// Input is everything one recommendation reads.
type Input struct {
	Snapshot *placement.Snapshot
	// Pending are Shoots awaiting a seed, in the order they would be
	// decided (oldest first).
	Pending []*api.Shoot
	Options placement.Options
	Set     Set
	Spec    *autoscalingapi.SeedAutoscalerSpec
	// Profiles are the headroom templates a Headroom metric may name.
	Profiles map[string]*api.Shoot
	// DecodeShoot reads a Headroom metric's inline template
	// (landscape.DecodeShoot).
	DecodeShoot func([]byte) (*api.Shoot, error)
	// Now is the clock the provisioning time is measured on; zero: no
	// replica is ever late.
	Now time.Time
	// Stop, when set, is asked before each simulation and each metric
	// reading; an error ends the recommendation with a *StoppedError and
	// no result. The controller and `plan --autoscale` stop a
	// recommendation past its time budget this way.
	Stop func() error
}

// StoppedError is a recommendation Input.Stop ended after Steps
// simulations and metric readings.
type StoppedError struct {
	Steps int
	Err   error
}

func (e *StoppedError) Error() string {
	return fmt.Sprintf("stopped after %d simulations and metric readings: %v", e.Steps, e.Err)
}

func (e *StoppedError) Unwrap() error { return e.Err }

// MetricResult is one metric's verdict.
type MetricResult struct {
	Type autoscalingapi.MetricSourceType `json:"type"`
	// Name is "shoots", or the Headroom metric's profile (for a template
	// given in the SeedAutoscaler, its metadata.name, else "inline").
	Name string `json:"name"`
	// Target says the target in words ("80% of allocatable").
	Target string `json:"target"`
	// Current is the value at the current replicas.
	Current string `json:"current"`
	// Replicas is the least number of replicas that meets the target,
	// within the bounds; the maximum when none does.
	Replicas int32 `json:"replicas"`
	// Met says whether the target holds at Replicas.
	Met bool `json:"met"`
	// WouldNotHelp says why more seeds of the set would not bring the
	// metric closer to its target, when so.
	WouldNotHelp string `json:"wouldNotHelp,omitempty"`
	// WouldNotHelpCode is that reason's code (placement.ReasonCodes): the
	// code of the new replica's drop, or the decision's own.
	WouldNotHelpCode placement.ReasonCode `json:"wouldNotHelpCode,omitempty"`
}

// Recommendation is what the metrics ask for, before behavior.
type Recommendation struct {
	Set     string `json:"set"`
	Current int32  `json:"current"`
	// Desired is the largest of the metrics' replicas, within
	// [minReplicas, maxReplicas] and never below Floor.
	Desired int32 `json:"desired"`
	// Floor is the least number of replicas the ManagedSeedSet controller
	// can reach without stranding a Shoot: seeds holding Shoots and
	// protected seeds stay.
	Floor   int32          `json:"floor"`
	Metrics []MetricResult `json:"metrics"`
	// PendingPlaced and PendingUnplaced count the pending Shoots that
	// find a seed, or none, at Desired replicas.
	PendingPlaced   int `json:"pendingPlaced"`
	PendingUnplaced int `json:"pendingUnplaced"`
	// Short says a metric is not met even at maxReplicas.
	Short bool `json:"short"`
	// Reason is one word for the outcome, Message the sentence.
	Reason  string `json:"reason"`
	Message string `json:"message"`
	// ModelSource is Set.ModelSource.
	ModelSource string `json:"modelSource"`
	// ForPending is the least number of replicas at which every pending
	// Shoot a new replica would take finds a seed (at most Desired): what
	// the controller scales to in one step, past the behavior's policies,
	// which limit metric-driven growth only.
	ForPending int32 `json:"forPending"`
	// NotReady counts the set's replicas; Late > 0 makes the reason
	// ReplicasNotReady.
	NotReady NotReady `json:"notReady"`
}
