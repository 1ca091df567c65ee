package cache

import (
	"errors"
	"fmt"
	"time"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// Place is where a decision meets the reservations (reservations.go): the
// decision reads the published landscape without the lock, the reservation
// takes it, and a lost race decides again.

// maxPlaceAttempts bounds how often Place decides again after a concurrent
// admission took the last place on the chosen seed.
const maxPlaceAttempts = 5

// Place decides where an existing Shoot goes (the retry controller's
// placement, whose reservation is confirmed from the start: Claim.Exists)
// and, unless key is empty (dry run), reserves a place on that seed under
// key. If a concurrent admission took the last place between deciding and
// reserving, it decides again, so concurrent Place calls never overfill a
// seed.
func (s *Store) Place(shoot *api.Shoot, opts placement.Options, key string) placement.Decision {
	claim := ClaimFor(shoot, key, "")
	claim.Exists, claim.UID = true, string(shoot.UID)
	d, _ := s.place(shoot, opts, claim)
	return d
}

// PlaceReserved is Place for a Shoot being created (the mutating webhook's),
// asked by user where known (Limits.PerUser), and says why a schedulable
// decision holds no reservation: a *LimitError when the Limits refused one
// (the seed had room; the decision stands). It is nil when the place is
// reserved, for a dry run, and for an unschedulable decision.
func (s *Store) PlaceReserved(shoot *api.Shoot, opts placement.Options, key, user string) (placement.Decision, error) {
	return s.place(shoot, opts, ClaimFor(shoot, key, user))
}

func (s *Store) place(shoot *api.Shoot, opts placement.Options, claim Claim) (placement.Decision, error) {
	if claim.Key == "" {
		return s.decide(s.Snapshot(), shoot, opts), nil
	}
	// A retried admission must not compete with its own earlier
	// reservation; nor may retrying keep a place longer than one TTL.
	deadline := s.takeExpiry(claim)
	var (
		d   placement.Decision
		err error
	)
	for range maxPlaceAttempts {
		d = s.decide(s.Snapshot(), shoot, opts)
		if !d.Schedulable() {
			return d, nil
		}
		if err = s.reserve(d.Seed, claim, deadline); err == nil {
			return d, nil
		}
		if limit := (*LimitError)(nil); errors.As(err, &limit) {
			return d, limit
		}
	}
	return placement.Decision{
		Step:    placement.StepCandidates,
		Message: fmt.Sprintf("could not reserve a place after %d attempts: %v", maxPlaceAttempts, err),
		Reasons: map[string]string{d.Seed: err.Error()},
		Total:   d.Total,
	}, nil
}

// reserve is Reserve with reserveLocked's deadline.
func (s *Store) reserve(seed string, c Claim, deadline time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reserveLocked(seed, c, deadline)
}
