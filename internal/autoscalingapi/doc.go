// Package autoscalingapi is seedwarden's own API, autoscaling.seedwarden.io/v1alpha1:
// the SeedAutoscaler, GEP-13's proposed resource that scales a
// ManagedSeedSet through its scale subresource, with seedwarden's Headroom
// metric added. The CustomResourceDefinition is generated from these types
// (make generate) into deploy/ and the chart.
//
// +kubebuilder:object:generate=true
// +groupName=autoscaling.seedwarden.io
// +versionName=v1alpha1
package autoscalingapi
