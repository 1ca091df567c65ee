package seeddrain

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/metrics"
	ops "github.com/seedwarden/seedwarden/internal/operationsapi"
	"github.com/seedwarden/seedwarden/internal/pending"
)

// Event reasons and the action they record.
const (
	ReasonMigrationStarted   = "MigrationStarted"
	ReasonMigrationSucceeded = "MigrationSucceeded"
	ReasonMigrationFailed    = "MigrationFailed"
	ReasonDrained            = "Drained"
	ReasonBlocked            = "Blocked"
	ReasonDeadlineExceeded   = "DeadlineExceeded"
	actionDrain              = "Drain"
)

// sync observes, plans, starts what the budget allows and reports.
func (r *Reconciler) sync(ctx context.Context, d *ops.SeedDrain) error {
	now := r.now()
	before := d.Status.DeepCopy()
	prev := map[string]ops.ShootStatus{}
	for _, e := range d.Status.Shoots {
		prev[keyOf(e.Namespace, e.Name)] = e
	}
	var entries map[string]*ops.ShootStatus
	if err := d.Spec.Validate(); err != nil {
		entries = map[string]*ops.ShootStatus{}
		for k, e := range prev {
			entries[k] = e.DeepCopy()
		}
		r.report(ctx, d, before, prev, entries, now, err.Error())
		return r.writeStatus(ctx, d, before)
	}
	charged, err := r.listCharged(ctx, d.Spec.SeedName)
	if err != nil {
		return fmt.Errorf("listing the Shoots of seed %s: %w", d.Spec.SeedName, err)
	}
	o := observed{drain: d.Name, seed: d.Spec.SeedName, charged: charged, prev: prev, followed: r.follow(ctx, prev, charged)}
	entries, movable := classify(o)
	var migrating []*api.Shoot
	for _, s := range charged {
		if migratingAway(s, o.seed) {
			migrating = append(migrating, s)
		}
	}
	blocked := ""
	if err := applyPlan(r.Store.Snapshot(), r.Options, o.seed, entries, movable, migrating); err != nil {
		blocked = "cannot plan: " + err.Error()
		for _, s := range movable {
			e := entries[keyOf(s.Namespace, s.Name)]
			e.State, e.Reason = ops.ShootUnplaceable, blocked
		}
	}
	r.start(ctx, d, entries, charged, now)
	r.report(ctx, d, before, prev, entries, now, blocked)
	return r.writeStatus(ctx, d, before)
}

// start starts the Planned Shoots' migrations, in namespace/name order,
// as far as the budget, the deadline and the maintenance windows allow.
func (r *Reconciler) start(ctx context.Context, d *ops.SeedDrain, entries map[string]*ops.ShootStatus, shoots map[string]*api.Shoot, now time.Time) {
	b := budgetOf(d.Spec, entries, now)
	for _, k := range sortedKeys(entries) {
		e, s := entries[k], shoots[k]
		if e.State != ops.ShootPlanned || s == nil {
			continue
		}
		if why := b.wait(d.Spec); why != "" {
			e.Reason = why
			continue
		}
		if d.Spec.RespectMaintenanceWindow {
			if ok, why := inWindow(s, now); !ok {
				e.State, e.Reason = ops.ShootWaiting, why
				continue
			}
		}
		err := r.migrate(ctx, d, s, e.Destination, now)
		switch {
		case err == nil:
			stamp := metav1.NewTime(now)
			e.State, e.StartedAt, e.Reason = ops.ShootMigrating, &stamp, "binding written: migration under way"
			b.take()
			r.Metrics.CountSeedDrainMigration(metrics.MigrationStarted)
			r.Recorder.Eventf(s, d, corev1.EventTypeNormal, ReasonMigrationStarted, actionDrain,
				"SeedDrain %s migrates the control plane from seed %s to %s", d.Name, d.Spec.SeedName, e.Destination)
		case retriable(err):
			e.Reason = truncate(fmt.Sprintf("binding to %s not written, retried next sync: %v", e.Destination, err))
		default:
			e.State, e.Reason = ops.ShootFailed, truncate(fmt.Sprintf("binding to %s refused: %v", e.Destination, err))
			r.Metrics.CountSeedDrainMigration(metrics.MigrationFailed)
			r.Recorder.Eventf(s, d, corev1.EventTypeWarning, ReasonMigrationFailed, actionDrain, "%s", e.Reason)
		}
	}
}

// retriable: the Shoot changed since it was read, or the destination's
// place was taken meanwhile; the next sync plans again.
func retriable(err error) bool {
	var full *cache.CapacityError
	return apierrors.IsConflict(err) || errorsAs(err, &full) || apierrors.IsTooManyRequests(err) || apierrors.IsServerTimeout(err)
}

// migrate reserves the Shoot's place on dest, in this replica and across
// replicas, and binds it there with the record of the move; a failed
// binding gives the place back.
func (r *Reconciler) migrate(ctx context.Context, d *ops.SeedDrain, s *api.Shoot, dest string, now time.Time) error {
	key := cache.ManualReservationKey(s.Namespace, s.Name)
	claim := cache.ClaimFor(s, key, "")
	claim.Exists, claim.UID = true, string(s.UID)
	if err := r.Store.Reserve(dest, claim); err != nil {
		return err
	}
	if err := r.reserveAcrossReplicas(ctx, s, dest); err != nil {
		r.Store.Release(key)
		return err
	}
	move := ops.Move{Drain: d.Name, From: d.Spec.SeedName, To: dest, At: now}
	if err := pending.Bind(ctx, r.Client, r.BindMode, s, dest, map[string]string{ops.AnnotationLastDrainMove: move.Encode()}); err != nil {
		r.Store.Release(key)
		return err
	}
	return nil
}

// reserveAcrossReplicas takes the place in the cluster-wide reservations,
// as the retry controller does before a bind (its binds, and these, are
// left out of the capacity webhook).
func (r *Reconciler) reserveAcrossReplicas(ctx context.Context, s *api.Shoot, dest string) error {
	if r.Cluster == nil {
		return nil
	}
	sd, ok := r.Store.Seed(dest)
	if !ok {
		return fmt.Errorf("seed %q: %w", dest, cache.ErrUnknownSeed)
	}
	alloc, limited := sd.Allocatable()
	if !limited {
		return nil
	}
	h := cache.Holder{ShootRef: cache.ShootRef{Key: s.Namespace + "/" + s.Name, ID: string(s.UID)}, Exists: true}
	return r.Cluster.ReserveFor(ctx, dest, h, alloc)
}

// writeStatus updates the status when it changed.
func (r *Reconciler) writeStatus(ctx context.Context, d *ops.SeedDrain, before *ops.SeedDrainStatus) error {
	if equality.Semantic.DeepEqual(before, &d.Status) {
		return nil
	}
	return r.Client.Status().Update(ctx, d)
}

// sortedEntries are the entries in namespace/name order.
func sortedEntries(entries map[string]*ops.ShootStatus) []ops.ShootStatus {
	out := make([]ops.ShootStatus, 0, len(entries))
	for _, k := range sortedKeys(entries) {
		out = append(out, *entries[k])
	}
	return slices.Clip(out)
}
