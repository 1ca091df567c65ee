package pending

import (
	"context"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/placement"
)

type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]

// shootHandler tracks pending Shoots and retries them when a Shoot frees
// capacity. It sees the manager cache's reduced Shoots.
func (r *Reconciler) shootHandler() handler.Funcs {
	return handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, q queue) {
			r.init()
			s, ok := cache.ShootOf(e.Object)
			if !ok || !r.isPending(s) {
				return
			}
			key := client.ObjectKeyFromObject(s)
			r.track(key)
			q.Add(reconcile.Request{NamespacedName: key})
		},
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, q queue) {
			r.init()
			old, ok1 := cache.ShootOf(e.ObjectOld)
			s, ok2 := cache.ShootOf(e.ObjectNew)
			if !ok1 || !ok2 {
				return
			}
			key := client.ObjectKeyFromObject(s)
			switch {
			case r.isPending(s):
				r.track(key)
				// Not on every update: the controller's own status write
				// would otherwise retry at once and defeat the backoff.
				if !r.isPending(old) || old.Generation != s.Generation {
					q.Add(reconcile.Request{NamespacedName: key})
				}
			case r.isPending(old):
				// Placed elsewhere (the webhook cannot, but a user with
				// binding rights can), deleted, or handed to another scheduler.
				r.forget(key)
			}
			if freesCapacity(old, s) {
				r.Store.Apply(s)
				r.enqueueAll(q)
			}
		},
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, q queue) {
			r.init()
			s, ok := cache.ShootOf(e.Object)
			if !ok {
				return
			}
			r.forget(client.ObjectKeyFromObject(s))
			if spec, status := placement.ChargedSeeds(s); spec != "" || status != "" {
				r.Store.Remove(s)
				r.enqueueAll(q)
			}
		},
	}
}

// seedHandler retries every pending Shoot when a Seed appears or changes in
// anything placement reads.
func (r *Reconciler) seedHandler() handler.Funcs {
	return handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, q queue) {
			r.init()
			if sd, ok := e.Object.(*api.Seed); ok {
				r.Store.Apply(sd)
				r.enqueueAll(q)
			}
		},
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, q queue) {
			r.init()
			old, ok1 := e.ObjectOld.(*api.Seed)
			sd, ok2 := e.ObjectNew.(*api.Seed)
			if !ok1 || !ok2 || !seedChanged(old, sd) {
				return
			}
			r.Store.Apply(sd)
			r.enqueueAll(q)
		},
		// A Seed going away cannot make a pending Shoot fit: no retry.
	}
}

// enqueueAll retries every known pending Shoot at once.
func (r *Reconciler) enqueueAll(q queue) {
	for _, key := range r.pendingKeys() {
		q.Add(reconcile.Request{NamespacedName: key})
	}
}

// freesCapacity reports whether some seed charged for old is not charged for
// updated (see placement.ChargedSeeds): a Shoot moved away or finished migrating.
func freesCapacity(old, updated *api.Shoot) bool {
	oldSpec, oldStatus := placement.ChargedSeeds(old)
	newSpec, newStatus := placement.ChargedSeeds(updated)
	for _, seed := range [2]string{oldSpec, oldStatus} {
		if seed != "" && seed != newSpec && seed != newStatus {
			return true
		}
	}
	return false
}

// seedView is what placement reads of a Seed, without timestamps, messages
// and resource versions, so heartbeats do not count as changes.
type seedView struct {
	Labels, Annotations map[string]string
	Deleting            bool
	Spec                api.SeedSpec
	Allocatable         map[string]string
	HasLastOperation    bool
	Conditions          map[string]string
}

func viewOf(s *api.Seed) seedView {
	v := seedView{
		Labels:           s.Labels,
		Annotations:      s.Annotations,
		Deleting:         s.DeletionTimestamp != nil,
		Spec:             s.Spec,
		HasLastOperation: s.Status.LastOperation != nil,
		Conditions:       make(map[string]string, len(s.Status.Conditions)),
		Allocatable:      make(map[string]string, len(s.Status.Allocatable)),
	}
	for _, c := range s.Status.Conditions {
		v.Conditions[c.Type] = c.Status
	}
	for name, q := range s.Status.Allocatable {
		v.Allocatable[string(name)] = q.String()
	}
	return v
}

// seedChanged reports whether placement could decide differently.
func seedChanged(old, updated *api.Seed) bool {
	return !equality.Semantic.DeepEqual(viewOf(old), viewOf(updated))
}
