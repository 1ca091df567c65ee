package seeddrain

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ops "github.com/seedwarden/seedwarden/internal/operationsapi"
)

// countsOf counts the entries per state.
func countsOf(entries []ops.ShootStatus) ops.Counts {
	var c ops.Counts
	for _, e := range entries {
		c.Total++
		switch e.State {
		case ops.ShootPlanned:
			c.Planned++
		case ops.ShootWaiting:
			c.Waiting++
		case ops.ShootMigrating:
			c.Migrating++
		case ops.ShootMoved:
			c.Moved++
		case ops.ShootFailed:
			c.Failed++
		case ops.ShootOptedOut:
			c.OptedOut++
		case ops.ShootUnplaceable:
			c.Unplaceable++
		}
	}
	c.Remaining = c.Total - c.Moved
	return c
}

// phaseOf is the drain's phase from its counts, with the message that
// says it in words.
func phaseOf(spec ops.SeedDrainSpec, c ops.Counts, now time.Time) (ops.Phase, string) {
	switch {
	case spec.DryRun:
		return ops.PhasePlanned, fmt.Sprintf("dry run: %d of %d Shoots would move (%d unplaceable, %d opted out)",
			c.Planned+c.Waiting, c.Remaining, c.Unplaceable, c.OptedOut)
	case c.Remaining == 0:
		return ops.PhaseDrained, fmt.Sprintf("the seed holds no Shoot: %d moved", c.Moved)
	case spec.Deadline != nil && !now.Before(spec.Deadline.Time):
		return ops.PhaseDeadlineExceeded, fmt.Sprintf("deadline passed with %d Shoots left (%d migrating)", c.Remaining, c.Migrating)
	case c.Migrating+c.Planned+c.Waiting > 0:
		return ops.PhaseDraining, fmt.Sprintf("%d moved, %d migrating, %d planned, %d waiting", c.Moved, c.Migrating, c.Planned, c.Waiting)
	}
	return ops.PhaseBlocked, fmt.Sprintf("nothing more can move: %d failed, %d unplaceable, %d opted out", c.Failed, c.Unplaceable, c.OptedOut)
}

// setConditions writes Cordoned and Progressing.
func setConditions(d *ops.SeedDrain, phase ops.Phase, message string) {
	cordoned := metav1.Condition{Type: ops.ConditionCordoned, Status: metav1.ConditionTrue, Reason: "SeedDrain",
		Message: fmt.Sprintf("seed %s takes no new Shoots", d.Spec.SeedName), ObservedGeneration: d.Generation}
	if !d.Cordons() {
		cordoned.Status, cordoned.Reason, cordoned.Message = metav1.ConditionFalse, "DryRun", "a dry run cordons nothing"
	}
	meta.SetStatusCondition(&d.Status.Conditions, cordoned)
	progressing := metav1.Condition{Type: ops.ConditionProgressing, Status: metav1.ConditionFalse, Reason: string(phase),
		Message: message, ObservedGeneration: d.Generation}
	if phase == ops.PhaseDraining {
		progressing.Status = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&d.Status.Conditions, progressing)
}

// finish stamps FinishedAt on entries that became Moved or Failed in this
// sync, and reports whether any migration started or ended (progress).
func finish(entries []ops.ShootStatus, prev map[string]ops.ShootStatus, now metav1.Time) (progressed bool) {
	for i := range entries {
		e := &entries[i]
		p, had := prev[keyOf(e.Namespace, e.Name)]
		ended := e.State == ops.ShootMoved || (e.State == ops.ShootFailed && e.StartedAt != nil)
		if ended && (!had || p.State != e.State) {
			if e.FinishedAt == nil {
				e.FinishedAt = &now
			}
			progressed = true
		}
		if e.State == ops.ShootMigrating && (!had || p.State != ops.ShootMigrating) {
			progressed = true
		}
	}
	return progressed
}
