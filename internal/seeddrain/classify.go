package seeddrain

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/seedwarden/seedwarden/internal/api"
	ops "github.com/seedwarden/seedwarden/internal/operationsapi"
)

// A sync first sorts what it sees into entries (one per Shoot of the
// drained seed, and per Shoot it moved), then plans the movable ones and
// starts what the budget allows (sync.go).

// observed is what one sync decides from.
type observed struct {
	drain, seed string
	// charged are the Shoots charged to the seed now (spec.seedName or
	// status.seedName), by namespace/name.
	charged map[string]*api.Shoot
	// followed are the Shoots of earlier Migrating or Failed entries that
	// are no longer charged to the seed, read again (nil: deleted).
	followed map[string]*api.Shoot
	// prev are the status's entries, by namespace/name.
	prev map[string]ops.ShootStatus
}

func keyOf(namespace, name string) string { return namespace + "/" + name }

// classify gives every Shoot its entry, and returns the movable ones
// (on the seed, not opted out, not failed before) for the plan.
func classify(o observed) (entries map[string]*ops.ShootStatus, movable []*api.Shoot) {
	entries = map[string]*ops.ShootStatus{}
	for k, s := range o.charged {
		p, had := o.prev[k]
		e := &ops.ShootStatus{Namespace: s.Namespace, Name: s.Name}
		if had {
			e.StartedAt, e.FinishedAt = p.StartedAt, p.FinishedAt
		}
		entries[k] = e
		switch {
		case migratingAway(s, o.seed):
			if e.StartedAt == nil {
				e.StartedAt = startedByDrain(s, o.drain)
			}
			followMigration(e, s, o.seed, ptr.Deref(s.Spec.SeedName, ""))
			if e.State == ops.ShootMigrating && e.StartedAt == nil {
				e.Reason = "migrating away, not started by this drain: waited for"
			}
		case !onSeed(s, o.seed):
			e.State = ops.ShootWaiting
			e.Reason = fmt.Sprintf("migrating onto the seed from %s: moved once that ends", ptr.Deref(s.Status.SeedName, ""))
		case ops.OptedOut(s.Annotations):
			e.State, e.Reason = ops.ShootOptedOut, fmt.Sprintf("annotation %s=true", ops.AnnotationNoDrain)
		case had && p.State == ops.ShootFailed:
			// No blind retry: the reason stays until the drain is made anew.
			e.State, e.Reason, e.Destination = ops.ShootFailed, p.Reason, p.Destination
		default:
			movable = append(movable, s)
		}
	}
	for k, p := range o.prev {
		if _, seen := entries[k]; seen {
			continue
		}
		if e := followGone(p, o, k); e != nil {
			entries[k] = e
		}
	}
	return entries, movable
}

// startedByDrain is when this drain bound the Shoot, from the move it
// recorded on it (a status write lost after the binding does not lose the
// migration's start), or nil.
func startedByDrain(s *api.Shoot, drain string) *metav1.Time {
	m, ok, err := ops.LastMove(s.Annotations)
	if !ok || err != nil || m.Drain != drain || m.To != ptr.Deref(s.Spec.SeedName, "") {
		return nil
	}
	t := metav1.NewTime(m.At)
	return &t
}

// followGone is the entry of a Shoot no longer charged to the seed: one
// this drain moved keeps its record; others (deleted, moved by someone
// else) are dropped.
func followGone(p ops.ShootStatus, o observed, k string) *ops.ShootStatus {
	e := p.DeepCopy()
	switch {
	case p.State == ops.ShootMoved:
		return e
	case p.StartedAt == nil || (p.State != ops.ShootMigrating && p.State != ops.ShootFailed):
		return nil
	}
	s, ok := o.followed[k]
	if !ok {
		// Not read this sync (the read failed): keep it as it was.
		return e
	}
	if s == nil {
		return nil
	}
	followMigration(e, s, o.seed, p.Destination)
	return e
}

// followMigration sets the entry of a Shoot migrating from seed to dest
// from what Gardener reports.
func followMigration(e *ops.ShootStatus, s *api.Shoot, seed, dest string) {
	e.Destination = dest
	switch pr, why := migrationOf(s, seed, dest); pr {
	case done:
		e.State, e.Reason = ops.ShootMoved, ""
	case failed:
		e.State, e.Reason = ops.ShootFailed, why
	default:
		e.State, e.Reason = ops.ShootMigrating, "migration under way"
	}
}
