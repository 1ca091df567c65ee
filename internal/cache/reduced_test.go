package cache

import (
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/placementtoken"
)

// reducedAsBefore is what TransformShoot returned before ReducedShoot: the
// reference every ReducedShoot must expand to.
func reducedAsBefore(in *api.Shoot, now time.Time) *api.Shoot {
	out := &api.Shoot{
		TypeMeta: in.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{
			Name: in.Name, Namespace: in.Namespace, UID: in.UID, ResourceVersion: in.ResourceVersion,
			Generation: in.Generation, DeletionTimestamp: in.DeletionTimestamp,
		},
		Spec:   api.ShootSpec{SeedName: in.Spec.SeedName, SchedulerName: in.Spec.SchedulerName},
		Status: api.ShootStatus{SeedName: in.Status.SeedName},
	}
	if pool, ok := api.SelfHostedPool(in); ok {
		out.Spec.Provider.Workers = []api.Worker{{Name: pool, ControlPlane: &api.WorkerControlPlane{}}}
	}
	if v, ok := in.Annotations[AnnotationReservation]; ok && in.Status.SeedName == nil {
		out.Annotations = map[string]string{AnnotationReservation: v}
	}
	if tok, ok := liveToken(in.Annotations, now); ok {
		if out.Annotations == nil {
			out.Annotations = map[string]string{}
		}
		out.Annotations[placementtoken.Annotation] = tok
	}
	return out
}

func TestReducedShootExpandsAsBefore(t *testing.T) {
	token := tokenSigner(t, nil).Sign(placementtoken.Subject{Namespace: "garden-dev", Name: "s1", Seed: "seed-b"})
	for _, tc := range []struct {
		name string
		edit func(*api.Shoot)
	}{
		{"full", func(*api.Shoot) {}},
		{"canonical uuid", func(s *api.Shoot) { s.UID = "6f1c3e0a-9b2d-4c5e-8f70-1a2b3c4d5e6f" }},
		{"upper-case uuid", func(s *api.Shoot) { s.UID = "6F1C3E0A-9B2D-4C5E-8F70-1A2B3C4D5E6F" }},
		{"zero uuid", func(s *api.Shoot) { s.UID = "00000000-0000-0000-0000-000000000000" }},
		{"uuid-shaped, not hex", func(s *api.Shoot) { s.UID = "6f1c3e0a-9b2d-4c5e-8f70-1a2b3c4d5e6z" }},
		{"no uid", func(s *api.Shoot) { s.UID = "" }},
		{"generation beyond uint32", func(s *api.Shoot) { s.Generation = 1 << 40 }},
		{"negative generation", func(s *api.Shoot) { s.Generation = -1 }},
		{"no resourceVersion", func(s *api.Shoot) { s.ResourceVersion = "" }},
		{"resourceVersion 0", func(s *api.Shoot) { s.ResourceVersion = "0" }},
		{"resourceVersion with leading zero", func(s *api.Shoot) { s.ResourceVersion = "007" }},
		{"resourceVersion not a number", func(s *api.Shoot) { s.ResourceVersion = "abc" }},
		{"resourceVersion beyond uint64", func(s *api.Shoot) { s.ResourceVersion = "99999999999999999999" }},
		{"empty seed names", func(s *api.Shoot) {
			s.Spec.SeedName, s.Status.SeedName, s.Spec.SchedulerName = ptr.To(""), ptr.To(""), ptr.To("")
		}},
		{"no seed names", func(s *api.Shoot) { s.Spec.SeedName, s.Status.SeedName, s.Spec.SchedulerName = nil, nil, nil }},
		{"no TypeMeta", func(s *api.Shoot) { s.TypeMeta = metav1.TypeMeta{} }},
		{"other TypeMeta", func(s *api.Shoot) { s.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Other"} }},
		{"not deleting", func(s *api.Shoot) { s.DeletionTimestamp = nil }},
		{"self-hosted", func(s *api.Shoot) {
			s.Spec.Provider.Workers = []api.Worker{{Name: "a"}, {Name: "cp", ControlPlane: &api.WorkerControlPlane{}}}
		}},
		{"reservation, no status seed", func(s *api.Shoot) { s.Status.SeedName = nil }},
		{"live token", func(s *api.Shoot) { s.Annotations[placementtoken.Annotation] = token }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := fullShoot()
			tc.edit(in)
			want := reducedAsBefore(in, time.Now())
			out, err := TransformShoot(in)
			require.NoError(t, err)
			r := out.(*ReducedShoot)
			assert.Equal(t, want, r.Shoot())
			// The metav1.Object view agrees with it.
			assert.Equal(t, want.Name, r.GetName())
			assert.Equal(t, want.Namespace, r.GetNamespace())
			assert.Equal(t, want.UID, r.GetUID())
			assert.Equal(t, want.ResourceVersion, r.GetResourceVersion())
			assert.Equal(t, want.Generation, r.GetGeneration())
			assert.Equal(t, want.DeletionTimestamp, r.GetDeletionTimestamp())
			assert.Equal(t, want.Annotations, r.GetAnnotations())
			assert.Equal(t, want.GroupVersionKind(), r.GetObjectKind().GroupVersionKind())
			// A deep copy is equal and shares nothing that can change.
			cp := r.DeepCopyObject().(*ReducedShoot)
			assert.Equal(t, want, cp.Shoot())
			cp.SetAnnotations(map[string]string{"x": "y"})
			cp.SetUID("other")
			cp.SetResourceVersion("1")
			assert.Equal(t, want, r.Shoot())
		})
	}
}

func TestShootOf(t *testing.T) {
	full := fullShoot()
	got, ok := ShootOf(full)
	assert.True(t, ok)
	assert.Same(t, full, got, "an *api.Shoot is returned as it is")

	for _, in := range []any{nil, (*api.Shoot)(nil), (*ReducedShoot)(nil), seed("a", 1), "x"} {
		got, ok := ShootOf(in)
		assert.False(t, ok, "%T", in)
		assert.Nil(t, got)
	}
}

// A Store fed reduced Shoots through the informer handler counts, keys and
// indexes exactly as one fed the full Shoots.
func TestStoreSameForReducedShoots(t *testing.T) {
	signer := tokenSigner(t, nil)
	shoots := []*api.Shoot{
		shoot("p1", "s1", "a", ""),
		shoot("p1", "s2", "a", "b"),
		shoot("p2", "s1", "b", "b"),
		shoot("p2", "s3", "", ""),
	}
	shoots[3].UID = types.UID("uid-3")
	shoots[3].Annotations = map[string]string{placementtoken.Annotation: signer.Sign(placementtoken.Subject{Namespace: "p2", Name: "s3", Seed: "b"})}
	nonce, _, ok := placementtoken.Nonce(shoots[3].Annotations[placementtoken.Annotation])
	require.True(t, ok)

	full, reduced := NewStore(Options{}), NewStore(Options{})
	for _, sh := range shoots {
		full.Apply(sh)
		out, err := TransformShoot(sh)
		require.NoError(t, err)
		reduced.EventHandler().OnAdd(out, true)
	}
	for _, s := range []*Store{full, reduced} {
		assert.Equal(t, map[string]int64{"a": 2, "b": 2}, usages(s, "a", "b"))
		assert.True(t, s.ShootChargedTo("p1", "s2", "b"))
		assert.False(t, s.ShootChargedTo("p2", "s3", "b"))
		n, charged := s.ShootsOnSeed("b", []ShootRef{{Key: "p1/s1"}, {Key: "p1/s2"}, {Key: "p2/s1"}, {Key: "nope"}})
		assert.Equal(t, int64(2), n)
		assert.Equal(t, []ShootState{ShootElsewhere, ShootOnSeed, ShootOnSeed, ShootAbsent}, charged)
		assert.Equal(t, 2, s.ShootsInNamespace("p2"))
		assert.Equal(t, map[string]int64{"a": 2, "b": 1}, s.Snapshot().ProjectShoots("p1"))
		assert.Equal(t, []placementtoken.Holder{{UID: "uid-3", Namespace: "p2", Name: "s3"}}, s.TokenCarriers(nonce))
	}
	for _, sh := range shoots {
		out, err := TransformShoot(sh)
		require.NoError(t, err)
		reduced.EventHandler().OnDelete(out)
	}
	assert.Equal(t, map[string]int64{"a": 0, "b": 0}, usages(reduced, "a", "b"))
	assert.Empty(t, reduced.TokenCarriers(nonce))
	assert.Zero(t, reduced.ShootsInNamespace("p2"))
}

// The informer holds one ReducedShoot per Shoot: keep it in the 96-byte
// size class (BENCHMARKS.md, heap per Shoot).
func TestReducedShootSize(t *testing.T) {
	assert.LessOrEqual(t, unsafe.Sizeof(ReducedShoot{}), uintptr(96))
}

// A zero ReducedShoot (never made by TransformShoot) is still safe to feed.
func TestZeroReducedShoot(t *testing.T) {
	s := NewStore(Options{})
	assert.NotPanics(t, func() {
		s.Apply(&ReducedShoot{})
		s.Remove(&ReducedShoot{})
		_ = (&ReducedShoot{}).Shoot()
	})
	assert.Equal(t, &api.Shoot{}, (&ReducedShoot{}).Shoot())
}
