package placement

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/seedwarden/seedwarden/internal/api"
)

// TestNarrowRule: the seeds a decision tries first are those the strategy
// keeps at best, and nothing is narrowed where fewer seeds could change
// what a later step decides. The equivalence tests hold the decisions to
// the plain filters; this pins which way each case goes.
func TestNarrowRule(t *testing.T) {
	table := func(data string) []*RegionConfig {
		return []*RegionConfig{NewRegionConfig(&corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "rc", Annotations: map[string]string{api.AnnotationSchedulingCloudProfiles: "aws"}},
			Data:       map[string]string{"eu-west-1": data},
		})}
	}
	off := "off"
	for _, tt := range []struct {
		name     string
		strategy Strategy
		scoring  *Profile
		configs  []*RegionConfig
		shoot    func(*api.Shoot)
		provider string // off: not narrowed; "": any provider
		regions  []string
	}{
		{name: "SameRegion", strategy: SameRegion, provider: "aws", regions: []string{"eu-west-1"}},
		{name: "testing", strategy: MinimalDistance, shoot: func(s *api.Shoot) { s.Spec.Purpose = ptr.To(api.PurposeTesting) }, provider: "aws"},
		{name: "testing with RegionDistance", scoring: regionDistanceProfile, shoot: func(s *api.Shoot) { s.Spec.Purpose = ptr.To(api.PurposeTesting) }, provider: "aws"},
		{name: "RegionDistance ranks every region", strategy: SameRegion, scoring: regionDistanceProfile, provider: off},
		{name: "a domain", strategy: SameRegion, shoot: func(s *api.Shoot) { s.Spec.DNS = &api.DNS{Domain: ptr.To("a.example.com")} }, provider: off},
		{name: "an empty domain", strategy: SameRegion, shoot: func(s *api.Shoot) { s.Spec.DNS = &api.DNS{Domain: ptr.To("")} }, provider: "aws", regions: []string{"eu-west-1"}},
		{name: "MinimalDistance by name", strategy: MinimalDistance, provider: "aws", regions: []string{"eu-west-1"}},
		{name: "MinimalDistance by name, ':' in the region", strategy: MinimalDistance, shoot: func(s *api.Shoot) { s.Spec.Region = "x:y" }, provider: off},
		{name: "MinimalDistance, the region without a table", strategy: MinimalDistance, configs: table("eu-west-2: 1"), shoot: func(s *api.Shoot) { s.Spec.Region = "us-east-1" }, provider: "aws", regions: []string{"us-east-1"}},
		{name: "MinimalDistance, ties", strategy: MinimalDistance, configs: table("eu-west-1: 2\neu-west-2: 1\neu-west-3: 1"), provider: "", regions: []string{"eu-west-2", "eu-west-3"}},
		{name: "MinimalDistance, own region unlisted", strategy: MinimalDistance, configs: table("eu-west-2: 0\neu-west-3: 1"), provider: "", regions: []string{"eu-west-1", "eu-west-2"}},
		{name: "MinimalDistance, own region unlisted, others nearer", strategy: MinimalDistance, configs: table("eu-west-2: -1"), provider: "", regions: []string{"eu-west-2"}},
		{name: "MinimalDistance, empty table", strategy: MinimalDistance, configs: table("{}"), provider: "", regions: []string{"eu-west-1"}},
		{name: "MinimalDistance, broken table", strategy: MinimalDistance, configs: table("x: y"), provider: off},
	} {
		t.Run(tt.name, func(t *testing.T) {
			shoot := basicShoot()
			if tt.shoot != nil {
				tt.shoot(shoot)
			}
			d := &decider{
				snap:    &Snapshot{RegionConfigs: tt.configs},
				shoot:   shoot,
				opts:    Options{Strategy: tt.strategy, Scoring: tt.scoring},
				profile: NewCloudProfile("aws", &api.CloudProfileSpec{Type: "aws"}),
			}
			r := d.narrowRule()
			if tt.provider == off {
				require.False(t, r.on)
				return
			}
			require.True(t, r.on)
			require.Equal(t, tt.provider != "", r.byProvider)
			require.Equal(t, tt.provider, r.provider)
			regions := append([]string(nil), r.regions[:r.n]...)
			slices.Sort(regions)
			require.Equal(t, tt.regions, regions)
			for i, name := range r.regions[:r.n] {
				require.Equal(t, strHash(name), r.regionHashes[i])
			}
		})
	}
}

var regionDistanceProfile = &Profile{Scorers: []WeightedScorer{{Name: ScoreRegionDistance, Weight: 1}}}
