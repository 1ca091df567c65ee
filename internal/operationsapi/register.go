package operationsapi

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of seedwarden's fleet operations.
const GroupName = "operations.seedwarden.io"

// SchemeGroupVersion is operations.seedwarden.io/v1alpha1.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1alpha1"}

var (
	// SchemeBuilder registers the types of this package.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds the types of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion, &SeedDrain{}, &SeedDrainList{})
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}

// The SeedDrain's kind and resource, as the API server and RBAC name them.
const (
	KindSeedDrain     = "SeedDrain"
	ResourceSeedDrain = "seeddrains"
)
