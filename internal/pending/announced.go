package pending

import (
	"context"
	"errors"
	"time"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/placement"
	"github.com/seedwarden/seedwarden/internal/placementtoken"
)

// Binding the seed the mutating webhook announced (placement mode binding).

// TokenVerifier is placementtoken.Signer's single-use verification: a
// token copied from another Shoot (same generateName prefix) is refused.
type TokenVerifier interface {
	Redeem(token string, s placementtoken.Subject, holder placementtoken.Holder) error
}

// announced keeps the seed the mutating webhook announced for the Shoot, as
// long as its token verifies and the seed still admits the Shoot (see
// cache.Store.PlaceOn): the user was told that seed, and usage that moved
// meanwhile is no reason to pick another. The admission's own reservation
// becomes the binding's (key), so the Shoot is never counted twice. retry,
// when positive, is when to try the announced seed again: it does not admit
// the Shoot here at the moment (waitForAnnounced).
func (r *Reconciler) announced(ctx context.Context, shoot *api.Shoot, key string) (d placement.Decision, kept bool, retry time.Duration) {
	seed := shoot.Annotations[placementtoken.SeedAnnotation]
	admission := shoot.Annotations[cache.AnnotationReservation]
	if seed == "" || r.Verifier == nil || r.announcedRefused(types.NamespacedName{Namespace: shoot.Namespace, Name: shoot.Name}) {
		if admission != "" {
			r.Store.ReleaseFor(admission, shoot.Namespace, shoot.Name)
		}
		return placement.Decision{}, false, 0
	}
	log := ctrl.LoggerFrom(ctx).WithValues("shoot", shoot.Namespace+"/"+shoot.Name, "announcedSeed", seed)
	err := r.Verifier.Redeem(shoot.Annotations[placementtoken.Annotation], placementtoken.Subject{
		Namespace: shoot.Namespace, Name: shoot.Name, GenerateName: shoot.GenerateName, Seed: seed,
	}, placementtoken.Holder{UID: string(shoot.UID), Namespace: shoot.Namespace, Name: shoot.Name})
	if errors.Is(err, placementtoken.ErrReused) {
		// A copy of another Shoot's token: the reservation it names is
		// that Shoot's, not this one's to give back.
		log.Info("Announced seed not taken: the placement token belongs to another Shoot; deciding again", "reason", err.Error())
		return placement.Decision{}, false, 0
	}
	if err != nil {
		log.V(1).Info("Announced seed not taken: its placement token does not verify; deciding again", "reason", err.Error())
		if admission != "" {
			r.Store.ReleaseFor(admission, shoot.Namespace, shoot.Name)
		}
		return placement.Decision{}, false, 0
	}
	if !r.Store.PlaceOn(shoot, r.Options, seed, admission, key) {
		if wait, ok := r.waitForAnnounced(shoot.Namespace, shoot.Name); ok {
			log.V(1).Info("Announced seed does not admit the Shoot here at the moment; trying it again shortly", "after", wait)
			return placement.Decision{}, false, wait
		}
		log.Info("Announced seed no longer admits the Shoot; deciding again")
		return placement.Decision{}, false, 0
	}
	return placement.Decision{Seed: seed}, true, 0
}

// announcedRetries is how many quick retries (the conflict backoff: 50ms,
// doubling) an announced Shoot gets while its seed looks full here, before
// it is decided afresh. In a burst this replica's view of a seed can be full
// for a moment of its own making: the places it reserves for other pending
// Shoots before their bindings are refused across replicas (this replica does
// not see the other replicas' reservations). Deciding afresh then would pick
// a seed the other replicas fill, and a refused binding waits a whole
// backoff (pendingShoots.backoffBase), while the announced seed still holds
// the Shoot's place across replicas.
const announcedRetries = 6

// waitForAnnounced reports whether an announced Shoot whose seed does not
// admit it here should be tried again shortly rather than decided afresh,
// and when.
func (r *Reconciler) waitForAnnounced(namespace, name string) (time.Duration, bool) {
	key := types.NamespacedName{Namespace: namespace, Name: name}
	if r.conflicts.NumRequeues(key) >= announcedRetries {
		return 0, false
	}
	return r.conflicts.When(key), true
}

// distrustAnnounced makes the next attempt for key decide afresh: binding
// the Shoot to its announced seed was refused.
func (r *Reconciler) distrustAnnounced(key types.NamespacedName) {
	r.withState(key, func(st *shootState) { st.announcedRefused = true })
}

func (r *Reconciler) announcedRefused(key types.NamespacedName) bool {
	refused := false
	r.withState(key, func(st *shootState) { refused = st.announcedRefused })
	return refused
}
