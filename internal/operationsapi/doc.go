// Package operationsapi is seedwarden's API for operations on the fleet,
// operations.seedwarden.io/v1alpha1: the SeedDrain, which empties one seed
// by control-plane migration under a budget (docs/draining.md). It also
// holds the Shoot annotations a drain honours (the opt-out) and leaves (the
// record of a move). The CustomResourceDefinition is generated from these
// types (make generate) into deploy/ and the chart.
//
// +kubebuilder:object:generate=true
// +groupName=operations.seedwarden.io
// +versionName=v1alpha1
package operationsapi
