package cache

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/landscapegen"
)

// The reduced Shoot gives back exactly the spec fields CheckStaying reads,
// and Shoots that agree on them share one key.
func TestStayingKey(t *testing.T) {
	full := &api.Shoot{
		ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "garden-p"},
		Spec: api.ShootSpec{
			CloudProfile:       &api.CloudProfileReference{Kind: api.KindNamespacedCloudProfile, Name: "aws-p"},
			CloudProfileName:   ptr.To("aws"),
			Region:             "eu-west-1",
			Provider:           api.ShootProvider{Type: "aws", Workers: []api.Worker{{Name: "pool"}}},
			SeedName:           ptr.To("s"),
			SeedSelector:       &api.SeedSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}, ProviderTypes: []string{"aws"}},
			Tolerations:        []api.Toleration{{Key: "t", Value: ptr.To("v")}},
			ControlPlane:       &api.ControlPlane{Zones: []string{"a"}, HighAvailability: &api.HighAvailability{FailureTolerance: api.FailureTolerance{Type: api.FailureToleranceZone}}},
			AccessRestrictions: []api.AccessRestrictionWithOptions{{Name: "eu-access-only", Options: map[string]string{"k": "v"}}},
		},
	}
	r := reduceShoot(full)
	assert.Equal(t, "s", r.SeedName())
	got, err := r.StayingKey().Spec()
	require.NoError(t, err)
	want := api.ShootSpec{
		CloudProfile: full.Spec.CloudProfile, CloudProfileName: full.Spec.CloudProfileName,
		Provider: api.ShootProvider{Type: "aws"}, SeedSelector: full.Spec.SeedSelector,
		Tolerations: full.Spec.Tolerations, ControlPlane: full.Spec.ControlPlane,
		AccessRestrictions: full.Spec.AccessRestrictions,
	}
	assert.Equal(t, want, got)

	other := full.DeepCopy()
	other.Name, other.Namespace, other.Spec.Region, other.Spec.SeedName = "b", "garden-q", "eu-west-2", ptr.To("s2")
	assert.Equal(t, r.StayingKey(), reduceShoot(other).StayingKey(), "same rules, same key")
	other.Spec.Tolerations = nil
	assert.NotEqual(t, r.StayingKey(), reduceShoot(other).StayingKey())

	other.Spec.SeedName = nil
	assert.True(t, reduceShoot(other).StayingKey().IsZero(), "no seed, nothing kept")
	_, err = reduceShoot(other).StayingKey().Spec()
	assert.Error(t, err)
}

// What the StayingKey adds to each Shoot event the watch delivers
// (BENCHMARKS.md §28): the whole transform, and the key alone.
func BenchmarkTransformShoot(b *testing.B) {
	in := landscapegen.ExistingShoot(1, 1000)
	b.ReportAllocs()
	for b.Loop() {
		_, _ = TransformShoot(in)
	}
}

func BenchmarkStayingKey(b *testing.B) {
	in := landscapegen.ExistingShoot(1, 1000)
	b.ReportAllocs()
	for b.Loop() {
		_ = stayingKeyOf(in)
	}
}
