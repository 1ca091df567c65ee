// Package pending is the retry controller for Shoots admitted without a seed:
// when nothing fitted at CREATE time the mutating webhook admits the Shoot
// unplaced, and this controller keeps placing it — with the same placement
// code and the same in-memory snapshot as the webhook — until a seed fits,
// then binds it, as gardener-scheduler does.
//
// # What it watches
//
// Shoots (the reduced Shoots of the manager's cache: enough to tell a pending
// Shoot — empty spec.seedName, spec.schedulerName empty or ours, not being
// deleted — and what it charges) and Seeds. It reconciles pending Shoots;
// everything else only wakes them (wake.go):
//
//   - a Seed is created, or changes in anything placement reads (labels,
//     annotations, deletion, spec, allocatable, last operation presence,
//     condition statuses; heartbeat-only updates are ignored), or a place
//     frees on it — a Shoot charged to it is deleted, or its spec/status
//     seedName changes so that the seed is no longer charged: the pending
//     Shoots that seed could take now (placement.Admits on the Store's
//     snapshot) are queued, the longest-pending first, as many as it has
//     free places. A Shoot queued by another wake and not yet tried is left
//     to it, so that seeds registered together wake different Shoots; one
//     that a wake queued and that is bound to another seed, or turns out
//     bound or gone already, wakes that seed again. Shoots the watch holds no full copy of are woken unchecked,
//     after the others, as far as the room goes (at most maxUncheckedWakes);
//   - a pending Shoot's spec changes (metadata.generation): that Shoot is
//     retried at once.
//
// Before such a wake, the handler applies the triggering object to the
// Store itself (harmless twice: the Store skips Seed versions it has seen and
// keeps Shoot charges as differences), so the wake cannot decide on a Store
// whose own informer handler is a step behind.
//
// # Backoff
//
// An attempt that finds no seed requeues the Shoot with RequeueAfter from a
// per-Shoot exponential backoff
// (workqueue.NewTypedItemExponentialFailureRateLimiter: base, 2·base, 4·base,
// … up to the cap: pendingShoots.backoffBase and backoffMax), kept by the
// reconciler rather than the controller's queue. Only the attempt the
// backoff scheduled (or the first) is a failure that steps it; an attempt an
// event triggered before it was due is not, and requeues for the time still
// left (state.go): a flurry of Seed events cannot run a backoff up to its
// cap. A bind that fails otherwise than below is a failure too. Binding
// conflicts (409) and binds the cluster-wide reservations refuse (another
// replica holds the seed's last place, which frees any moment) are retried
// after a separate, short backoff (50ms doubling, up to
// pendingShoots.conflictBackoffMax), stepping nothing, maxQuickRefusals
// times in a row; a refusal beyond that is a failed attempt. Errors reading the
// Shoot are returned to controller-runtime, whose queue uses the same base
// and cap. Success, deletion, or the Shoot getting a seed elsewhere resets
// the Shoot's backoff.
//
// # Binding
//
// The Shoot decided on is the watch's full copy of it (Reconciler.Watched,
// cache.PendingShoots), else a read from the API server. Mode "binding"
// (default) merge-patches spec.seedName through the shoots/binding
// subresource, as gardener-scheduler binds (the binding strategy keeps every
// other field). Mode "update" merge-patches spec.seedName on the main
// resource (for clusters that serve Shoots from a CRD, which has no binding
// subresource); there the controller also removes its own Create/Pending
// status.lastOperation afterwards, which Gardener's binding strategy does by
// itself. Both carry the resourceVersion decided from, so an outdated copy
// fails with a conflict instead of overwriting, and the next attempt reads
// the Shoot; the watch's copy stays (the SeedAutoscaler counts it pending)
// but that version is not decided from again. Where replicas coordinate
// capacity, the place is reserved across replicas first
// (Reconciler.Cluster): the validating webhooks leave the controller's own
// binds out.
//
// # Reservations
//
// Deciding reserves a place on the chosen seed (Store.Place), so concurrent
// admissions and workers see it. The key is ReservationKey — the capacity
// webhook's key for manual placements of that Shoot, so the webhook counts
// the controller's binding once — and the Store ends the reservation when the
// bound Shoot shows up on the seed in the watch (or the TTL passes). A
// binding that fails gives the place back at once.
//
// # Reporting
//
// A failed attempt records a Warning event SchedulingFailed with
// Decision.Summary() (the per-seed reasons, cut to 1024 bytes) and sets
// status.lastOperation to type Create, state Pending with that description
// (skipped when it already says exactly that, so retries do not rewrite the
// Shoot; conditional on the resourceVersion read, so a Shoot bound meanwhile
// is not marked pending). A binding that fails other than by a conflict gives
// the reserved place back and records a Warning event SchedulingFailed
// (action Bind) with the error; a 404 is not taken for a deleted Shoot — the
// next attempt's read tells — because in binding mode it also means the API
// server has no binding subresource (Shoots from a CRD), which the event then
// says; a run of refusals by the cluster-wide reservations records one. A
// successful attempt records a Normal event Scheduled. Metrics:
// seedwarden_pending_shoots, seedwarden_pending_shoots_longest_backoff_seconds
// and seedwarden_scheduling_retries_total{result} (scheduled, unschedulable,
// conflict, refused, error).
//
// Retries are not triggered by CloudProfile, Project or region-config
// changes, nor by reservations expiring; the backoff covers those.
//
// The controller needs leader election (controller-runtime's default), so
// only the leader binds.
package pending

import (
	"errors"
	"fmt"
	"time"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/cache"
)

// Mode is how a placement is written.
type Mode string

const (
	// BindThroughSubresource updates the shoots/binding subresource (Gardener).
	BindThroughSubresource Mode = "binding"
	// BindThroughUpdate merge-patches spec.seedName on the main resource (CRDs).
	BindThroughUpdate Mode = "update"
)

// DefaultSchedulerName is Config.SchedulerName's default.
const DefaultSchedulerName = api.DefaultSchedulerName

// ControllerName names the controller (logs, controller-runtime metrics).
const ControllerName = "pending-shoots"

// EventRecorderName is the reporting controller of the events.
const EventRecorderName = "seedwarden-scheduler"

// Event reasons.
const (
	ReasonSchedulingFailed = "SchedulingFailed"
	// ReasonSchedulingSuccessful is gardener-scheduler's reason, so alerts
	// and queries written for it keep working.
	ReasonSchedulingSuccessful = "SchedulingSuccessful"
)

// MaxMessageBytes bounds event notes and the lastOperation description
// (events.k8s.io/v1 rejects notes over 1 KiB).
const MaxMessageBytes = 1024

// ReservationKey is the key under which the controller reserves a place for
// the Shoot namespace/name: cache.ManualReservationKey, the key the capacity
// webhook uses for every binding (and spec.seedName update) of that Shoot.
// Sharing it makes the webhook find the place already held when the
// controller's own binding comes through (Reserve of the same key on the same
// seed changes nothing) instead of counting the Shoot twice and refusing the
// last free place; and the Store ends it when the Shoot shows up on that seed
// in the watch.
func ReservationKey(namespace, name string) string {
	return cache.ManualReservationKey(namespace, name)
}

// Config configures the controller. Mode, the three backoff durations and Workers are
// required: cmd/webhook passes the configuration's pendingShoots, whose
// defaults internal/config defines.
type Config struct {
	// Mode is BindThroughSubresource or BindThroughUpdate.
	Mode Mode
	// SchedulerName: Shoots without a seed whose spec.schedulerName is this
	// are placed (api.Scheduled; empty counts as "default-scheduler", the
	// default).
	SchedulerName string
	// BackoffBase is the wait after the first failed attempt; it doubles
	// per failure up to BackoffMax.
	BackoffBase time.Duration
	BackoffMax  time.Duration
	// ConflictBackoffMax caps the short backoff (conflictBackoffBase,
	// doubling) of a bind that lost a conflict or that the cluster-wide
	// reservations refused; at most BackoffMax.
	ConflictBackoffMax time.Duration
	// Workers is the number of concurrent reconciles. Placement
	// reserves atomically, so workers never overfill a seed.
	Workers int
}

// Default fills in SchedulerName when unset.
func (c *Config) Default() {
	if c.SchedulerName == "" {
		c.SchedulerName = DefaultSchedulerName
	}
}

// Validate names every invalid field and its value (after Default).
func (c Config) Validate() error {
	var errs []error
	switch c.Mode {
	case BindThroughSubresource, BindThroughUpdate:
	default:
		errs = append(errs, fmt.Errorf("mode: unsupported value %q (want %q or %q)", c.Mode, BindThroughSubresource, BindThroughUpdate))
	}
	if c.BackoffBase <= 0 {
		errs = append(errs, fmt.Errorf("backoffBase: %s must be positive", c.BackoffBase))
	}
	if c.BackoffMax < c.BackoffBase {
		errs = append(errs, fmt.Errorf("backoffMax: %s must not be less than backoffBase %s", c.BackoffMax, c.BackoffBase))
	}
	if c.ConflictBackoffMax <= 0 || c.ConflictBackoffMax > c.BackoffMax {
		errs = append(errs, fmt.Errorf("conflictBackoffMax: %s must be positive and at most backoffMax %s", c.ConflictBackoffMax, c.BackoffMax))
	}
	if c.Workers < 1 {
		errs = append(errs, fmt.Errorf("workers: %d must be at least 1", c.Workers))
	}
	return errors.Join(errs...)
}
