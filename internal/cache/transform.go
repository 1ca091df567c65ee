package cache

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/placementtoken"
)

// TransformShoot is a client-go TransformFunc that reduces a Shoot to what the
// Store reads (identity, generation, deletion, spec.seedName, spec.schedulerName,
// status.seedName, the control-plane worker pool of a self-hosted Shoot, the
// reservation annotation while status.seedName is unset, and the placement
// token while it is live), so a watch of 100k Shoots stays small (about 550 bytes each).
// The generation is kept for the pending-Shoot controller (internal/pending),
// which retries a pending Shoot at once when its spec changes.
// Anything that is not a Shoot passes through unchanged.
//
// Consequence: a Shoot read from a cache using this transform is NOT a full
// Shoot; code that needs the whole object must read it from the API server.
func TransformShoot(obj any) (any, error) {
	switch o := obj.(type) {
	case *api.Shoot:
		return reduceShoot(o), nil
	case toolscache.DeletedFinalStateUnknown:
		if sh, ok := o.Obj.(*api.Shoot); ok {
			o.Obj = reduceShoot(sh)
		}
		return o, nil
	case *toolscache.DeletedFinalStateUnknown:
		if o != nil {
			if sh, ok := o.Obj.(*api.Shoot); ok {
				return &toolscache.DeletedFinalStateUnknown{Key: o.Key, Obj: reduceShoot(sh)}, nil
			}
		}
		return o, nil
	default:
		return obj, nil
	}
}

// reduceShoot builds a new object rather than clearing fields in place, so the
// large original becomes garbage at once.
func reduceShoot(in *api.Shoot) *api.Shoot {
	if in == nil {
		return nil
	}
	out := &api.Shoot{
		TypeMeta: in.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{
			Name:              in.Name,
			Namespace:         in.Namespace,
			UID:               in.UID,
			ResourceVersion:   in.ResourceVersion,
			Generation:        in.Generation,
			DeletionTimestamp: in.DeletionTimestamp,
		},
		Spec: api.ShootSpec{
			SeedName:      in.Spec.SeedName,
			SchedulerName: in.Spec.SchedulerName,
		},
		Status: api.ShootStatus{SeedName: in.Status.SeedName},
	}
	// A self-hosted Shoot keeps its control-plane pool (name and marker
	// only), so that the retry controller sees it is never pending.
	if pool, ok := api.SelfHostedPool(in); ok {
		out.Spec.Provider.Workers = []api.Worker{{Name: pool, ControlPlane: &api.WorkerControlPlane{}}}
	}
	// The annotation only matters on the event that brings a new Shoot in,
	// before the gardenlet sets status.seedName; a one-entry map costs about
	// a third of the reduced Shoot, so established Shoots do without it.
	if v, ok := in.Annotations[AnnotationReservation]; ok && in.Status.SeedName == nil {
		out.Annotations = map[string]string{AnnotationReservation: v}
	}
	// A live placement token: the Store indexes its nonce (tokens.go).
	if tok, ok := liveToken(in.Annotations, time.Now()); ok {
		if out.Annotations == nil {
			out.Annotations = map[string]string{}
		}
		out.Annotations[placementtoken.Annotation] = tok
	}
	return out
}
