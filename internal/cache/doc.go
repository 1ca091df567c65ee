// Package cache is seedwarden's in-memory view of the garden: the landscape
// (Seeds, CloudProfiles, NamespacedCloudProfiles, Projects, region configs)
// published as an immutable placement.Snapshot, per-seed usage kept
// incrementally from Shoot events, and reservations that hold a place on a seed
// between an admission decision and the Shoot showing up in the watch (like
// kube-scheduler's assume cache).
//
// The Store is fed either by informers (Register) or by static objects
// (package landscape's reader, then Load) for `webhook serve --landscape` and
// `webhook simulate`.
package cache
