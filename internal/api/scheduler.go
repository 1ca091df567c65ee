package api

// DefaultSchedulerName is the value Gardener defaults spec.schedulerName to:
// the Shoots gardener-scheduler takes.
const DefaultSchedulerName = "default-scheduler"

// SchedulerNameOf is spec.schedulerName, with Gardener's default for none.
func SchedulerNameOf(s *Shoot) string {
	if s.Spec.SchedulerName == nil || *s.Spec.SchedulerName == "" {
		return DefaultSchedulerName
	}
	return *s.Spec.SchedulerName
}

// Claimable reports whether a scheduler named ours places the Shoot at
// admission: it names ours, or the default scheduler, which a scheduler of
// another name claims by writing its own name into spec.schedulerName (see
// NeedsClaim), so that a gardener-scheduler running beside it leaves the
// Shoot alone.
func Claimable(s *Shoot, ours string) bool {
	name := SchedulerNameOf(s)
	return name == ours || name == DefaultSchedulerName
}

// NeedsClaim reports whether admission must write ours into
// spec.schedulerName for the Shoot to stay with a scheduler named ours.
func NeedsClaim(s *Shoot, ours string) bool {
	return ours != DefaultSchedulerName && SchedulerNameOf(s) != ours
}

// Scheduled reports whether a Shoot without a seed is for a scheduler named
// ours to bind: it names ours (an unclaimed default-scheduler Shoot belongs
// to gardener-scheduler unless ours is the default).
func Scheduled(s *Shoot, ours string) bool {
	return SchedulerNameOf(s) == ours
}

// AwaitsSeed reports whether the Shoot waits for scheduler ours to give it
// a seed: none yet, not being deleted, not self-hosted (no scheduler places
// such a Shoot), and ours to schedule.
func AwaitsSeed(s *Shoot, ours string) bool {
	if s == nil || s.DeletionTimestamp != nil || (s.Spec.SeedName != nil && *s.Spec.SeedName != "") {
		return false
	}
	if _, selfHosted := SelfHostedPool(s); selfHosted {
		return false
	}
	return Scheduled(s, ours)
}

// SelfHostedPool returns the first worker pool with controlPlane set, if any.
// Such a Shoot is self-hosted: its control plane runs in its own cluster, so
// no scheduler places it on a seed (Gardener's scheduler skips it, and its
// API refuses a spec.seedName for it).
func SelfHostedPool(s *Shoot) (pool string, ok bool) {
	for _, w := range s.Spec.Provider.Workers {
		if w.ControlPlane != nil {
			return w.Name, true
		}
	}
	return "", false
}

// OwnAnnotationPrefix starts every annotation seedwarden writes on a Shoot
// (the reservation key, the placement token, the announced seed). They are
// seedwarden's alone: the mutating webhook removes or reverts any a request
// adds or changes.
const OwnAnnotationPrefix = "seedwarden.io/"

// AnnotationUnschedulableReasons is the retry controller's summary of why
// a pending Shoot found no seed (placement.CodeSummary as JSON: step,
// decision code, seeds, seeds per reason code), written when it changes and
// removed on binding. It only informs, it grants nothing, so unlike
// seedwarden's other annotations an update may write it.
const AnnotationUnschedulableReasons = OwnAnnotationPrefix + "unschedulable-reasons"

// Markers an operator sets on a Seed for seedwarden's placement policies
// (issue 39). Annotations, not labels: gardenlet's seed registration
// overwrites a Seed's labels from its configuration but merges
// annotations, and Gardener's taints carry no effect (gardener-apiserver
// refuses a binding to a seed whose taints a Shoot does not tolerate).
const (
	// AnnotationSeedAvoid marks a seed new Shoots go to only when no other
	// seed admits them; its value, the operator's reason, is shown with
	// each decision it affects.
	AnnotationSeedAvoid = OwnAnnotationPrefix + "avoid"
	// AnnotationSeedSoftLimitPercent overrides policies.softLimitPercent
	// for one seed: an integer 0 (none) to 100.
	AnnotationSeedSoftLimitPercent = OwnAnnotationPrefix + "soft-limit-percent"
)
