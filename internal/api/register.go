package api

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is Gardener's core API group.
const GroupName = "core.gardener.cloud"

// SchemeGroupVersion is core.gardener.cloud/v1beta1.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1beta1"}

var (
	// SchemeBuilder registers the types of this package.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds the types of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion,
		&Shoot{}, &ShootList{},
		&Seed{}, &SeedList{},
		&CloudProfile{}, &CloudProfileList{},
		&NamespacedCloudProfile{}, &NamespacedCloudProfileList{},
		&Project{}, &ProjectList{},
	)
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}

// ShootGVK and ShootGVR name the Shoot's kind and resource, which the
// webhooks are registered for.
var (
	ShootGVK = SchemeGroupVersion.WithKind("Shoot")
	ShootGVR = SchemeGroupVersion.WithResource("shoots")
)

// SubresourceBinding is the Shoot subresource through which a seed is bound.
const SubresourceBinding = "binding"
