// Package seedmanagement holds the subset of Gardener's
// seedmanagement.gardener.cloud/v1alpha1 API that seedwarden reads (the
// ManagedSeedSet), and what Gardener's ManagedSeedSet controller does with
// it that the autoscaler must predict: the Seed a new replica registers,
// the replicas' names, and which replica a scale-in removes.
//
// +kubebuilder:object:generate=true
// +groupName=seedmanagement.gardener.cloud
package seedmanagement
