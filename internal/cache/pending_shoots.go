package cache

import (
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/lru"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/api"
)

// MaxPendingShoots bounds PendingShoots: a burst of new Shoots fits, and a
// flood of Shoots no seed takes costs at most this many decoded Shoots
// (a few KiB each); beyond it the oldest are read from the API server again.
const MaxPendingShoots = 1024

// PendingShoots keeps the latest full Shoot the watch delivered for each
// Shoot awaiting a seed from one scheduler, which the reduced Shoots of the
// informer cache cannot give back: the retry controller decides and binds
// from it instead of reading the Shoot from the API server first. A Shoot
// that gets a seed, is being deleted or leaves the scheduler is dropped;
// a deleted one is dropped by Forget (the watch's final state of a Shoot
// deleted without finalizers can still look pending).
type PendingShoots struct {
	scheduler string
	shoots    *lru.Cache // types.NamespacedName -> *api.Shoot
}

// NewPendingShoots keeps the Shoots that await a seed from scheduler.
func NewPendingShoots(scheduler string) *PendingShoots {
	return &PendingShoots{scheduler: scheduler, shoots: lru.New(MaxPendingShoots)}
}

// Configure makes the Shoot informer of o record pending Shoots before it
// reduces them (TransformShoot).
func (p *PendingShoots) Configure(o *crcache.Options) {
	// ByObject is keyed by pointer: find the Shoot entry by its type.
	var by crcache.ByObject
	if o.ByObject == nil {
		o.ByObject = map[client.Object]crcache.ByObject{}
	}
	for obj, b := range o.ByObject {
		if _, ok := obj.(*api.Shoot); ok {
			by = b
			delete(o.ByObject, obj)
		}
	}
	by.Transform = p.transform
	o.ByObject[&api.Shoot{}] = by
}

func (p *PendingShoots) transform(obj any) (any, error) {
	if s, ok := obj.(*api.Shoot); ok && s != nil {
		p.record(s)
	}
	return TransformShoot(obj)
}

func (p *PendingShoots) record(s *api.Shoot) {
	key := types.NamespacedName{Namespace: s.Namespace, Name: s.Name}
	if !api.AwaitsSeed(s, p.scheduler) {
		p.shoots.Remove(key)
		return
	}
	// Nothing reads them, and they can be most of a Shoot's size.
	s.ManagedFields = nil
	p.shoots.Add(key, s)
}

// Get returns the latest pending version of the Shoot the watch delivered.
// It is shared: callers must not modify it.
func (p *PendingShoots) Get(key types.NamespacedName) (*api.Shoot, bool) {
	v, ok := p.shoots.Get(key)
	if !ok {
		return nil, false
	}
	return v.(*api.Shoot), true
}

// Forget drops the Shoot: it is gone, or what was kept proved outdated.
func (p *PendingShoots) Forget(key types.NamespacedName) { p.shoots.Remove(key) }
