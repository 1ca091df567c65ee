package cache

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/seedwarden/seedwarden/internal/api"
)

func fullShoot() *api.Shoot {
	now := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	sh := shoot("garden-dev", "s1", "seed-b", "seed-a")
	sh.UID = "uid-1"
	sh.ResourceVersion = "42"
	sh.Generation = 3
	sh.DeletionTimestamp = &now
	sh.Labels = map[string]string{"l": "v"}
	sh.Annotations = map[string]string{AnnotationReservation: "req-1", "other": "x"}
	sh.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}
	sh.Finalizers = []string{"gardener"}
	sh.Spec.SchedulerName = ptr.To("seedwarden")
	sh.Spec.Purpose = ptr.To("production")
	sh.Spec.Networking = &api.Networking{Pods: ptr.To("10.0.0.0/16")}
	sh.Status.Networking = &api.NetworkingStatus{Pods: []string{"10.0.0.0/16"}}
	sh.Status.LastOperation = &api.LastOperation{State: "Succeeded"}
	return sh
}

// wantReduced is fullShoot reduced: status.seedName is set, so the
// reservation annotation is gone.
func wantReduced(in *api.Shoot) *api.Shoot {
	return &api.Shoot{
		TypeMeta: in.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{
			Name: in.Name, Namespace: in.Namespace, UID: in.UID, ResourceVersion: in.ResourceVersion,
			Generation: in.Generation, DeletionTimestamp: in.DeletionTimestamp,
		},
		Spec:   api.ShootSpec{SeedName: ptr.To("seed-b"), SchedulerName: ptr.To("seedwarden")},
		Status: api.ShootStatus{SeedName: ptr.To("seed-a")},
	}
}

// expand is the *api.Shoot a transformed object stands for (ShootOf).
func expand(t *testing.T, obj any) *api.Shoot {
	t.Helper()
	sh, ok := ShootOf(obj)
	require.True(t, ok, "%T is not a Shoot", obj)
	return sh
}

func TestTransformShoot(t *testing.T) {
	in := fullShoot()
	out, err := TransformShoot(in)
	require.NoError(t, err)
	assert.Equal(t, wantReduced(fullShoot()), expand(t, out))

	// The reduced Shoot charges the same seeds.
	s := NewStore(Options{})
	s.Apply(out.(*ReducedShoot))
	assert.Equal(t, map[string]int64{"seed-a": 1, "seed-b": 1}, usages(s, "seed-a", "seed-b"))
}

func TestTransformShootKeepsReservationUntilStatusSeed(t *testing.T) {
	in := fullShoot()
	in.Status.SeedName = nil
	out, err := TransformShoot(in)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{AnnotationReservation: "req-1"}, expand(t, out).Annotations)

	// The reduced new Shoot still ends its reservation in the Store.
	s := NewStore(Options{})
	s.Apply(seed("seed-b", 1))
	require.NoError(t, s.Reserve("seed-b", Claim{Key: "req-1", Namespace: "garden-dev", Name: "s1"}))
	s.Apply(out.(*ReducedShoot))
	assert.Equal(t, int64(1), s.Usage("seed-b"))
}

func TestTransformShootWithoutAnnotations(t *testing.T) {
	in := shoot("p", "s", "", "")
	in.Annotations = map[string]string{"other": "x"}
	out, err := TransformShoot(in)
	require.NoError(t, err)
	assert.Nil(t, expand(t, out).Annotations)
	assert.Nil(t, expand(t, out).Spec.SeedName)
}

func TestTransformShootPassesThroughOthers(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}, Data: map[string]string{"a": "b"}}
	for _, in := range []any{cm, seed("a", 1), "a string", nil, (*api.Shoot)(nil)} {
		out, err := TransformShoot(in)
		require.NoError(t, err)
		assert.Equal(t, in, out)
	}
}

func TestTransformShootDeletedFinalStateUnknown(t *testing.T) {
	out, err := TransformShoot(toolscache.DeletedFinalStateUnknown{Key: "garden-dev/s1", Obj: fullShoot()})
	require.NoError(t, err)
	d := out.(toolscache.DeletedFinalStateUnknown)
	assert.Equal(t, "garden-dev/s1", d.Key)
	assert.Equal(t, wantReduced(fullShoot()), expand(t, d.Obj))

	out, err = TransformShoot(&toolscache.DeletedFinalStateUnknown{Key: "garden-dev/s1", Obj: fullShoot()})
	require.NoError(t, err)
	dp := out.(*toolscache.DeletedFinalStateUnknown)
	assert.Equal(t, "garden-dev/s1", dp.Key)
	assert.Equal(t, wantReduced(fullShoot()), expand(t, dp.Obj))

	other := toolscache.DeletedFinalStateUnknown{Key: "x", Obj: seed("a", 1)}
	out, err = TransformShoot(other)
	require.NoError(t, err)
	assert.Equal(t, other, out)

	out, err = TransformShoot((*toolscache.DeletedFinalStateUnknown)(nil))
	require.NoError(t, err)
	assert.Nil(t, out.(*toolscache.DeletedFinalStateUnknown))
}

// A self-hosted Shoot keeps its control-plane pool, and only that, so the
// retry controller can tell it is never pending.
func TestTransformShootKeepsSelfHostedPool(t *testing.T) {
	in := fullShoot()
	in.Spec.Provider.Workers = []api.Worker{
		{Name: "a", Zones: []string{"z1"}},
		{Name: "cp", Zones: []string{"z2"}, ControlPlane: &api.WorkerControlPlane{}},
	}
	out, err := TransformShoot(in)
	require.NoError(t, err)
	want := wantReduced(fullShoot())
	want.Spec.Provider.Workers = []api.Worker{{Name: "cp", ControlPlane: &api.WorkerControlPlane{}}}
	assert.Equal(t, want, expand(t, out))
	pool, ok := api.SelfHostedPool(expand(t, out))
	assert.True(t, ok)
	assert.Equal(t, "cp", pool)
}
