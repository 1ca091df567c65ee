package placement

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/seedwarden/seedwarden/internal/api"
)

func TestDecide(t *testing.T) {
	opts := Options{Strategy: SameRegion, NetworkMode: Disjoint}
	tests := []struct {
		name     string
		seeds    []*api.Seed
		usage    map[string]int64
		shoot    *api.Shoot
		exclude  []string // Options.Exclude
		want     string
		wantTied []string
		wantStep Step
		reasons  map[string]string // substrings expected per seed
	}{
		{
			name:  "least used wins",
			seeds: []*api.Seed{readySeed("a"), readySeed("b"), readySeed("c")},
			usage: map[string]int64{"a": 3, "b": 1, "c": 2},
			shoot: basicShoot(), want: "b", wantTied: []string{"b"},
		},
		{
			name:  "ties broken by name",
			seeds: []*api.Seed{readySeed("c"), readySeed("a"), readySeed("b")},
			usage: map[string]int64{"a": 1, "b": 1, "c": 1},
			shoot: basicShoot(), want: "a", wantTied: []string{"a", "b", "c"},
		},
		{
			name:  "full seed is skipped",
			seeds: []*api.Seed{readySeed("a", withAllocatable(2)), readySeed("b", withAllocatable(10))},
			usage: map[string]int64{"a": 2, "b": 5},
			shoot: basicShoot(), want: "b", wantTied: []string{"b"},
		},
		{
			name:  "excluded seed: the next best wins",
			seeds: []*api.Seed{readySeed("a"), readySeed("b", withAllocatable(10)), readySeed("c")},
			usage: map[string]int64{"a": 3, "b": 1, "c": 2},
			shoot: basicShoot(), exclude: []string{"b"}, want: "c", wantTied: []string{"c"},
		},
		{
			name:  "excluded seeds leave the others' ties",
			seeds: []*api.Seed{readySeed("a"), readySeed("b"), readySeed("c")},
			usage: map[string]int64{"a": 1, "b": 1, "c": 1},
			shoot: basicShoot(), exclude: []string{"a", "unknown"}, want: "b", wantTied: []string{"b", "c"},
		},
		{
			name:     "every candidate excluded: unschedulable at the candidates step",
			seeds:    []*api.Seed{readySeed("a"), readySeed("b", withAllocatable(2))},
			usage:    map[string]int64{"b": 2},
			shoot:    basicShoot(),
			exclude:  []string{"a"},
			wantStep: StepCandidates,
			reasons:  map[string]string{"a": ExcludedReason, "b": "capacity for shoots (usage 2, allocatable 2)"},
		},
		{
			name:     "all full: per-seed reasons",
			seeds:    []*api.Seed{readySeed("a", withAllocatable(2)), readySeed("b", withTaints(api.SeedTaint{Key: "k"}))},
			usage:    map[string]int64{"a": 2},
			shoot:    basicShoot(),
			wantStep: StepCandidates,
			reasons:  map[string]string{"a": "capacity for shoots (usage 2, allocatable 2)", "b": "taints"},
		},
		{
			name: "seeds dropped at earlier steps carry their step's reason",
			seeds: []*api.Seed{
				readySeed("gcp", withRegion("gcp", "eu-west-1")),
				readySeed("notready", func(s *api.Seed) { s.Status.LastOperation = nil }),
				readySeed("far", withRegion("aws", "us-east-1")),
			},
			shoot:    basicShoot(),
			wantStep: StepStrategy,
			reasons:  map[string]string{"gcp": "provider", "notready": "not ready", "far": "SameRegion"},
		},
		{
			name:  "shoot selector",
			seeds: []*api.Seed{readySeed("a", withLabels(map[string]string{"tier": "dev"}))},
			shoot: basicShoot(func(s *api.Shoot) {
				s.Spec.SeedSelector = &api.SeedSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"tier": "prod"}}}
			}),
			wantStep: StepShootSelector,
			reasons:  map[string]string{"a": "Shoot's seed selector"},
		},
		{
			name:  "invalid shoot selector is unschedulable, not a panic",
			seeds: []*api.Seed{readySeed("a")},
			shoot: basicShoot(func(s *api.Shoot) {
				s.Spec.SeedSelector = &api.SeedSelector{LabelSelector: metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: "Bogus"}}}}
			}),
			wantStep: StepShootSelector,
		},
		{
			name:  "zone failure tolerance needs 3 zones",
			seeds: []*api.Seed{readySeed("a", withZones("", "z1", "z2"))},
			shoot: basicShoot(func(s *api.Shoot) {
				s.Spec.ControlPlane = &api.ControlPlane{HighAvailability: &api.HighAvailability{FailureTolerance: api.FailureTolerance{Type: "zone"}}}
			}),
			wantStep: StepFailureTolerance,
		},
		{
			name:     "unknown cloud profile",
			seeds:    []*api.Seed{readySeed("a")},
			shoot:    basicShoot(func(s *api.Shoot) { s.Spec.CloudProfileName = ptr.To("nope") }),
			wantStep: StepCloudProfile,
		},
		{
			name:     "no seeds at all",
			shoot:    basicShoot(),
			wantStep: StepUsable,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := opts
			o.Exclude = tt.exclude
			d := Decide(snapshotOf(tt.usage, sortedSeeds(tt.seeds)...), tt.shoot, o)
			if tt.want != "" {
				require.True(t, d.Schedulable(), d.Message)
				assert.Equal(t, tt.want, d.Seed)
				assert.Equal(t, tt.wantTied, d.Tied)
				return
			}
			require.False(t, d.Schedulable())
			assert.Equal(t, tt.wantStep, d.Step)
			assert.NotEmpty(t, d.Message)
			for seed, sub := range tt.reasons {
				assert.Contains(t, d.Reasons[seed], sub, "reason for %s", seed)
			}
			assert.Contains(t, d.Summary(), fmt.Sprintf("0/%d seeds eligible", len(tt.seeds)))
		})
	}
}

func sortedSeeds(seeds []*api.Seed) []*api.Seed {
	out := append([]*api.Seed(nil), seeds...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j].Name < out[i].Name {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func TestDecideCloudProfileReference(t *testing.T) {
	snap := snapshotOf(nil, readySeed("a"), readySeed("b", withLabels(map[string]string{"pool": "team"})))
	snap.NamespacedCloudProfiles = map[string]*CloudProfile{
		"garden-proj/team": NewCloudProfile("team", &api.CloudProfileSpec{SeedSelector: &api.SeedSelector{
			LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": "team"}},
		}}),
	}
	ref := func(kind, name string) *api.Shoot {
		return basicShoot(func(s *api.Shoot) {
			s.Spec.CloudProfileName = nil
			s.Spec.CloudProfile = &api.CloudProfileReference{Kind: kind, Name: name}
		})
	}
	opts := Options{Strategy: SameRegion}

	d := Decide(snap, ref("", "aws"), opts)
	assert.Equal(t, "a", d.Seed, "kind defaults to CloudProfile")

	d = Decide(snap, ref(api.KindNamespacedCloudProfile, "team"), opts)
	assert.Equal(t, "b", d.Seed, "the namespaced profile's selector applies")

	d = Decide(snap, basicShoot(func(s *api.Shoot) {
		s.Namespace = "elsewhere"
		s.Spec.CloudProfile = &api.CloudProfileReference{Kind: api.KindNamespacedCloudProfile, Name: "team"}
	}), opts)
	assert.Equal(t, StepCloudProfile, d.Step, "namespaced profiles are looked up in the shoot's namespace")

	d = Decide(snap, ref("Weird", "aws"), opts)
	assert.Equal(t, StepCloudProfile, d.Step)
	assert.Contains(t, d.Message, `"Weird"`)
}

func TestSummaryNamesEverySeed(t *testing.T) {
	d := Decision{Total: 3, Step: StepCandidates, Message: "0/3 seed cluster candidate(s) are eligible for scheduling", Reasons: map[string]string{"b": "taints", "a": "full"}}
	assert.Equal(t, "0/3 seeds eligible: a: full, b: taints", d.Summary())
	d = Decision{Total: 0, Message: "nothing"}
	assert.Equal(t, "0/0 seeds eligible: nothing", d.Summary())

	d = Decision{Total: 2, Step: StepStrategy, Message: `region config garden/rc: data["eu"] is not a map`, Reasons: map[string]string{"a": "full"}}
	assert.Equal(t, `0/2 seeds eligible: region config garden/rc: data["eu"] is not a map; a: full`, d.Summary(), "the failing step's message comes first")

	d = Decision{Total: 13, Step: StepCandidates, Reasons: map[string]string{"lone": "full"}}
	for i := 0; i < 12; i++ {
		d.Reasons[fmt.Sprintf("s%02d", i)] = "taints"
	}
	assert.Equal(t, "0/13 seeds eligible: 12 seeds (s00, s01, s02, ...): taints; lone: full", d.Summary())
}

// FuzzDecide feeds arbitrary Shoots (as JSON) into the placement entry point
// over a small fixed landscape: it must never panic, a schedulable decision
// must name a seed of the snapshot, and the fast path (scanning, or through
// the seed index) must decide exactly as the plain filters.
func FuzzDecide(f *testing.F) {
	for _, s := range []string{
		`{"spec":{"cloudProfileName":"aws","region":"eu-west-1","provider":{"type":"aws","workers":[{"name":"a","zones":["z1"]}]}}}`,
		`{"spec":{"cloudProfile":{"kind":"NamespacedCloudProfile","name":"x"},"networking":{"pods":"10.0.0.0/8","ipFamilies":["IPv4","IPv6"]}}}`,
		`{"spec":{"cloudProfileName":"aws","seedSelector":{"matchExpressions":[{"key":"a","operator":"In"}]},"dns":{"domain":"shoot.proj.example.com"}}}`,
		`{"spec":{"cloudProfileName":"aws","purpose":"testing","tolerations":[{"key":"k"}],"controlPlane":{"zones":["z"],"highAvailability":{"failureTolerance":{"type":"zone"}}}},"status":{"networking":{"pods":["x"]}}}`,
	} {
		f.Add([]byte(s))
	}
	snap := snapshotOf(map[string]int64{"a": 1},
		readySeed("a", withZones(api.ZoneSelectionPrefer, "z1", "z2", "z3"), withAllocatable(5)),
		readySeed("b", withTaints(api.SeedTaint{Key: "k", Value: ptr.To("v")}), func(s *api.Seed) {
			s.Spec.DNS.Defaults = []api.SeedDNSProviderConfig{{Domain: "example.com"}}
			s.Spec.Networks.ShootDefaults = &api.ShootNetworks{Pods: ptr.To("10.9.0.0/16"), Services: ptr.To("bogus")}
		}),
		readySeed("c", withRegion("gcp", "us-east1"), withZones(api.ZoneSelectionEnforce, "z9")),
	)
	snap.RegionConfigs = []*RegionConfig{NewRegionConfig(regionConfigMap("rc", "aws", map[string]string{"eu-west-1": "us-east1: 1", "bad": "{"}))}
	f.Fuzz(func(t *testing.T, data []byte) {
		var shoot api.Shoot
		if err := json.Unmarshal(data, &shoot); err != nil {
			return
		}
		if nets := newShootNetworks(&shoot); nets != nil {
			for _, seed := range snap.Seeds {
				for _, mode := range []NetworkMode{Disjoint, AllowIPv4} {
					if slow, fast := nets.conflict(seed, mode).found(), nets.conflicts(seed, mode); slow != fast {
						t.Fatalf("network check paths disagree on %s (%s): conflict %v, conflicts %v", seed.Name, mode, slow, fast)
					}
				}
			}
		}
		for _, strategy := range []Strategy{SameRegion, MinimalDistance} {
			for _, mode := range []NetworkMode{Disjoint, AllowIPv4} {
				opts := Options{Strategy: strategy, NetworkMode: mode}
				plain := Plain.Run(snap, &shoot, opts)
				for _, v := range FastVariants {
					if got := v.Run(snap, &shoot, opts); !reflect.DeepEqual(got, plain) {
						t.Fatalf("fast path (%s) decides %+v, the plain filters %+v", v.Name, got, plain)
					}
				}
				d := Decide(snap, &shoot, opts)
				if d.Schedulable() {
					if _, ok := snap.seedByName(d.Seed); !ok {
						t.Fatalf("decided unknown seed %q", d.Seed)
					}
				} else if d.Step == "" || d.Message == "" {
					t.Fatalf("unschedulable without step or message: %+v", d)
				}
			}
		}
	})
}

func (s *Snapshot) seedByName(name string) (*Seed, bool) {
	for _, seed := range s.Seeds {
		if seed.Name == name {
			return seed, true
		}
	}
	return nil, false
}
