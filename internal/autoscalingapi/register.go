package autoscalingapi

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of seedwarden's own resources.
const GroupName = "autoscaling.seedwarden.io"

// SchemeGroupVersion is autoscaling.seedwarden.io/v1alpha1.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1alpha1"}

var (
	// SchemeBuilder registers the types of this package.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds the types of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion, &SeedAutoscaler{}, &SeedAutoscalerList{})
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}

// The SeedAutoscaler's kind and resource, as admission requests name them.
const (
	KindSeedAutoscaler     = "SeedAutoscaler"
	ResourceSeedAutoscaler = "seedautoscalers"
)
