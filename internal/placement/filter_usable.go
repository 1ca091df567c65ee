package placement

// filterUsable is step 1, gardener-scheduler's filterUsableSeeds.
func (d *decider) filterUsable(seeds []*Seed) ([]*Seed, Decision) {
	kept := d.filter(seeds, isUsable, usable)
	if len(kept) == 0 {
		code := ReasonCode("")
		if len(seeds) == 0 {
			code = NoSeeds
		}
		return nil, d.fail(StepUsable, code, "none of the %d seeds is valid for scheduling (not deleting, visible and ready)", len(seeds))
	}
	return kept, Decision{}
}

func isUsable(s *Seed) bool { return !s.deleting && s.visible && s.ready && s.cordoned == "" }

// usable: not being deleted, visible to the scheduler and ready, like the
// reference's usable seeds: a seed that is going away takes no new Shoots.
// seedwarden's cordon (a SeedDrain; never in Gardener) drops it too.
func usable(s *Seed) (ReasonCode, string) {
	switch {
	case s.deleting:
		return SeedDeleting, reasonDeleting
	case !s.visible:
		return SeedNotVisible, "seed is not visible for scheduling"
	case !s.ready:
		return SeedNotReady, "seed is not ready (lastOperation, GardenletReady or BackupBucketsReady)"
	case s.cordoned != "":
		return SeedCordoned, s.cordoned
	}
	return "", ""
}

// reasonDeleting explains why a seed with a deletionTimestamp is dropped (and
// why a user may not bind to it, see CheckSeedForShoot).
const reasonDeleting = "seed is being deleted (metadata.deletionTimestamp is set)"
