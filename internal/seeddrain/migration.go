package seeddrain

import (
	"fmt"
	"time"

	"k8s.io/utils/ptr"

	"github.com/seedwarden/seedwarden/internal/api"
)

// Gardener's lastOperation types and states of a control-plane migration:
// the old seed's gardenlet runs Migrate, then status.seedName becomes the
// new seed and its gardenlet runs Restore.
const (
	opMigrate   = "Migrate"
	opRestore   = "Restore"
	opSucceeded = "Succeeded"
	opFailed    = "Failed"
	opError     = "Error"
)

// progress is where one migration stands.
type progress int

const (
	// running: still migrating (or not yet begun by the gardenlet).
	running progress = iota
	// done: the control plane runs on the destination.
	done
	// failed: Gardener reported the migration failed (Failed or Error).
	failed
)

// migrationOf reads how the migration of shoot from the seed from to the
// seed to stands: done once status.seedName is to and the last operation
// there (Restore, or anything after it) succeeded; failed when a Migrate or
// Restore ended Failed or Error, with Gardener's description.
func migrationOf(shoot *api.Shoot, from, to string) (progress, string) {
	op := shoot.Status.LastOperation
	status := ptr.Deref(shoot.Status.SeedName, "")
	if op != nil && (op.Type == opMigrate || op.Type == opRestore) && (op.State == opFailed || op.State == opError) {
		return failed, fmt.Sprintf("%s %s: %s", op.Type, op.State, op.Description)
	}
	if status == to && status != from && op != nil && op.Type != opMigrate && op.State == opSucceeded {
		return done, ""
	}
	return running, ""
}

// migratingAway says whether a Shoot's control plane is leaving seed:
// status.seedName is seed, spec.seedName another.
func migratingAway(shoot *api.Shoot, seed string) bool {
	spec, status := ptr.Deref(shoot.Spec.SeedName, ""), ptr.Deref(shoot.Status.SeedName, "")
	return status == seed && spec != "" && spec != seed
}

// onSeed says whether a Shoot is on seed and not migrating: spec.seedName
// is seed and status.seedName seed or unset.
func onSeed(shoot *api.Shoot, seed string) bool {
	spec, status := ptr.Deref(shoot.Spec.SeedName, ""), ptr.Deref(shoot.Status.SeedName, "")
	return spec == seed && (status == "" || status == seed)
}

// inWindow says whether now is inside the Shoot's maintenance time window
// (a Shoot without one may move any time); why says when it opens.
func inWindow(shoot *api.Shoot, now time.Time) (ok bool, why string) {
	m := shoot.Spec.Maintenance
	if m == nil || m.TimeWindow == nil {
		return true, ""
	}
	w := m.TimeWindow
	begin, errB := parseWindowTime(w.Begin)
	end, errE := parseWindowTime(w.End)
	if errB != nil || errE != nil {
		return false, fmt.Sprintf("spec.maintenance.timeWindow %q-%q cannot be read: waiting", w.Begin, w.End)
	}
	// Times of day in the zone of begin, as Gardener's window reads them.
	zone := begin.Location()
	tod, b, e := timeOfDay(now.In(zone)), timeOfDay(begin), timeOfDay(end.In(zone))
	inside := tod >= b && tod < e
	if b > e {
		inside = tod >= b || tod < e
	}
	if inside {
		return true, ""
	}
	return false, fmt.Sprintf("waiting for the maintenance window %s-%s", w.Begin, w.End)
}

func timeOfDay(t time.Time) time.Duration {
	return time.Duration(t.Hour())*time.Hour + time.Duration(t.Minute())*time.Minute + time.Duration(t.Second())*time.Second
}

// parseWindowTime reads Gardener's HHMMSS+ZZZZ (220000+0100) as a time on
// day zero in its zone.
func parseWindowTime(v string) (time.Time, error) {
	return time.Parse("150405-0700", v)
}
