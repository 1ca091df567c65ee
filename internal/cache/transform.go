package cache

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/placementtoken"
)

// TransformShoot is a client-go TransformFunc that reduces a Shoot to a
// *ReducedShoot holding what the Store and the retry controller read
// (identity, generation, deletion, spec.seedName, spec.schedulerName,
// status.seedName, what placement.CheckStaying reads of a Shoot with a seed
// (one interned StayingKey, staying.go), the control-plane worker pool of a self-hosted Shoot, the
// reservation annotation while status.seedName is unset, and the placement
// token while it is live), so a watch of 100k Shoots stays small (about 300
// bytes a Shoot in the informer and the Store together, BENCHMARKS.md). The generation is kept for the
// pending-Shoot controller (internal/pending), which retries a pending Shoot
// at once when its spec changes. Anything that is not a Shoot passes through
// unchanged.
//
// Consequence: an object read from a cache using this transform is a
// *ReducedShoot, not an *api.Shoot; ShootOf turns it into the reduced
// *api.Shoot, and code that needs the whole object must read it from the
// API server.
func TransformShoot(obj any) (any, error) {
	switch o := obj.(type) {
	case *api.Shoot:
		if o == nil {
			return o, nil // as it came: a typed nil stays one
		}
		return reduceShoot(o), nil
	case toolscache.DeletedFinalStateUnknown:
		if sh, ok := o.Obj.(*api.Shoot); ok && sh != nil {
			o.Obj = reduceShoot(sh)
		}
		return o, nil
	case *toolscache.DeletedFinalStateUnknown:
		if o != nil {
			if sh, ok := o.Obj.(*api.Shoot); ok && sh != nil {
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
func reduceShoot(in *api.Shoot) *ReducedShoot {
	if in == nil {
		return nil
	}
	out := &ReducedShoot{name: in.Name, namespace: intern(in.Namespace)}
	out.setGeneration(in.Generation)
	switch in.TypeMeta {
	case shootTypeMeta:
		out.flags |= typedShoot
	case metav1.TypeMeta{}:
	default:
		out.extraFor().typeMeta = in.TypeMeta
	}
	out.setUID(in.UID)
	out.setResourceVersion(in.ResourceVersion)
	setHandle(&out.seed, &out.flags, hasSeed, in.Spec.SeedName)
	setHandle(&out.statusSeed, &out.flags, hasStatusSeed, in.Status.SeedName)
	setHandle(&out.scheduler, &out.flags, hasScheduler, in.Spec.SchedulerName)
	out.staying = stayingKeyOf(in)
	if in.DeletionTimestamp != nil {
		out.extraFor().deletion = in.DeletionTimestamp
	}
	// A self-hosted Shoot keeps its control-plane pool (name and marker
	// only), so that the retry controller sees it is never pending.
	if pool, ok := api.SelfHostedPool(in); ok {
		x := out.extraFor()
		x.pool, x.selfHosted = pool, true
	}
	// The annotation only matters on the event that brings a new Shoot in,
	// before the gardenlet sets status.seedName; established Shoots do
	// without it.
	if v, ok := in.Annotations[AnnotationReservation]; ok && in.Status.SeedName == nil {
		out.extraFor().annotations = map[string]string{AnnotationReservation: v}
	}
	// A live placement token: the Store indexes its nonce (tokens.go).
	if tok, ok := liveToken(in.Annotations, time.Now()); ok {
		x := out.extraFor()
		if x.annotations == nil {
			x.annotations = map[string]string{}
		}
		x.annotations[placementtoken.Annotation] = tok
	}
	return out
}
