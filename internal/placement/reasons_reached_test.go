package placement

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/seedwarden/seedwarden/internal/api"
)

// TestReasonCodesReached shows each code of ReasonCodes on a decision that
// gives it, and fails for a listed code no case reaches: a code nobody can
// see is a documented promise the decisions do not keep. Seed codes are
// looked for on seed "x".
func TestReasonCodesReached(t *testing.T) {
	sameRegion := Options{Strategy: SameRegion, NetworkMode: Disjoint}
	minimal := Options{Strategy: MinimalDistance, NetworkMode: Disjoint}
	now := metav1.Now()
	bogus := metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: "Bogus"}}}
	tainted := withTaints(api.SeedTaint{Key: "dedicated"})
	domains := func(d ...string) func(*api.Seed) {
		return func(s *api.Seed) {
			for _, x := range d {
				s.Spec.DNS.Defaults = append(s.Spec.DNS.Defaults, api.SeedDNSProviderConfig{Domain: x})
			}
		}
	}
	withProfile := func(spec api.CloudProfileSpec) func(*Snapshot) {
		return func(s *Snapshot) { s.CloudProfiles["aws"] = NewCloudProfile("aws", &spec) }
	}
	badRegionConfig := func(s *Snapshot) {
		s.RegionConfigs = []*RegionConfig{NewRegionConfig(&corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "rc", Annotations: map[string]string{api.AnnotationSchedulingCloudProfiles: "aws"}},
			Data:       map[string]string{"eu-west-1": "not: [yaml"},
		})}
	}
	net := func(f func(*api.Networking)) func(*api.Shoot) {
		return func(s *api.Shoot) { s.Spec.Networking = &api.Networking{}; f(s.Spec.Networking) }
	}
	tests := []struct {
		code  ReasonCode
		seeds []*api.Seed
		snap  func(*Snapshot)
		shoot *api.Shoot
		opts  Options
	}{
		{code: ShootSelfHosted, seeds: []*api.Seed{readySeed("x")}, shoot: basicShoot(func(s *api.Shoot) {
			s.Spec.Provider.Workers[0].ControlPlane = &api.WorkerControlPlane{}
		})},
		{code: CloudProfileUnset, seeds: []*api.Seed{readySeed("x")}, shoot: basicShoot(func(s *api.Shoot) { s.Spec.CloudProfileName = nil })},
		{code: CloudProfileNotFound, seeds: []*api.Seed{readySeed("x")}, shoot: basicShoot(func(s *api.Shoot) { s.Spec.CloudProfileName = ptr.To("nope") })},
		{code: CloudProfileKindUnsupported, seeds: []*api.Seed{readySeed("x")}, shoot: basicShoot(func(s *api.Shoot) {
			s.Spec.CloudProfile = &api.CloudProfileReference{Kind: "Other", Name: "aws"}
		})},
		{code: ProjectNotFound, seeds: []*api.Seed{readySeed("x")}, shoot: basicShoot(func(s *api.Shoot) { s.Namespace = "garden-other" })},
		{code: NoSeeds, shoot: basicShoot()},
		{code: SeedDeleting, seeds: []*api.Seed{readySeed("x", func(s *api.Seed) { s.DeletionTimestamp = &now })}, shoot: basicShoot()},
		{code: SeedNotVisible, seeds: []*api.Seed{readySeed("x", func(s *api.Seed) {
			s.Spec.Settings = &api.SeedSettings{Scheduling: &api.SeedSettingScheduling{Visible: false}}
		})}, shoot: basicShoot()},
		{code: SeedNotReady, seeds: []*api.Seed{readySeed("x", func(s *api.Seed) { s.Status.LastOperation = nil })}, shoot: basicShoot()},
		{code: SeedCordoned, seeds: []*api.Seed{readySeed("x")}, snap: func(s *Snapshot) { s.Seeds[0] = s.Seeds[0].WithCordon("SeedDrain d cordons it") }, shoot: basicShoot()},
		{code: CloudProfileSelectorInvalid, seeds: []*api.Seed{readySeed("x")}, shoot: basicShoot(),
			snap: withProfile(api.CloudProfileSpec{Type: "aws", SeedSelector: &api.SeedSelector{LabelSelector: bogus}})},
		{code: CloudProfileSelectorMismatch, seeds: []*api.Seed{readySeed("x")}, shoot: basicShoot(),
			snap: withProfile(api.CloudProfileSpec{Type: "aws", SeedSelector: &api.SeedSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}}})},
		{code: ShootSelectorInvalid, seeds: []*api.Seed{readySeed("x")}, shoot: basicShoot(func(s *api.Shoot) {
			s.Spec.SeedSelector = &api.SeedSelector{LabelSelector: bogus}
		})},
		{code: ShootSelectorMismatch, seeds: []*api.Seed{readySeed("x")}, shoot: basicShoot(func(s *api.Shoot) {
			s.Spec.SeedSelector = &api.SeedSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}}
		})},
		{code: ProviderMismatch, seeds: []*api.Seed{readySeed("x", withRegion("gcp", "eu-west-1"))}, shoot: basicShoot()},
		{code: ProviderNotEnabled, seeds: []*api.Seed{readySeed("x")}, shoot: basicShoot(),
			snap: withProfile(api.CloudProfileSpec{Type: "aws", SeedSelector: &api.SeedSelector{ProviderTypes: []string{"gcp"}}})},
		{code: TooFewZones, seeds: []*api.Seed{readySeed("x", withZones("", "z1"))}, shoot: basicShoot(func(s *api.Shoot) {
			s.Spec.ControlPlane = &api.ControlPlane{HighAvailability: &api.HighAvailability{FailureTolerance: api.FailureTolerance{Type: api.FailureToleranceZone}}}
		})},
		{code: ControlPlaneZoneMissing, seeds: []*api.Seed{readySeed("x", withZones("", "z1"))}, shoot: basicShoot(func(s *api.Shoot) {
			s.Spec.ControlPlane = &api.ControlPlane{Zones: []string{"z2"}}
		})},
		{code: ZoneEnforceMismatch, seeds: []*api.Seed{readySeed("x", withZones(api.ZoneSelectionEnforce, "z1"))}, shoot: basicShoot(func(s *api.Shoot) {
			s.Spec.Provider.Workers[0].Zones = []string{"z2"}
		})},
		{code: ZonePreferMismatch, seeds: []*api.Seed{readySeed("a", withZones(api.ZoneSelectionPrefer, "z2"), tainted), readySeed("x", withZones(api.ZoneSelectionPrefer, "z1"))},
			shoot: basicShoot(func(s *api.Shoot) { s.Spec.Provider.Workers[0].Zones = []string{"z2"} })},
		{code: AccessRestrictionUnsupported, seeds: []*api.Seed{readySeed("x")}, shoot: basicShoot(func(s *api.Shoot) {
			s.Spec.AccessRestrictions = []api.AccessRestrictionWithOptions{{Name: "eu-access-only"}}
		})},
		{code: AccessRestrictionsTooMany, seeds: []*api.Seed{readySeed("x", func(s *api.Seed) {
			s.Spec.AccessRestrictions = []api.AccessRestriction{{Name: "eu-access-only"}}
		})}, shoot: basicShoot(func(s *api.Shoot) {
			s.Spec.AccessRestrictions = []api.AccessRestrictionWithOptions{{Name: "eu-access-only"}, {Name: "eu-access-only"}}
		})},
		{code: ProjectNotFound, seeds: []*api.Seed{readySeed("x", domains("example.com"))}, snap: func(s *Snapshot) { s.Projects = nil },
			shoot: basicShoot(func(s *api.Shoot) { s.Spec.DNS = &api.DNS{Domain: ptr.To("shoot.proj.example.com")} })},
		{code: DomainMismatch, seeds: []*api.Seed{readySeed("x", domains("example.com"))},
			shoot: basicShoot(func(s *api.Shoot) { s.Spec.DNS = &api.DNS{Domain: ptr.To("other.proj.example.com")} })},
		{code: EmergencyStopped, seeds: []*api.Seed{readySeed("x", func(s *api.Seed) {
			s.Annotations = map[string]string{api.AnnotationEmergencyStop: "true"}
		})}, shoot: basicShoot()},
		{code: SeedFullAcrossReplicas, seeds: []*api.Seed{readySeed("x")}, shoot: basicShoot(), opts: Options{Strategy: SameRegion, Exclude: []string{"x"}}},
		{code: NetworkOverlap, seeds: []*api.Seed{readySeed("x")}, shoot: basicShoot(net(func(n *api.Networking) { n.Pods = ptr.To("10.200.0.0/16") }))},
		{code: NetworkReservedRange, seeds: []*api.Seed{readySeed("x")}, shoot: basicShoot(net(func(n *api.Networking) { n.Nodes = ptr.To("240.0.0.0/24") }))},
		{code: StatusNetworkMissing, seeds: []*api.Seed{readySeed("x")}, shoot: basicShoot(func(s *api.Shoot) {
			s.Spec.Networking = &api.Networking{Nodes: ptr.To("10.0.0.0/24")}
			s.Status.Networking = &api.NetworkingStatus{}
		})},
		{code: TaintNotTolerated, seeds: []*api.Seed{readySeed("x", tainted)}, shoot: basicShoot()},
		{code: SeedFull, seeds: []*api.Seed{readySeed("x", withAllocatable(0))}, shoot: basicShoot()},
		{code: RegionConfigInvalid, seeds: []*api.Seed{readySeed("x")}, snap: badRegionConfig, shoot: basicShoot(), opts: minimal},
		{code: TestingProviderMismatch, seeds: []*api.Seed{readySeed("x", withRegion("gcp", "eu-west-1"))}, shoot: basicShoot(func(s *api.Shoot) { s.Spec.Purpose = ptr.To(api.PurposeTesting) }),
			snap: withProfile(api.CloudProfileSpec{Type: "aws", SeedSelector: &api.SeedSelector{ProviderTypes: []string{"*"}}})},
		{code: RegionMismatch, seeds: []*api.Seed{readySeed("x", withRegion("aws", "us-east-1"))}, shoot: basicShoot()},
		{code: RegionFartherByName, seeds: []*api.Seed{readySeed("x")}, opts: minimal, shoot: basicShoot(func(s *api.Shoot) {
			s.Spec.Region = string(make([]byte, 600)) // over 500 edits from any seed's
		})},
		{code: SeedOutsideRequiredPool, seeds: []*api.Seed{readySeed("x")}, shoot: basicShoot(),
			opts: Options{Strategy: SameRegion, Policies: testPolicies(t, testPool{name: "p", mode: PoolRequired, projects: []string{"proj"}, seedLabel: "pool=p"})}},
		{code: SeedReservedForPool, seeds: []*api.Seed{readySeed("x", withLabels(map[string]string{"pool": "p"}))}, shoot: basicShoot(),
			opts: Options{Strategy: SameRegion, Policies: testPolicies(t, testPool{name: "p", mode: PoolRequired, projects: []string{"other"}, seedLabel: "pool=p"})}},
		{code: PoliciesInvalid, seeds: []*api.Seed{readySeed("x")}, shoot: basicShoot(), opts: Options{Strategy: SameRegion, Policies: BrokenPolicies(errors.New("policies.pools[0]: broken"))}},
		{code: ScoringProfileInvalid, seeds: []*api.Seed{readySeed("x")}, shoot: basicShoot(), opts: Options{Strategy: SameRegion, Scoring: &Profile{}}},
	}
	reached := map[ReasonCode]bool{
		RegionFartherByConfig: farthestByConfigRecorded(t),
		// Only the audit's check of a bound Shoot meets a seed that is gone.
		SeedNotFound: assert.Equal(t, SeedNotFound, CheckStaying(snapshotOf(nil), "gone", basicShoot())[0].Code),
	}
	for _, tt := range tests {
		t.Run(string(tt.code), func(t *testing.T) {
			snap := snapshotOf(nil, tt.seeds...)
			if tt.snap != nil {
				tt.snap(snap)
			}
			opts := tt.opts
			if opts.Strategy == "" {
				opts = sameRegion
			}
			d := Decide(snap, tt.shoot, opts)
			require.False(t, d.Schedulable(), "scheduled to %s", d.Seed)
			if d.Codes["x"] == tt.code {
				require.NotEmpty(t, d.Reasons["x"])
			} else {
				require.Equal(t, tt.code, d.Code, "decision code (seed codes %v; %s)", d.Codes, d.Summary())
			}
			reached[tt.code] = true
		})
	}
	for _, info := range ReasonCodes {
		assert.True(t, reached[info.Code], "no case reaches %s (step %s)", info.Code, info.Step)
	}
}

// farthestByConfigRecorded: RegionFartherByConfig drops the seeds the region
// config puts farther than the nearest, which is then kept, so no
// unschedulable decision ends with it (when the table keeps none, name
// distance decides every seed again); the explained step records it.
func farthestByConfigRecorded(t *testing.T) bool {
	snap := snapshotOf(nil, readySeed("near", withRegion("aws", "eu-central-1")), readySeed("x", withRegion("aws", "us-east-1")))
	snap.RegionConfigs = []*RegionConfig{NewRegionConfig(&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "rc", Annotations: map[string]string{api.AnnotationSchedulingCloudProfiles: "aws"}},
		Data:       map[string]string{"eu-west-1": "eu-central-1: 1\nus-east-1: 5\n"},
	})}
	d := newDecider(snap, basicShoot(), Options{Strategy: MinimalDistance}, explainPath)
	defer d.release()
	d.profile = snap.CloudProfiles["aws"]
	kept, err := d.minimalDistance(snap.Seeds)
	require.NoError(t, err)
	require.Equal(t, []string{"near"}, names(kept))
	return assert.Equal(t, RegionFartherByConfig, d.codes["x"])
}
