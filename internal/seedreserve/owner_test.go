package seedreserve

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/cache"
)

// seedRef is the ownerReference a reservation ConfigMap should carry.
func seedRef(name string, uid types.UID) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: "core.gardener.cloud/v1beta1", Kind: "Seed", Name: name, UID: uid}
}

// storeWithSeed is a cache holding seed s (allocatable 5) with uid ("" for none).
func storeWithSeed(uid types.UID) *cache.Store {
	s := cache.NewStore(cache.Options{})
	sd := seedObj("s", 5)
	sd.UID = uid
	s.Apply(sd)
	return s
}

// The reservation ConfigMap is owned by its Seed, so that the garbage
// collector removes it with the Seed; a reference to an earlier Seed of the
// same name is replaced, other owners are kept.
func TestReservationConfigMapOwnedBySeed(t *testing.T) {
	other := metav1.OwnerReference{APIVersion: "v1", Kind: "Namespace", Name: "x", UID: "ns-uid"}
	existing := func(refs ...metav1.OwnerReference) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: testNS, Name: ConfigMapName("s"), OwnerReferences: refs}}
	}
	for _, tc := range []struct {
		name     string
		uid      types.UID // of the Seed in the cache
		existing *corev1.ConfigMap
		want     []metav1.OwnerReference
	}{
		{name: "created", uid: "uid-1", want: []metav1.OwnerReference{seedRef("s", "uid-1")}},
		{name: "created, Seed without UID", uid: "", want: nil},
		{name: "adopted on update", uid: "uid-1", existing: existing(), want: []metav1.OwnerReference{seedRef("s", "uid-1")}},
		{name: "kept on update", uid: "uid-1", existing: existing(seedRef("s", "uid-1")), want: []metav1.OwnerReference{seedRef("s", "uid-1")}},
		{name: "earlier Seed replaced, others kept", uid: "uid-2", existing: existing(other, seedRef("s", "uid-1")),
			want: []metav1.OwnerReference{other, seedRef("s", "uid-2")}},
		{name: "Seed without UID leaves them", uid: "", existing: existing(seedRef("s", "uid-1")), want: []metav1.OwnerReference{seedRef("s", "uid-1")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var objs []client.Object
			if tc.existing != nil {
				objs = append(objs, tc.existing)
			}
			c := newFake(nil, objs...)
			r := newTestReserver(t, c, storeWithSeed(tc.uid), newClock())
			require.NoError(t, r.Reserve(ctx, "s", "garden-dev/a", "", 5))

			cm := &corev1.ConfigMap{}
			require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: testNS, Name: ConfigMapName("s")}, cm))
			assert.Equal(t, tc.want, cm.OwnerReferences)
			for _, ref := range cm.OwnerReferences {
				assert.Nil(t, ref.BlockOwnerDeletion, "blockOwnerDeletion would need update on seeds/finalizers")
			}
		})
	}
}

// A real API server accepts the reference (a cluster-scoped owner of a
// namespaced object). envtest runs no garbage collector, so the deletion
// itself is not tested here.
func TestReservationConfigMapOwnedBySeedAPIServer(t *testing.T) {
	cfg, ns := apiServer(t)
	c, err := NewClient(cfg)
	require.NoError(t, err)
	r := newTestReserver(t, c, storeWithSeed("6d4bc5d2-6c7e-4d3b-a1de-0d6f9c1f2a77"), nil, func(o *Options) { o.Namespace = ns })
	require.NoError(t, r.Reserve(ctx, "s", "garden-dev/a", "", 5))

	cm := &corev1.ConfigMap{}
	require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: ns, Name: ConfigMapName("s")}, cm))
	assert.Equal(t, []metav1.OwnerReference{seedRef("s", "6d4bc5d2-6c7e-4d3b-a1de-0d6f9c1f2a77")}, cm.OwnerReferences)
}
