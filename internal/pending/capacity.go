package pending

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/types"

	"github.com/seedwarden/seedwarden/internal/cache"
)

// ClusterReserver holds places on seeds across replicas
// (seedreserve.Reserver); see handlers.ClusterReserver.
type ClusterReserver interface {
	Reserve(ctx context.Context, seed, key, user string, allocatable int64) error
}

// reserveAcrossReplicas takes the Shoot's place on seed across replicas
// before the bind, as the capacity webhook would: its matchConditions leave
// this controller's own binds out, so that a bind costs no webhook round
// trip. The key is the Shoot's own, so the place the mutating webhook (of
// any replica) reserved at admission is found and kept, not counted twice.
// Nil Cluster: this replica's Store, which Place and PlaceOn reserved in,
// decides alone (capacity.coordination local).
func (r *Reconciler) reserveAcrossReplicas(ctx context.Context, key types.NamespacedName, seed string) error {
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
	return r.Cluster.Reserve(ctx, seed, key.Namespace+"/"+key.Name, "", alloc)
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
