package cache

import (
	"cmp"
	"slices"
	"sync"

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

	// keys are the keys in shoots, for List: the LRU cannot be walked.
	mu   sync.Mutex
	keys map[types.NamespacedName]struct{}
}

// NewPendingShoots keeps the Shoots that await a seed from scheduler.
func NewPendingShoots(scheduler string) *PendingShoots {
	p := &PendingShoots{scheduler: scheduler, shoots: lru.New(MaxPendingShoots), keys: map[types.NamespacedName]struct{}{}}
	// Called under the LRU's lock; List never holds mu while calling the LRU.
	_ = p.shoots.SetEvictionFunc(func(k lru.Key, _ any) { p.dropKey(k.(types.NamespacedName)) })
	return p
}

func (p *PendingShoots) dropKey(k types.NamespacedName) {
	p.mu.Lock()
	delete(p.keys, k)
	p.mu.Unlock()
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
	// The value first: a key whose value is gone is dropped by List, a
	// value without its key would be missed.
	p.shoots.Add(key, s)
	p.mu.Lock()
	p.keys[key] = struct{}{}
	p.mu.Unlock()
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
func (p *PendingShoots) Forget(key types.NamespacedName) {
	p.shoots.Remove(key)
	p.dropKey(key)
}

// List returns the pending Shoots kept, oldest first (creation time, then
// namespace and name), as the autoscaler decides them. They are shared:
// callers must not modify them.
func (p *PendingShoots) List() []*api.Shoot {
	p.mu.Lock()
	keys := make([]types.NamespacedName, 0, len(p.keys))
	for k := range p.keys {
		keys = append(keys, k)
	}
	p.mu.Unlock()
	out := make([]*api.Shoot, 0, len(keys))
	for _, k := range keys {
		s, ok := p.Get(k)
		if !ok {
			p.dropKey(k)
			continue
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b *api.Shoot) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return out
}
