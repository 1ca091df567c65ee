package cache

import (
	"fmt"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// Place is where a decision meets the reservations (reservations.go): the
// decision reads the published landscape without the lock, the reservation
// takes it, and a lost race decides again.

// maxPlaceAttempts bounds how often Place decides again after a concurrent
// admission took the last place on the chosen seed.
const maxPlaceAttempts = 5

// Place decides where the Shoot goes and, unless key is empty (dry run),
// reserves a place on that seed under key. If a concurrent admission took the
// last place between deciding and reserving, it decides again, so concurrent
// Place calls never overfill a seed.
func (s *Store) Place(shoot *api.Shoot, opts placement.Options, key string) placement.Decision {
	if key == "" {
		return s.decide(s.Snapshot(), shoot, opts)
	}
	// A retried admission must not compete with its own earlier reservation.
	s.Release(key)
	var (
		d   placement.Decision
		err error
	)
	for range maxPlaceAttempts {
		d = s.decide(s.Snapshot(), shoot, opts)
		if !d.Schedulable() {
			return d
		}
		if err = s.Reserve(d.Seed, key); err == nil {
			return d
		}
	}
	return placement.Decision{
		Step:    placement.StepCandidates,
		Message: fmt.Sprintf("could not reserve a place after %d attempts: %v", maxPlaceAttempts, err),
		Reasons: map[string]string{d.Seed: err.Error()},
		Total:   d.Total,
	}
}
