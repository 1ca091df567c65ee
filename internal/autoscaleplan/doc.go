// Package autoscaleplan runs the SeedAutoscaler's recommendation on a
// landscape read once (`webhook plan --autoscale`): it builds, for each
// SeedAutoscaler, seedscale's view of the ManagedSeedSet it names from the
// landscape's Seeds and Shoots with seedscale.NewSet (the controller's
// builder too), and collects what seedscale recommends.
// Offline there is no history, so no behavior (stabilization windows, step
// limits) is applied: the report is the metrics' answer.
//
// It is pure like internal/placement: the caller reads the files.
package autoscaleplan
