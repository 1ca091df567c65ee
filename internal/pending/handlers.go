package pending

import (
	"context"
	"slices"

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

// shootHandler tracks pending Shoots and wakes those a seed could take when
// a Shoot frees a place on it. It sees the manager cache's reduced Shoots.
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
			if freed := freedSeeds(old, s); len(freed) > 0 {
				r.Store.Apply(s)
				for _, seed := range freed {
					r.wake(q, seed)
				}
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
				if spec != "" {
					r.wake(q, spec)
				}
				if status != "" && status != spec {
					r.wake(q, status)
				}
			}
		},
	}
}

// seedHandler wakes the pending Shoots a Seed could take when it appears or
// changes in anything placement reads (heartbeats do not count).
func (r *Reconciler) seedHandler() handler.Funcs {
	return handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, q queue) {
			r.init()
			if sd, ok := e.Object.(*api.Seed); ok {
				r.Store.Apply(sd)
				r.wake(q, sd.Name)
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
			r.wake(q, sd.Name)
		},
		// A Seed going away cannot make a pending Shoot fit: no retry.
	}
}

// freedSeeds are the seeds charged for old and not for updated (see
// placement.ChargedSeeds): a Shoot moved away or finished migrating.
func freedSeeds(old, updated *api.Shoot) []string {
	oldSpec, oldStatus := placement.ChargedSeeds(old)
	newSpec, newStatus := placement.ChargedSeeds(updated)
	var freed []string
	for _, seed := range [2]string{oldSpec, oldStatus} {
		if seed != "" && seed != newSpec && seed != newStatus && !slices.Contains(freed, seed) {
			freed = append(freed, seed)
		}
	}
	return freed
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
