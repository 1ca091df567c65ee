package placement

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/seedwarden/seedwarden/internal/api"
)

func TestSplitRegion(t *testing.T) {
	tests := []struct{ region, base, orientation string }{
		{"southeastasia", ":eastasia", "south"}, // south is checked before east
		{"eu-west-1", "eu-:-1", "west"},
		{"northeurope", ":europe", "north"},
		{"us-central1", "us-:1", "central"},
		{"eastus", ":us", "east"},
		{"ap-jp-1", "ap-jp-1", ""},
		{"", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.region, func(t *testing.T) {
			b, o := splitRegion(tt.region)
			assert.Equal(t, tt.base, b)
			assert.Equal(t, tt.orientation, o)
		})
	}
}

func TestRegionDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"eu-west-1", "eu-west-1", 0},
		{"eu-west-1", "eu-east-1", 2},    // same base, different orientations
		{"eu-west-1", "eu-west-2", 2},    // base distance 1, same orientation
		{"ap-jp-1", "ap-jp-2", 2},        // no orientations
		{"eu-west-1", "eu--1", 1},        // one orientation empty: base "eu-:-1" vs "eu--1" is 1 edit -> 2*1+... see below
		{"westeurope", "northeurope", 2}, // ":europe" both, orientations differ
	}
	// eu-west-1 -> "eu-:-1"; "eu--1" has no orientation, base "eu--1": one deletion -> 2*1+1 = 3.
	tests[4].want = 3
	for _, tt := range tests {
		t.Run(tt.a+"~"+tt.b, func(t *testing.T) {
			assert.Equal(t, tt.want, RegionDistance(tt.a, tt.b))
			assert.Equal(t, tt.want, RegionDistance(tt.b, tt.a), "symmetric")
		})
	}
}

func regionConfigMap(name string, profiles string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "garden", Annotations: map[string]string{api.AnnotationSchedulingCloudProfiles: profiles}},
		Data:       data,
	}
}

func TestStrategies(t *testing.T) {
	seeds := []*api.Seed{
		readySeed("aws-eu-west", withRegion("aws", "eu-west-1")),
		readySeed("aws-eu-central", withRegion("aws", "eu-central-1")),
		readySeed("aws-us-east", withRegion("aws", "us-east-1")),
		readySeed("gcp-eu-west", withRegion("gcp", "eu-west-1")),
	}
	profileAll := NewCloudProfile("aws", &api.CloudProfileSpec{SeedSelector: &api.SeedSelector{ProviderTypes: []string{"*"}}})
	tests := []struct {
		name     string
		strategy Strategy
		shoot    *api.Shoot
		configs  []*corev1.ConfigMap
		want     []string
		wantErr  string
	}{
		{"SameRegion keeps provider and region", SameRegion, basicShoot(), nil, []string{"aws-eu-west"}, ""},
		{"SameRegion with no seed in the region is empty", SameRegion, basicShoot(func(s *api.Shoot) { s.Spec.Region = "ap-jp-1" }), nil, []string{}, ""},
		{"testing purpose keeps the provider, any region", SameRegion, basicShoot(func(s *api.Shoot) {
			s.Spec.Purpose = ptr.To(api.PurposeTesting)
			s.Spec.Region = "ap-jp-1"
		}), nil, []string{"aws-eu-central", "aws-eu-west", "aws-us-east"}, ""},
		{"MinimalDistance by name distance, provider breaks the tie", MinimalDistance, basicShoot(), nil, []string{"aws-eu-west"}, ""},
		{"MinimalDistance by region config", MinimalDistance, basicShoot(), []*corev1.ConfigMap{
			regionConfigMap("a", "aws", map[string]string{"eu-west-1": "us-east-1: 0\neu-west-1: 5\n"}),
		}, []string{"aws-us-east"}, ""},
		{"shoot region defaults to distance 0", MinimalDistance, basicShoot(), []*corev1.ConfigMap{
			regionConfigMap("a", "aws", map[string]string{"eu-west-1": "us-east-1: 3\n"}),
		}, []string{"aws-eu-west", "gcp-eu-west"}, ""},
		{"config listing no seed region falls back to name distance", MinimalDistance, basicShoot(func(s *api.Shoot) { s.Spec.Region = "eu-central-1" }), []*corev1.ConfigMap{
			regionConfigMap("a", "aws", map[string]string{"eu-central-1": "mars-1: 0\n"}),
		}, []string{"aws-eu-central"}, ""},
		{"first config by name wins", MinimalDistance, basicShoot(), []*corev1.ConfigMap{
			regionConfigMap("a", "other,aws", map[string]string{"eu-west-1": "us-east-1: 0\neu-west-1: 9\n"}),
			regionConfigMap("b", "aws", map[string]string{"eu-west-1": "eu-central-1: 0\neu-west-1: 9\n"}),
		}, []string{"aws-us-east"}, ""},
		{"config for another profile is ignored", MinimalDistance, basicShoot(), []*corev1.ConfigMap{
			regionConfigMap("a", "gcp", map[string]string{"eu-west-1": "us-east-1: 0\n"}),
		}, []string{"aws-eu-west"}, ""},
		{"unparsable table for the shoot's region is an error", MinimalDistance, basicShoot(), []*corev1.ConfigMap{
			regionConfigMap("a", "aws", map[string]string{"eu-west-1": "us-east-1: [not, an, int]\n"}),
		}, nil, `data["eu-west-1"]`},
		{"unparsable table of another region does not matter", MinimalDistance, basicShoot(), []*corev1.ConfigMap{
			regionConfigMap("a", "aws", map[string]string{"ap-jp-1": "{{{"}),
		}, []string{"aws-eu-west"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := snapshotOf(nil, seeds...)
			for _, cm := range tt.configs {
				snap.RegionConfigs = append(snap.RegionConfigs, NewRegionConfig(cm))
			}
			d := &decider{snap: snap, shoot: tt.shoot, opts: Options{Strategy: tt.strategy}, profile: profileAll}
			got, err := d.applyStrategy(snap.Seeds)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.ElementsMatch(t, tt.want, names(got))
		})
	}
}

func TestRegionConfigValidate(t *testing.T) {
	rc := NewRegionConfig(regionConfigMap("rc", " aws , gcp ", map[string]string{"a": "b: 1", "c": "d: x", "e": ""}))
	assert.Equal(t, []string{"aws", "gcp"}, rc.CloudProfiles)
	err := rc.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), `garden/rc: data["c"]`)
	assert.NoError(t, NewRegionConfig(regionConfigMap("ok", "aws", map[string]string{"a": "b: 1"})).Validate())
}
