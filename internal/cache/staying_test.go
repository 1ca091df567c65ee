package cache

import (
	"testing"
	"unicode/utf8"

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

// Whatever the Shoot's values, its key decodes to exactly the fields
// CheckStaying reads: the cache's encoding loses nothing and never fails.
func FuzzStayingKey(f *testing.F) {
	f.Add("aws", "", "aws", "t", "v", "eu-access-only", "z", "zone", "env", "prod")
	f.Add("", "NamespacedCloudProfile", "", "", "", "", "", "", "", "")
	f.Add("p\x00\"", "k\\", "\u2028", "a=b", "{}", "[", "]", "", "k", "")
	f.Fuzz(func(t *testing.T, profile, kind, provider, tolKey, tolValue, access, zone, tolerance, labelKey, labelValue string) {
		// The watch decodes Shoots from JSON, whose strings are valid
		// UTF-8 (invalid bytes arrive as U+FFFD): the only strings a key
		// is made of.
		for _, s := range []string{profile, kind, provider, tolKey, tolValue, access, zone, tolerance, labelKey, labelValue} {
			if !utf8.ValidString(s) {
				t.Skip("not valid UTF-8: never in a decoded Shoot")
			}
		}
		spec := api.ShootSpec{
			CloudProfile:       &api.CloudProfileReference{Kind: kind, Name: profile},
			CloudProfileName:   ptr.To(profile),
			Provider:           api.ShootProvider{Type: provider},
			Tolerations:        []api.Toleration{{Key: tolKey, Value: ptr.To(tolValue)}, {Key: tolValue}},
			AccessRestrictions: []api.AccessRestrictionWithOptions{{Name: access, Options: map[string]string{tolKey: tolValue}}},
			SeedSelector:       &api.SeedSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{labelKey: labelValue}}, ProviderTypes: []string{provider}},
			ControlPlane:       &api.ControlPlane{Zones: []string{zone}, HighAvailability: &api.HighAvailability{FailureTolerance: api.FailureTolerance{Type: tolerance}}},
		}
		full := &api.Shoot{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "garden-p"}, Spec: spec}
		full.Spec.SeedName = ptr.To("s")
		full.Spec.Region = "r"
		got, err := reduceShoot(full).StayingKey().Spec()
		require.NoError(t, err)
		assert.Equal(t, spec, got)
	})
}
