package placement

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/utils/ptr"

	"github.com/seedwarden/seedwarden/internal/api"
)

var haShoot = func(s *api.Shoot) {
	s.Spec.ControlPlane = &api.ControlPlane{HighAvailability: &api.HighAvailability{FailureTolerance: api.FailureTolerance{Type: api.FailureToleranceZone}}}
}

func avoid(reason string) func(*api.Seed) {
	return withAnnotations(map[string]string{api.AnnotationSeedAvoid: reason})
}

func softLimit(v string) func(*api.Seed) {
	return withAnnotations(map[string]string{api.AnnotationSeedSoftLimitPercent: v})
}

func poolLabel(v string) func(*api.Seed) { return withLabels(map[string]string{"pool": v}) }

// Each preference, with its fallback: the seed it counts against is used
// when every seed left shares it. Seed "a" would be Gardener's choice
// (least used, then first by name) unless a policy says otherwise.
func TestPreferences(t *testing.T) {
	threeZones := withZones("", "z1", "z2", "z3")
	tests := []struct {
		name     string
		seeds    []*api.Seed
		usage    map[string]int64
		policies *Policies
		shoot    *api.Shoot
		want     string
		rank     Rank
		setAside [len(Preferences)]int
		avoid    string
	}{
		{name: "avoided seed set aside", seeds: []*api.Seed{readySeed("a", avoid("draining to new hardware")), readySeed("b")},
			usage: map[string]int64{"b": 5}, want: "b", setAside: [4]int{1, 0, 0, 0}},
		{name: "avoided seed used when the only one", seeds: []*api.Seed{readySeed("a", avoid("draining to new hardware")), readySeed("b", withRegion("aws", "us-east-1"))},
			want: "a", rank: RankAvoided, avoid: "draining to new hardware"},
		{name: "empty avoid reason", seeds: []*api.Seed{readySeed("a", avoid(" "))}, want: "a", rank: RankAvoided, avoid: "avoided"},
		{name: "least used of the avoided when all are", seeds: []*api.Seed{readySeed("a", avoid("x")), readySeed("b", avoid("y"))},
			usage: map[string]int64{"a": 2}, want: "b", rank: RankAvoided, avoid: "y"},
		{name: "past soft limit set aside", seeds: []*api.Seed{readySeed("a", withAllocatable(10)), readySeed("b", withAllocatable(100))},
			usage: map[string]int64{"a": 8, "b": 9}, policies: &Policies{SoftLimitPercent: 80}, want: "b", setAside: [4]int{0, 0, 1, 0}},
		{name: "below soft limit stays", seeds: []*api.Seed{readySeed("a", withAllocatable(10)), readySeed("b", withAllocatable(100))},
			usage: map[string]int64{"a": 7, "b": 9}, policies: &Policies{SoftLimitPercent: 80}, want: "a"},
		{name: "past soft limit used when all are", seeds: []*api.Seed{readySeed("a", withAllocatable(10)), readySeed("b", withAllocatable(10))},
			usage: map[string]int64{"a": 9, "b": 8}, policies: &Policies{SoftLimitPercent: 50}, want: "b", rank: RankPastSoftLimit},
		{name: "seed without allocatable has no soft limit", seeds: []*api.Seed{readySeed("a", withAllocatable(10)), readySeed("b")},
			usage: map[string]int64{"a": 1, "b": 50}, policies: &Policies{SoftLimitPercent: 10}, want: "b", setAside: [4]int{0, 0, 1, 0}},
		{name: "annotation sets a soft limit without policies", seeds: []*api.Seed{readySeed("a", withAllocatable(10), softLimit("50")), readySeed("b", withAllocatable(10))},
			usage: map[string]int64{"a": 5, "b": 6}, want: "b", setAside: [4]int{0, 0, 1, 0}},
		{name: "annotation 0 lifts the configured soft limit", seeds: []*api.Seed{readySeed("a", withAllocatable(10), softLimit("0")), readySeed("b", withAllocatable(10))},
			usage: map[string]int64{"a": 6, "b": 6}, policies: &Policies{SoftLimitPercent: 50}, want: "a", setAside: [4]int{0, 0, 1, 0}},
		{name: "invalid annotation ignored", seeds: []*api.Seed{readySeed("a", withAllocatable(10), softLimit("ninety")), readySeed("b", withAllocatable(10))},
			usage: map[string]int64{"a": 5, "b": 6}, want: "a"},
		{name: "kept seat set aside for a non-HA shoot", seeds: []*api.Seed{readySeed("a", withAllocatable(10), threeZones), readySeed("b", withAllocatable(10))},
			usage: map[string]int64{"a": 8, "b": 9}, policies: &Policies{KeptSeats: 2}, want: "b", setAside: [4]int{0, 1, 0, 0}},
		{name: "kept seat free for an HA shoot", seeds: []*api.Seed{readySeed("a", withAllocatable(10), threeZones), readySeed("b", withAllocatable(10), threeZones)},
			usage: map[string]int64{"a": 8, "b": 9}, policies: &Policies{KeptSeats: 2}, shoot: basicShoot(haShoot), want: "a"},
		{name: "kept seat used when nothing else admits", seeds: []*api.Seed{readySeed("a", withAllocatable(10), threeZones), readySeed("b", withAllocatable(10), threeZones)},
			usage: map[string]int64{"a": 8, "b": 9}, policies: &Policies{KeptSeats: 2}, want: "a", rank: RankKeptSeat},
		{name: "kept share rounds up", seeds: []*api.Seed{readySeed("a", withAllocatable(10), threeZones), readySeed("b", withAllocatable(10))},
			usage: map[string]int64{"a": 8, "b": 9}, policies: &Policies{KeptSeatsPercent: 11}, want: "b", setAside: [4]int{0, 1, 0, 0}},
		{name: "two-zone seed keeps none", seeds: []*api.Seed{readySeed("a", withAllocatable(10), withZones("", "z1", "z2")), readySeed("b", withAllocatable(10))},
			usage: map[string]int64{"a": 8, "b": 9}, policies: &Policies{KeptSeats: 2}, want: "a"},
		{name: "avoided outranks soft limit", seeds: []*api.Seed{readySeed("a", withAllocatable(10), avoid("r")), readySeed("b", withAllocatable(10))},
			usage: map[string]int64{"a": 0, "b": 9}, policies: &Policies{SoftLimitPercent: 50}, want: "b", rank: RankPastSoftLimit, setAside: [4]int{1, 0, 0, 0}},
		{name: "preferred pool", seeds: []*api.Seed{readySeed("a"), readySeed("b", poolLabel("p"))},
			usage: map[string]int64{"b": 3}, policies: testPolicies(t, testPool{name: "p", mode: PoolPreferred, projects: []string{"proj"}, seedLabel: "pool=p"}),
			want: "b", setAside: [4]int{0, 0, 0, 1}},
		{name: "preferred pool of another project", seeds: []*api.Seed{readySeed("a"), readySeed("b", poolLabel("p"))},
			usage: map[string]int64{"b": 3}, policies: testPolicies(t, testPool{name: "p", mode: PoolPreferred, projects: []string{"other"}, seedLabel: "pool=p"}),
			want: "a"},
		{name: "preferred pool outside it when the pool is full", seeds: []*api.Seed{readySeed("a"), readySeed("b", poolLabel("p"), withAllocatable(3))},
			usage: map[string]int64{"b": 3}, policies: testPolicies(t, testPool{name: "p", mode: PoolPreferred, projects: []string{"proj"}, seedLabel: "pool=p"}),
			want: "a", rank: RankOutsidePreferredPool},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := snapshotOf(tt.usage, tt.seeds...)
			shoot := tt.shoot
			if shoot == nil {
				shoot = basicShoot()
			}
			for _, p := range []path{plainPath, fastPath} {
				d := run(snap, shoot, Options{Strategy: SameRegion, Policies: tt.policies}, p)
				require.True(t, d.Schedulable(), d.Summary())
				assert.Equal(t, tt.want, d.Seed)
				assert.Equal(t, tt.rank, d.Policy.Rank)
				assert.Equal(t, tt.setAside, d.Policy.SetAside)
				assert.Equal(t, tt.avoid, d.Policy.Avoid)
			}
		})
	}
}

// A Required pool is a filter both ways, and names the pool.
func TestRequiredPools(t *testing.T) {
	pol := testPolicies(t,
		testPool{name: "acme", mode: PoolRequired, projects: []string{"acme"}, seedLabel: "pool=acme"},
		testPool{name: "prod", mode: PoolRequired, projectLabel: "tier=prod", seedLabel: "tier=prod"})
	seeds := []*api.Seed{readySeed("a"), readySeed("b", poolLabel("acme")), readySeed("c", withLabels(map[string]string{"tier": "prod"}))}
	tests := []struct {
		name            string
		project         *Project
		want            string
		bound, withheld []string
		reasons         map[string]string
	}{
		{name: "pool project to pool seed", project: &Project{Name: "acme"}, want: "b", bound: []string{"acme"}, withheld: []string{"prod"}},
		{name: "other project kept off pool seeds", project: &Project{Name: "other"}, want: "a", withheld: []string{"acme", "prod"}},
		{name: "by label", project: &Project{Name: "shop", Labels: map[string]string{"tier": "prod"}}, want: "c", bound: []string{"prod"}, withheld: []string{"acme"}},
		{name: "in both pools, no seed in both", project: &Project{Name: "acme", Labels: map[string]string{"tier": "prod"}},
			reasons: map[string]string{
				"a": `shoot's project is in Required pool "acme", which the seed is not in`,
				"b": `shoot's project is in Required pool "prod", which the seed is not in`,
				"c": `shoot's project is in Required pool "acme", which the seed is not in`,
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := snapshotOf(nil, seeds...)
			snap.Projects = map[string]*Project{"garden-proj": tt.project}
			d := Decide(snap, basicShoot(), Options{Strategy: SameRegion, Policies: pol})
			assert.Equal(t, tt.want, d.Seed)
			if tt.want == "" {
				assert.Equal(t, StepPools, d.Step)
				assert.Equal(t, tt.reasons, d.Reasons)
				return
			}
			assert.Equal(t, tt.bound, d.Policy.BoundTo)
			assert.Equal(t, tt.withheld, d.Policy.Withheld)
			for _, s := range snap.Seeds {
				_, refused := pol.RequiredRefusal(s, tt.project)
				assert.Equal(t, s.Name != tt.want, refused, s.Name)
			}
		})
	}
	v, refused := pol.RequiredRefusal(NewSeed(seeds[1]), nil)
	assert.True(t, refused)
	assert.Equal(t, RequiredViolation{Pool: "acme", SeedInPool: true}, v)
	assert.Equal(t, `seed belongs to Required pool "acme", which the shoot's project is not in`, v.String())
}

// A Shoot bound by a Required pool is decided as in a garden of the pool's
// seeds alone, also where Gardener's steps look at the other seeds left:
// the zone selection's fallback from the Prefer seeds (step 6) and whether
// any seed has a default domain the Shoot's domain is under (step 8). With
// the pools after those steps (as first built) a seed outside the pool
// kept both from falling back, and the Shoot found no seed. Found by
// TestPoliciesOnGeneratedLandscapes.
func TestRequiredPoolIsTheShootsGarden(t *testing.T) {
	pol := testPolicies(t, testPool{name: "acme", mode: PoolRequired, projects: []string{"acme"}, seedLabel: "pool=acme"})
	inPool := func(mods ...func(*api.Seed)) *api.Seed { return readySeed("b", append(mods, poolLabel("acme"))...) }
	withDomain := func(s *api.Seed) { s.Spec.DNS.Defaults = []api.SeedDNSProviderConfig{{Domain: "example.com"}} }
	tests := []struct {
		name  string
		seeds []*api.Seed
		shoot *api.Shoot
	}{
		{"zone fallback", []*api.Seed{
			readySeed("a", withZones(api.ZoneSelectionPrefer, "eu-west-1a")),
			inPool(withZones(api.ZoneSelectionPrefer, "eu-west-1c")),
		}, basicShoot(func(sh *api.Shoot) { sh.Spec.Provider.Workers[0].Zones = []string{"eu-west-1a"} })},
		{"default domain", []*api.Seed{readySeed("a", withDomain), inPool()},
			basicShoot(func(sh *api.Shoot) { sh.Spec.DNS = &api.DNS{Domain: ptr.To("shoot.acme.example.com")} })},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := snapshotOf(nil, tt.seeds...)
			snap.Projects = map[string]*Project{"garden-proj": {Name: "acme"}}
			alone := snapshotOf(nil, tt.seeds[1])
			alone.Projects = snap.Projects
			require.Equal(t, "b", Decide(alone, tt.shoot, Options{Strategy: SameRegion}).Seed, "Gardener in a garden of the pool's seed")
			for _, v := range []struct {
				name string
				run  func(*Snapshot, *api.Shoot, Options) Decision
			}{{"decide", Decide}, {"plain", func(s *Snapshot, sh *api.Shoot, o Options) Decision { return run(s, sh, o, plainPath) }}} {
				d := v.run(snap, tt.shoot, Options{Strategy: SameRegion, Policies: pol})
				assert.Equal(t, "b", d.Seed, "%s: %s", v.name, d.Summary())
			}
		})
	}
}

func TestNewPoolRefuses(t *testing.T) {
	_, err := NewPool("p", "Sometimes", []string{"a"}, nil, labelSelector("k=v"))
	assert.EqualError(t, err, `pool "p": mode: unsupported value "Sometimes" (want Required or Preferred)`)
	_, err = NewPool("p", PoolRequired, []string{"a"}, nil, nil)
	assert.ErrorContains(t, err, "seedSelector: missing or empty")
	_, err = NewPool("p", PoolRequired, nil, nil, labelSelector("k=v"))
	assert.ErrorContains(t, err, "names no project")
	assert.ErrorContains(t, (&Policies{SoftLimitPercent: 101}).Validate(), "softLimitPercent: 101")
	assert.ErrorContains(t, (&Policies{KeptSeats: 1, KeptSeatsPercent: 1}).Validate(), "keptSeats")
	dup := testPolicies(t, testPool{name: "p", mode: PoolRequired, projects: []string{"a"}, seedLabel: "k=v"}, testPool{name: "p", mode: PoolPreferred, projects: []string{"a"}, seedLabel: "k=v"})
	assert.EqualError(t, dup.Validate(), `pools[1]: duplicate pool "p"`)
	d := Decide(snapshotOf(nil, readySeed("a")), basicShoot(), Options{Strategy: SameRegion, Policies: BrokenPolicies(assert.AnError)})
	assert.Equal(t, PoliciesInvalid, d.Code)
}
