package pending

import (
	"context"
	"errors"

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
// becomes the binding's (key), so the Shoot is never counted twice.
func (r *Reconciler) announced(ctx context.Context, shoot *api.Shoot, key string) (placement.Decision, bool) {
	seed := shoot.Annotations[placementtoken.SeedAnnotation]
	admission := shoot.Annotations[cache.AnnotationReservation]
	if seed == "" || r.Verifier == nil || r.announcedRefused(types.NamespacedName{Namespace: shoot.Namespace, Name: shoot.Name}) {
		if admission != "" {
			r.Store.Release(admission)
		}
		return placement.Decision{}, false
	}
	log := ctrl.LoggerFrom(ctx).WithValues("shoot", shoot.Namespace+"/"+shoot.Name, "announcedSeed", seed)
	err := r.Verifier.Redeem(shoot.Annotations[placementtoken.Annotation], placementtoken.Subject{
		Namespace: shoot.Namespace, Name: shoot.Name, GenerateName: shoot.GenerateName, Seed: seed,
	}, placementtoken.Holder{UID: string(shoot.UID), Namespace: shoot.Namespace, Name: shoot.Name})
	if errors.Is(err, placementtoken.ErrReused) {
		// A copy of another Shoot's token: the reservation it names is
		// that Shoot's, not this one's to give back.
		log.Info("Announced seed not taken: the placement token belongs to another Shoot; deciding again", "reason", err.Error())
		return placement.Decision{}, false
	}
	if err != nil {
		log.V(1).Info("Announced seed not taken: its placement token does not verify; deciding again", "reason", err.Error())
		if admission != "" {
			r.Store.Release(admission)
		}
		return placement.Decision{}, false
	}
	if !r.Store.PlaceOn(shoot, r.Options, seed, admission, key) {
		log.Info("Announced seed no longer admits the Shoot; deciding again")
		return placement.Decision{}, false
	}
	return placement.Decision{Seed: seed}, true
}

// distrustAnnounced makes the next attempt for key decide afresh: binding
// the Shoot to its announced seed was refused.
func (r *Reconciler) distrustAnnounced(key types.NamespacedName) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.pending[key]; ok {
		r.pending[key] = true
	}
}

func (r *Reconciler) announcedRefused(key types.NamespacedName) bool {
	r.init()
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.pending[key]
}
