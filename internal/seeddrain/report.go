package seeddrain

import (
	"context"
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/metrics"
	ops "github.com/seedwarden/seedwarden/internal/operationsapi"
)

func errorsAs(err error, target any) bool { return errors.As(err, target) }

// states are every ShootState, for the gauge's series.
var states = []ops.ShootState{ops.ShootPlanned, ops.ShootWaiting, ops.ShootMigrating, ops.ShootMoved,
	ops.ShootFailed, ops.ShootOptedOut, ops.ShootUnplaceable}

// report writes the status from the entries (blocked: why the drain cannot
// go on at all, or ""), and records the events and metrics of what
// changed since before.
func (r *Reconciler) report(_ context.Context, d *ops.SeedDrain, before *ops.SeedDrainStatus, prev map[string]ops.ShootStatus,
	entries map[string]*ops.ShootStatus, now time.Time, blocked string) {
	stamp := metav1.NewTime(now)
	list := sortedEntries(entries)
	progressed := finish(list, prev, stamp)
	s := &d.Status
	s.ObservedGeneration = d.Generation
	s.Shoots = list
	s.Counts = countsOf(list)
	s.Phase, s.Message = phaseOf(d.Spec, s.Counts, now)
	if blocked != "" {
		s.Phase, s.Message = ops.PhaseBlocked, truncate(blocked)
	}
	if progressed || s.LastProgressTime == nil {
		s.LastProgressTime = &stamp
	}
	setConditions(d, s.Phase, s.Message)
	r.recordEnded(d, prev, list)
	if s.Phase != before.Phase {
		r.recordPhase(d)
	}
	byState := make(map[string]int, len(states))
	for _, st := range states {
		byState[string(st)] = 0
	}
	for _, e := range list {
		byState[string(e.State)]++
	}
	last := s.LastProgressTime.Time
	if d.Spec.DryRun {
		last = time.Time{}
	}
	r.Metrics.SetSeedDrain(d.Name, byState, last)
}

// recordEnded records the migrations that ended since the last sync.
func (r *Reconciler) recordEnded(d *ops.SeedDrain, prev map[string]ops.ShootStatus, list []ops.ShootStatus) {
	for _, e := range list {
		p, had := prev[keyOf(e.Namespace, e.Name)]
		if !had || p.State != ops.ShootMigrating || e.State == ops.ShootMigrating {
			continue
		}
		ref := &api.Shoot{ObjectMeta: metav1.ObjectMeta{Namespace: e.Namespace, Name: e.Name}}
		switch e.State {
		case ops.ShootMoved:
			r.Metrics.CountSeedDrainMigration(metrics.MigrationSucceeded)
			r.Recorder.Eventf(ref, d, corev1.EventTypeNormal, ReasonMigrationSucceeded, actionDrain,
				"control plane migrated from seed %s to %s", d.Spec.SeedName, e.Destination)
		case ops.ShootFailed:
			r.Metrics.CountSeedDrainMigration(metrics.MigrationFailed)
			r.Recorder.Eventf(ref, d, corev1.EventTypeWarning, ReasonMigrationFailed, actionDrain,
				"migration to seed %s failed, not retried by the drain: %s", e.Destination, e.Reason)
		}
	}
}

// recordPhase records the drain's arrival in an end phase.
func (r *Reconciler) recordPhase(d *ops.SeedDrain) {
	switch d.Status.Phase {
	case ops.PhaseDrained:
		r.Recorder.Eventf(d, nil, corev1.EventTypeNormal, ReasonDrained, actionDrain, "%s", d.Status.Message)
	case ops.PhaseBlocked:
		r.Recorder.Eventf(d, nil, corev1.EventTypeWarning, ReasonBlocked, actionDrain, "%s", d.Status.Message)
	case ops.PhaseDeadlineExceeded:
		r.Recorder.Eventf(d, nil, corev1.EventTypeWarning, ReasonDeadlineExceeded, actionDrain, "%s", d.Status.Message)
	}
}
