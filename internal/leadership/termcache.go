package leadership

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// termCache is the manager's cache as one term sees it: the same informers
// (no second watch), but every event handler the term adds (a controller's
// source.Kind adds one per watched kind and never removes it) is removed
// when the term ends. Without it each term would leave its handlers
// running on the shared informers, feeding a stopped controller.
type termCache struct {
	cache.Cache

	mu   sync.Mutex
	regs []registration
	done bool
}

type registration struct {
	informer cache.Informer
	handle   toolscache.ResourceEventHandlerRegistration
}

func newTermCache(c cache.Cache) *termCache {
	return &termCache{Cache: c}
}

func (t *termCache) GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error) {
	i, err := t.Cache.GetInformer(ctx, obj, opts...)
	if err != nil {
		return nil, err
	}
	return &termInformer{Informer: i, term: t}, nil
}

func (t *termCache) GetInformerForKind(ctx context.Context, gvk schema.GroupVersionKind, opts ...cache.InformerGetOption) (cache.Informer, error) {
	i, err := t.Cache.GetInformerForKind(ctx, gvk, opts...)
	if err != nil {
		return nil, err
	}
	return &termInformer{Informer: i, term: t}, nil
}

// removeHandlers removes every handler the term added, and any it adds
// later (a source still starting).
func (t *termCache) removeHandlers() {
	t.mu.Lock()
	regs := t.regs
	t.regs, t.done = nil, true
	t.mu.Unlock()
	for _, r := range regs {
		_ = r.informer.RemoveEventHandler(r.handle)
	}
}

func (t *termCache) track(i cache.Informer, h toolscache.ResourceEventHandlerRegistration) {
	t.mu.Lock()
	done := t.done
	if !done {
		t.regs = append(t.regs, registration{informer: i, handle: h})
	}
	t.mu.Unlock()
	if done {
		_ = i.RemoveEventHandler(h)
	}
}

// termInformer records the handlers added through it.
type termInformer struct {
	cache.Informer
	term *termCache
}

func (i *termInformer) AddEventHandler(h toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	reg, err := i.Informer.AddEventHandler(h)
	if err == nil {
		i.term.track(i.Informer, reg)
	}
	return reg, err
}

func (i *termInformer) AddEventHandlerWithResyncPeriod(h toolscache.ResourceEventHandler, resync time.Duration) (toolscache.ResourceEventHandlerRegistration, error) {
	reg, err := i.Informer.AddEventHandlerWithResyncPeriod(h, resync)
	if err == nil {
		i.term.track(i.Informer, reg)
	}
	return reg, err
}

func (i *termInformer) AddEventHandlerWithOptions(h toolscache.ResourceEventHandler, opts toolscache.HandlerOptions) (toolscache.ResourceEventHandlerRegistration, error) {
	reg, err := i.Informer.AddEventHandlerWithOptions(h, opts)
	if err == nil {
		i.term.track(i.Informer, reg)
	}
	return reg, err
}
