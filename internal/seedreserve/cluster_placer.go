package seedreserve

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/metrics"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// Defaults of ClusterPlacer.
const (
	// DefaultClusterPlaceSeeds bounds the seeds one admission tries to
	// reserve across replicas: each costs API round trips, and a landscape
	// where three seeds in a row are full elsewhere is better left to the
	// retry controller than to a slower webhook.
	DefaultClusterPlaceSeeds = 3
	// DefaultClusterPlaceTimeout bounds all tries together, inside the
	// mutating webhook's timeoutSeconds (5).
	DefaultClusterPlaceTimeout = 3 * time.Second
)

// LocalPlacer is what ClusterPlacer needs of this replica's cache
// (cache.Store): deciding with a reservation held in memory, and the seeds.
type LocalPlacer interface {
	// PlaceReserved decides for shoot and, unless key is empty (dry run),
	// holds a place on the chosen seed under key; a *cache.LimitError says
	// the decision stands without one.
	PlaceReserved(shoot *api.Shoot, opts placement.Options, key, user string) (placement.Decision, error)
	Seed(name string) (*placement.Seed, bool)
	Release(key string)
	// ShootKnown reports whether the cache holds a Shoot of that name.
	ShootKnown(namespace, name string) bool
}

var _ LocalPlacer = (*cache.Store)(nil)

// ClusterReserver is what ClusterPlacer needs of a *Reserver: an interface
// so that a test can find seeds full or the API server failing. Keys are
// "<namespace>/<name>" of the Shoot.
type ClusterReserver interface {
	// ReserveFor takes a place on seed for h, or returns a
	// *cache.CapacityError when the seed is full across replicas; a
	// *cache.LimitError means the reservation limits refused a new place.
	ReserveFor(ctx context.Context, seed string, h cache.Holder, allocatable int64) error
	// Check answers what Reserve would, without reserving (dry runs).
	Check(ctx context.Context, seed, key string, allocatable int64) error
}

var _ ClusterReserver = (*Reserver)(nil)

// ClusterPlacer is the mutating webhook's placer (handlers.Placer): Local
// decides and holds the place in this replica's memory; with Cluster
// (capacity.coordination apiserver) the place is then reserved across
// replicas before the webhook answers, under the key the capacity webhook
// takes for the same Shoot ("<namespace>/<name>"), so the Shoot is counted
// once and that webhook admits it. A seed the cluster-wide reservation finds
// full is left out (placement.Options.Exclude) and the decision made again,
// up to Seeds seeds; then, or on any error of Cluster, the Shoot is left
// unplaced (pending, for the retry controller) and nothing stays reserved
// in memory. Dry runs check without reserving, and so does a placement the
// reservation limits leave without a reservation (a *cache.LimitError of
// Local or of Cluster): the Shoot is placed, no reservation is written.
// A replica that does not lead leaves a seed other replicas are writing to
// the leader (Defer, a *DeferredError): no reservation either.
//
// A Shoot with only generateName has no name yet (the API server generates
// it after the mutating webhooks), so its place cannot be reserved under
// the key the capacity webhook will use: it is placed from Local's view
// alone, as without Cluster. So is a CREATE of a name the cache holds: the
// API server refuses it (AlreadyExists) unless the watch lags a deletion,
// and a cluster-wide entry for it would hold a place on any seed for a
// Shoot that will not come (the capacity webhook still reserves across
// replicas for a seed set at CREATE, under the limits).
//
// The entry's identity is key, the request's UID, which the mutating
// webhook writes into the Shoot's seedwarden.io/reservation annotation:
// only the Shoot this request creates confirms it (cache.ShootRef).
type ClusterPlacer struct {
	Local LocalPlacer
	// Cluster reserves across replicas; nil: Local alone decides.
	Cluster ClusterReserver
	// Seeds bounds the seeds tried. Default DefaultClusterPlaceSeeds.
	Seeds int
	// Timeout bounds the cluster-wide reservations of one placement.
	// Default DefaultClusterPlaceTimeout.
	Timeout time.Duration
	// Defer reports whether this replica leaves the reservation of a
	// place on seed to the leader (Reserver.Defers); nil: it never does. A
	// deferred Shoot is admitted without a seed, as at a limit.
	Defer func(seed string) bool
	// Metrics may be nil.
	Metrics *metrics.Recorder
	Log     logr.Logger
}

// Place decides for shoot and holds its place under key (dry run: key
// empty) for user, as the mutating webhook's Placer.
func (p *ClusterPlacer) Place(ctx context.Context, shoot *api.Shoot, opts placement.Options, key, user string) (placement.Decision, error) {
	if p.Cluster == nil || shoot.Name == "" || shoot.Namespace == "" || p.Local.ShootKnown(shoot.Namespace, shoot.Name) {
		return p.Local.PlaceReserved(shoot, opts, key, user)
	}
	clusterKey := shoot.Namespace + "/" + shoot.Name
	timeout, seeds := p.Timeout, p.Seeds
	if timeout <= 0 {
		timeout = DefaultClusterPlaceTimeout
	}
	if seeds <= 0 {
		seeds = DefaultClusterPlaceSeeds
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	var full []string // reasons of the seeds found full, in order
	total := 0
	opts.Exclude = slices.Clone(opts.Exclude)
	for range seeds {
		d, unreserved := p.Local.PlaceReserved(shoot, opts, key, user)
		if !d.Schedulable() {
			// Local reserved nothing.
			return withFull(d, full), nil
		}
		total = d.Total
		holder := cache.Holder{ShootRef: cache.ShootRef{Key: clusterKey, ID: key}, User: user}
		unreserved, err := p.reserve(ctx, d.Seed, holder, key == "", unreserved)
		if err == nil {
			if unreserved != nil && key != "" {
				// Reserved in one place only would be counted where the
				// Shoot cannot end it (it carries no reservation key).
				p.Local.Release(key)
			}
			return d, unreserved
		}
		if key != "" {
			p.Local.Release(key)
		}
		var capErr *cache.CapacityError
		if !errors.As(err, &capErr) {
			p.Log.Info("Could not reserve a place across replicas; leaving the Shoot unplaced",
				"namespace", shoot.Namespace, "name", shoot.Name, "seed", d.Seed, "error", err.Error())
			return placement.Decision{
				Step:    placement.StepCandidates,
				Message: fmt.Sprintf("could not reserve a place on seed %q across replicas: %v", d.Seed, err),
				Total:   d.Total,
			}, nil
		}
		p.Metrics.ObserveClusterCapacityConflict()
		p.Log.V(1).Info("Chosen seed is full across replicas; deciding again without it",
			"namespace", shoot.Namespace, "name", shoot.Name, "seed", d.Seed, "reason", capErr.Error())
		full = append(full, capErr.Error())
		opts.Exclude = append(opts.Exclude, d.Seed)
	}
	return placement.Decision{
		Step: placement.StepCandidates,
		Message: fmt.Sprintf("the %d seeds chosen in turn were full across replicas (%s); the Shoot stays pending and is placed again later",
			len(full), strings.Join(full, "; ")),
		Total: total,
	}, nil
}

// reserve takes a place on seed across replicas, or checks that one is free
// for a dry run. It returns why no place is reserved (why: unreserved, the
// limits' refusal from Local, a *DeferredError, or the Cluster's own
// *cache.LimitError) and
// whether the seed has room (err). Once a limit refused, nothing is placed
// (the mutating webhook admits the Shoot without a seed), so the seed is
// not checked either. A seed without allocatable shoots has no limit to
// share.
func (p *ClusterPlacer) reserve(ctx context.Context, seed string, h cache.Holder, dryRun bool, unreserved error) (why, err error) {
	if unreserved != nil {
		return unreserved, nil
	}
	sd, ok := p.Local.Seed(seed)
	if !ok {
		// Gone since the decision: the capacity webhook denies it anyway.
		return nil, fmt.Errorf("seed %q is no longer in the cache", seed)
	}
	alloc, has := sd.Allocatable()
	if !has {
		return nil, nil
	}
	if dryRun {
		return nil, p.Cluster.Check(ctx, seed, h.Key, alloc)
	}
	if p.Defer != nil && p.Defer(seed) {
		p.Metrics.ObserveReservationDeferred()
		return &DeferredError{Seed: seed}, nil
	}
	err = p.Cluster.ReserveFor(ctx, seed, h, alloc)
	if limit := (*cache.LimitError)(nil); errors.As(err, &limit) {
		return limit, nil
	}
	return nil, err
}

// withFull adds to an unschedulable decision the seeds found full across
// replicas before it, which left the local view with no candidate.
func withFull(d placement.Decision, full []string) placement.Decision {
	if len(full) > 0 {
		d.Message = fmt.Sprintf("%s (after %d seeds were found full across replicas: %s)", d.Message, len(full), strings.Join(full, "; "))
	}
	return d
}
