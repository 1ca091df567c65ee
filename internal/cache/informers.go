package cache

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	toolscache "k8s.io/client-go/tools/cache"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/operationsapi"
)

// NewScheme returns a scheme with the client-go types and our Gardener types.
func NewScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(api.AddToScheme(s))
	utilruntime.Must(operationsapi.AddToScheme(s))
	return s
}

// InformerOptions returns controller-runtime cache options for the Store's
// informers; see ConfigureInformerOptions. Scheme is left for the manager to fill.
func InformerOptions(gardenNamespace string) crcache.Options {
	var o crcache.Options
	ConfigureInformerOptions(&o, gardenNamespace)
	return o
}

// ConfigureInformerOptions restricts ConfigMaps to region configs in the garden
// namespace (the only ones the Store reads; caching all ConfigMaps would cost
// memory and RBAC), reduces Shoots with TransformShoot, and strips
// managedFields from everything else.
//
// Consequence for other code: the manager's cached client sees only those
// ConfigMaps, and cannot read Shoots at all (the cache holds *ReducedShoot);
// event handlers of Shoot watches get a *ReducedShoot and use ShootOf.
func ConfigureInformerOptions(o *crcache.Options, gardenNamespace string) {
	if gardenNamespace == "" {
		gardenNamespace = DefaultGardenNamespace
	}
	if o.ByObject == nil {
		o.ByObject = map[client.Object]crcache.ByObject{}
	}
	o.ByObject[&corev1.ConfigMap{}] = crcache.ByObject{
		Namespaces: map[string]crcache.Config{gardenNamespace: {}},
		Label: labels.SelectorFromSet(labels.Set{
			api.LabelSchedulingPurpose: api.LabelSchedulingPurposeRegionConfig,
		}),
	}
	o.ByObject[&api.Shoot{}] = crcache.ByObject{Transform: TransformShoot}
	if o.DefaultTransform == nil {
		o.DefaultTransform = crcache.TransformStripManagedFields()
	}
}

// informerIndexers drops the namespace index controller-runtime gives every
// informer from the Shoot informer: at 1M Shoots in a few namespaces it
// holds about 55 bytes per Shoot (BENCHMARKS.md), and nothing lists Shoots
// from the cache (a cached ReducedShoot cannot be read into an *api.Shoot
// anyway; the retry controller reads Shoots from the API server).
func informerIndexers(obj runtime.Object, indexers toolscache.Indexers) toolscache.Indexers {
	if _, ok := obj.(*api.Shoot); !ok || indexers == nil {
		return indexers
	}
	out := toolscache.Indexers{}
	for name, f := range indexers {
		if name != toolscache.NamespaceIndex {
			out[name] = f
		}
	}
	return out
}

// watchedTypes are the objects Register feeds into the Store: SeedDrains
// only when asked (their CRD may not be installed, and an informer of an
// unserved resource never syncs).
func watchedTypes(seedDrains bool) []client.Object {
	objs := []client.Object{
		&api.Seed{},
		&api.Shoot{},
		&api.CloudProfile{},
		&api.NamespacedCloudProfile{},
		&api.Project{},
		&corev1.ConfigMap{},
	}
	if seedDrains {
		objs = append(objs, &operationsapi.SeedDrain{})
	}
	return objs
}

// Register adds Store event handlers to the informers of every watched type.
// It does not block; the returned func reports whether every handler has
// received its informer's initial list (use it for /readyz). The informers
// run when the cache is started.
func Register(ctx context.Context, c crcache.Cache, s *Store) (synced func() bool, err error) {
	var regs []toolscache.ResourceEventHandlerRegistration
	for _, obj := range watchedTypes(s.watchDrains) {
		inf, err := c.GetInformer(ctx, obj, crcache.BlockUntilSynced(false))
		if err != nil {
			return nil, fmt.Errorf("informer for %T: %w", obj, err)
		}
		reg, err := inf.AddEventHandler(s.EventHandler())
		if err != nil {
			return nil, fmt.Errorf("event handler for %T: %w", obj, err)
		}
		regs = append(regs, reg)
	}
	return func() bool {
		for _, r := range regs {
			// A registration has synced once its informer has and every
			// initial event has reached the Store, which is what decisions need.
			if !r.HasSynced() {
				return false
			}
		}
		return true
	}, nil
}

// EventHandler returns an informer event handler feeding this Store.
func (s *Store) EventHandler() toolscache.ResourceEventHandler { return eventHandler{s} }

type eventHandler struct{ s *Store }

func (h eventHandler) OnAdd(obj any, _ bool) {
	if o, ok := obj.(client.Object); ok {
		h.s.Apply(o)
	}
}

func (h eventHandler) OnUpdate(_, newObj any) {
	if o, ok := newObj.(client.Object); ok {
		h.s.Apply(o)
	}
}

func (h eventHandler) OnDelete(obj any) {
	// A delete missed during a watch gap arrives wrapped; the Store only needs
	// the kind, key and identity, which the last known state still has.
	switch d := obj.(type) {
	case toolscache.DeletedFinalStateUnknown:
		obj = d.Obj
	case *toolscache.DeletedFinalStateUnknown:
		if d == nil {
			return
		}
		obj = d.Obj
	}
	if o, ok := obj.(client.Object); ok {
		h.s.Remove(o)
	}
}
