package pending

import (
	"context"
	"errors"
	"fmt"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/cache"
)

// ClusterReserver holds places on seeds across replicas
// (seedreserve.Reserver); see handlers.ClusterReserver.
type ClusterReserver interface {
	ReserveFor(ctx context.Context, seed string, h cache.Holder, allocatable int64) error
}

// reserveAcrossReplicas takes the Shoot's place on seed across replicas
// before the bind, as the capacity webhook would: its matchConditions leave
// this controller's own binds out, so that a bind costs no webhook round
// trip. The key is the Shoot's own, so the place the mutating webhook (of
// any replica) reserved at admission is found and kept, not counted twice.
// The entry carries the Shoot's uid, read off the Shoot decided from rather
// than looked up in the Store, whose informer handler may not have seen the
// Shoot yet: an entry without it would outlive the Shoot's deletion until
// its expiry, on every replica. The admission's entry, under the identity
// the Shoot carries, is kept as written: no update for an announced Shoot.
// Nil Cluster: this replica's Store, which
// Place and PlaceOn reserved in, decides alone (capacity.coordination local).
func (r *Reconciler) reserveAcrossReplicas(ctx context.Context, shoot *api.Shoot, seed string) error {
	if r.Cluster == nil {
		return nil
	}
	sd, ok := r.Store.Seed(seed)
	if !ok {
		return fmt.Errorf("seed %q: %w", seed, cache.ErrUnknownSeed)
	}
	alloc, limited := sd.Allocatable()
	if !limited {
		return nil
	}
	h := cache.Holder{ShootRef: cache.ShootRef{Key: shoot.Namespace + "/" + shoot.Name, ID: string(shoot.UID)}, Exists: true,
		Announced: shoot.Annotations[cache.AnnotationReservation]}
	return r.Cluster.ReserveFor(ctx, seed, h, alloc)
}

// refusedForCapacity reports whether err is the seed's capacity or the
// reservation limits refusing a place: expected in a burst, retried.
func refusedForCapacity(err error) bool {
	var (
		full  *cache.CapacityError
		limit *cache.LimitError
	)
	return errors.As(err, &full) || errors.As(err, &limit) || errors.Is(err, cache.ErrUnknownSeed)
}
