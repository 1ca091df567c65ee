package seedmanagement

import (
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
}
