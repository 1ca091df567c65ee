package seedmanagement

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is Gardener's seed management API group.
const GroupName = "seedmanagement.gardener.cloud"

// SchemeGroupVersion is seedmanagement.gardener.cloud/v1alpha1.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1alpha1"}

// Names Gardener gives.
const (
	KindManagedSeedSet = "ManagedSeedSet"
	// AnnotationProtectFromDeletion on a replica's Shoot or ManagedSeed
	// keeps the ManagedSeedSet controller from deleting it on scale-in.
	AnnotationProtectFromDeletion = "seedmanagement.gardener.cloud/protect-from-deletion"
)

var (
	// SchemeBuilder registers the types of this package.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds the types of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion, &ManagedSeedSet{}, &ManagedSeedSetList{})
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}

// ManagedSeedSet is a set of similar seeds, each a Shoot registered as a
// Seed through a ManagedSeed, scaled through its scale subresource.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,shortName=mss
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas
type ManagedSeedSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ManagedSeedSetSpec   `json:"spec"`
	Status ManagedSeedSetStatus `json:"status,omitempty"`
}

// ManagedSeedSetList is a list of ManagedSeedSets.
//
// +kubebuilder:object:root=true
type ManagedSeedSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ManagedSeedSet `json:"items"`
}

// ManagedSeedSetSpec is the part of the spec seedwarden reads.
type ManagedSeedSetSpec struct {
	// Replicas is what the scale subresource reads and writes.
	Replicas *int32 `json:"replicas,omitempty"`
	// Selector matches the set's Shoots, ManagedSeeds and Seeds.
	Selector metav1.LabelSelector `json:"selector"`
	// Template is a new replica's ManagedSeed.
	Template ManagedSeedTemplate `json:"template"`
}

// ManagedSeedTemplate is a ManagedSeed's metadata and spec.
type ManagedSeedTemplate struct {
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              ManagedSeedSpec `json:"spec,omitempty"`
}

// ManagedSeedSpec is the part of a ManagedSeed's spec seedwarden reads.
type ManagedSeedSpec struct {
	// Gardenlet is the gardenlet deployed into the replica's Shoot.
	// +optional
	Gardenlet *Gardenlet `json:"gardenlet,omitempty"`
}

// Gardenlet carries the gardenlet's configuration.
type Gardenlet struct {
	// Config is a GardenletConfiguration: its seedConfig is the Seed the
	// gardenlet registers, its resources the Seed's capacity.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	Config runtime.RawExtension `json:"config,omitempty"`
}

// ManagedSeedSetStatus is the part of the status seedwarden reads.
type ManagedSeedSetStatus struct {
	// Replicas is the number of replicas the controller found.
	Replicas int32 `json:"replicas"`
	// ReadyReplicas counts replicas whose Seed is ready.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`
	// NextReplicaNumber is the ordinal the next replica gets.
	// +optional
	NextReplicaNumber int32 `json:"nextReplicaNumber,omitempty"`
	// PendingReplica is the replica the controller is creating or
	// deleting, and why it is not done.
	// +optional
	PendingReplica *PendingReplica `json:"pendingReplica,omitempty"`
}

// PendingReplica is Gardener's ManagedSeedSet status.pendingReplica.
type PendingReplica struct {
	// Name is the replica's name.
	Name string `json:"name"`
	// Reason says why the replica is pending (PendingReplicaReason).
	Reason string `json:"reason"`
	// Since is when it became pending for this reason.
	// +optional
	Since metav1.Time `json:"since,omitempty"`
	// Retries counts the retries of a failed operation.
	// +optional
	Retries *int32 `json:"retries,omitempty"`
}

// The reasons of a pending replica that say it fails: the controller
// retries it, and an autoscaler should try another set meanwhile. The
// others (ShootReconciling, ManagedSeedPreparing, SeedNotReady, ...) are
// a replica on its way, which the provisioning time bounds.
const (
	PendingReasonShootReconcileFailed = "ShootReconcileFailed"
	PendingReasonShootDeleteFailed    = "ShootDeleteFailed"
)

// Failing says, when the set's pending replica fails, which and why
// ("aws-3: ShootReconcileFailed, 2 retries"); "" otherwise.
func (s *ManagedSeedSetStatus) Failing() string {
	p := s.PendingReplica
	if p == nil || (p.Reason != PendingReasonShootReconcileFailed && p.Reason != PendingReasonShootDeleteFailed) {
		return ""
	}
	if p.Retries != nil {
		return fmt.Sprintf("%s: %s, %d retries", p.Name, p.Reason, *p.Retries)
	}
	return p.Name + ": " + p.Reason
}
