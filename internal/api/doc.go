// Package api holds the subset of Gardener's core.gardener.cloud/v1beta1 API
// that seedwarden reads. The Gardener module cannot be fetched here, so these
// are our own structs; JSON names follow Gardener exactly and unknown fields are
// ignored when decoding.
//
// +kubebuilder:object:generate=true
// +groupName=core.gardener.cloud
package api
