package cache

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache/informertest"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllertest"

	"github.com/seedwarden/seedwarden/internal/api"
)

func TestNewScheme(t *testing.T) {
	sch := NewScheme()
	for _, obj := range watchedTypes(true) {
		gvks, _, err := sch.ObjectKinds(obj)
		require.NoError(t, err, "%T", obj)
		assert.NotEmpty(t, gvks)
	}
}

func TestInformerOptions(t *testing.T) {
	o := InformerOptions("my-garden")
	require.Len(t, o.ByObject, 2)
	for obj, by := range o.ByObject {
		switch obj.(type) {
		case *corev1.ConfigMap:
			assert.Equal(t, []string{"my-garden"}, keys(by.Namespaces))
			require.NotNil(t, by.Label)
			assert.True(t, by.Label.Matches(labels.Set{api.LabelSchedulingPurpose: api.LabelSchedulingPurposeRegionConfig}))
			assert.False(t, by.Label.Matches(labels.Set{}))
		case *api.Shoot:
			require.NotNil(t, by.Transform)
			out, err := by.Transform(fullShoot())
			require.NoError(t, err)
			assert.Equal(t, wantReduced(fullShoot()), expand(t, out))
		default:
			t.Errorf("unexpected ByObject entry %T", obj)
		}
	}
	require.NotNil(t, o.DefaultTransform)
	sd := seed("a", 1)
	sd.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "gardenlet"}}
	out, err := o.DefaultTransform(sd)
	require.NoError(t, err)
	assert.Nil(t, out.(*api.Seed).ManagedFields)

	for obj, by := range InformerOptions("").ByObject {
		if _, ok := obj.(*corev1.ConfigMap); ok {
			assert.Equal(t, []string{"garden"}, keys(by.Namespaces), "default garden namespace")
		}
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestEventHandler(t *testing.T) {
	s := NewStore(Options{})
	h := s.EventHandler()
	h.OnAdd(seed("a", 10), true)
	h.OnAdd(shoot("p", "s1", "a", ""), true)
	h.OnAdd(shoot("p", "s2", "a", ""), false)
	assert.Equal(t, int64(2), s.Usage("a"))

	h.OnUpdate(shoot("p", "s1", "a", ""), shoot("p", "s1", "b", "a"))
	assert.Equal(t, map[string]int64{"a": 2, "b": 1}, usages(s, "a", "b"))

	h.OnDelete(shoot("p", "s2", "a", ""))
	h.OnDelete(toolscache.DeletedFinalStateUnknown{Key: "p/s1", Obj: shoot("p", "s1", "", "")})
	assert.Equal(t, map[string]int64{"a": 0, "b": 0}, usages(s, "a", "b"))

	h.OnDelete(&toolscache.DeletedFinalStateUnknown{Key: "a", Obj: seed("a", 10)})
	assert.Empty(t, s.Snapshot().Seeds)

	assert.NotPanics(t, func() {
		h.OnAdd("not an object", false)
		h.OnUpdate(nil, 42)
		h.OnDelete(toolscache.DeletedFinalStateUnknown{Key: "x"})
		h.OnDelete((*toolscache.DeletedFinalStateUnknown)(nil))
		h.OnDelete(nil)
	})
}

func TestRegister(t *testing.T) {
	ctx := context.Background()
	sch := NewScheme()
	shootGVK := api.SchemeGroupVersion.WithKind("Shoot")
	// The Shoot informer has not synced yet; the others have.
	notSynced := controllertest.NewFakeInformer()
	fake := &informertest.FakeInformers{
		Scheme:         sch,
		InformersByGVK: map[schema.GroupVersionKind]toolscache.SharedIndexInformer{shootGVK: notSynced},
	}
	s := NewStore(Options{GardenNamespace: "garden"})
	synced, err := Register(ctx, fake, s)
	require.NoError(t, err)
	assert.False(t, synced())

	get := func(gvk schema.GroupVersionKind) *controllertest.FakeInformer {
		i, err := fake.FakeInformerForKind(ctx, gvk)
		require.NoError(t, err)
		return i
	}

	get(api.SchemeGroupVersion.WithKind("Seed")).Add(seed("a", 10))
	get(api.SchemeGroupVersion.WithKind("CloudProfile")).Add(cloudProfile("aws"))
	get(api.SchemeGroupVersion.WithKind("NamespacedCloudProfile")).Add(&api.NamespacedCloudProfile{ObjectMeta: metav1.ObjectMeta{Namespace: "p", Name: "n"}})
	get(api.SchemeGroupVersion.WithKind("Project")).Add(project("p", "garden-p"))
	get(corev1.SchemeGroupVersion.WithKind("ConfigMap")).Add(regionConfig("garden", "rc", true))
	notSynced.Add(shoot("p", "s1", "a", ""))
	notSynced.Update(shoot("p", "s1", "a", ""), shoot("p", "s1", "a", "a"))
	notSynced.Add(shoot("p", "s2", "a", ""))
	notSynced.Delete(shoot("p", "s2", "a", ""))

	snap := s.Snapshot()
	require.Len(t, snap.Seeds, 1)
	assert.Equal(t, int64(1), snap.Usage(snap.Seeds[0]))
	assert.Contains(t, snap.CloudProfiles, "aws")
	assert.Contains(t, snap.NamespacedCloudProfiles, "p/n")
	assert.Contains(t, snap.Projects, "garden-p")
	assert.Len(t, snap.RegionConfigs, 1)

	assert.False(t, synced())
	notSynced.Synced()
	assert.True(t, synced())
}

func TestRegisterError(t *testing.T) {
	fake := &informertest.FakeInformers{Scheme: NewScheme(), Error: assert.AnError}
	_, err := Register(context.Background(), fake, NewStore(Options{}))
	assert.ErrorIs(t, err, assert.AnError)
}

func TestInformerIndexers(t *testing.T) {
	ns := toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc}
	other := toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc, "x": toolscache.MetaNamespaceIndexFunc}

	inf := NewFreshness().NewInformer(&toolscache.ListWatch{}, &api.Shoot{}, 0, other)
	assert.Equal(t, []string{"x"}, keys(inf.GetIndexer().GetIndexers()), "Shoots: no namespace index")

	inf = NewFreshness().NewInformer(&toolscache.ListWatch{}, &api.Seed{}, 0, ns)
	assert.Equal(t, []string{toolscache.NamespaceIndex}, keys(inf.GetIndexer().GetIndexers()), "others keep it")
	assert.Nil(t, informerIndexers(&api.Shoot{}, nil))
}
