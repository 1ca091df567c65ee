package placement

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/utils/ptr"

	"github.com/seedwarden/seedwarden/internal/api"
)

// The rules the differential test (TestDifferential) found seedwarden
// reading differently from Gardener's scheduler; each test pins one, on
// every path a decision can take.

// decideBoth decides on the fast path (Decide) and on the plain filters,
// and requires them to agree.
func decideBoth(t *testing.T, snap *Snapshot, shoot *api.Shoot, opts Options) Decision {
	t.Helper()
	d := Decide(snap, shoot, opts)
	plain := run(snap, shoot, opts, plainPath)
	require.Equal(t, d.Seed, plain.Seed, "fast and plain paths disagree")
	require.Equal(t, d.Step, plain.Step, "fast and plain paths disagree")
	return d
}

// Gardener's networksAreDisjointed checks status.networking with
// ValidateMultiNetworkDisjointedness, which requires its services, and its
// pods unless the Shoot is workerless.
func TestStatusNetworkingIsRequired(t *testing.T) {
	withStatus := func(workerless bool, st *api.NetworkingStatus) *api.Shoot {
		return basicShoot(func(s *api.Shoot) {
			s.Spec.Networking = &api.Networking{Nodes: ptr.To("10.250.0.0/16"), IPFamilies: []string{api.IPFamilyIPv4}}
			s.Status.Networking = st
			if workerless {
				s.Spec.Provider.Workers = nil
			}
		})
	}
	pods, services := []string{"100.96.0.0/11"}, []string{"100.64.0.0/13"}
	for _, tt := range []struct {
		name       string
		workerless bool
		status     *api.NetworkingStatus
		placed     bool
	}{
		{name: "no status.networking", status: nil, placed: true},
		{name: "pods and services", status: &api.NetworkingStatus{Pods: pods, Services: services}, placed: true},
		{name: "no services", status: &api.NetworkingStatus{Pods: pods}, placed: false},
		{name: "empty", status: &api.NetworkingStatus{}, placed: false},
		{name: "no pods, with workers", status: &api.NetworkingStatus{Services: services}, placed: false},
		{name: "no pods, workerless", workerless: true, status: &api.NetworkingStatus{Services: services}, placed: true},
		{name: "no services, workerless", workerless: true, status: &api.NetworkingStatus{Pods: pods}, placed: false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			snap := snapshotOf(nil, readySeed("a"), readySeed("b"))
			for _, mode := range []NetworkMode{AllowIPv4, Disjoint} {
				d := decideBoth(t, snap, withStatus(tt.workerless, tt.status), Options{Strategy: SameRegion, NetworkMode: mode})
				assert.Equal(t, tt.placed, d.Schedulable(), "mode %s: %s", mode, d.Summary())
				if !tt.placed {
					assert.Equal(t, StepCandidates, d.Step)
					assert.Contains(t, d.Summary(), "status.networking: ")
				}
			}
		})
	}
}

// Gardener's AccessRestrictionsAreSupported refuses a seed listing fewer
// entries than the Shoot, before it compares names: a repeated entry
// counts.
func TestAccessRestrictionsCountEntries(t *testing.T) {
	ar := func(names ...string) []api.AccessRestriction {
		var out []api.AccessRestriction
		for _, n := range names {
			out = append(out, api.AccessRestriction{Name: n})
		}
		return out
	}
	eu := api.AccessRestrictionWithOptions{Name: "eu-access-only"}
	for _, tt := range []struct {
		name   string
		seed   []api.AccessRestriction
		wanted []api.AccessRestrictionWithOptions
		ok     bool
	}{
		{name: "once, once", seed: ar("eu-access-only"), wanted: []api.AccessRestrictionWithOptions{eu}, ok: true},
		{name: "twice, once", seed: ar("eu-access-only"), wanted: []api.AccessRestrictionWithOptions{eu, eu}, ok: false},
		{name: "twice, twice", seed: ar("eu-access-only", "eu-access-only"), wanted: []api.AccessRestrictionWithOptions{eu, eu}, ok: true},
		{name: "twice, once and another", seed: ar("eu-access-only", "other"), wanted: []api.AccessRestrictionWithOptions{eu, eu}, ok: true},
		{name: "none wanted", seed: nil, wanted: nil, ok: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			seed := NewSeed(readySeed("s", func(s *api.Seed) { s.Spec.AccessRestrictions = tt.seed }))
			keep, why := supportsAccessRestrictions(tt.wanted)
			assert.Equal(t, tt.ok, keep(seed))
			shoot := basicShoot(func(s *api.Shoot) { s.Spec.AccessRestrictions = tt.wanted })
			violations := CheckSeedForShoot(snapshotOf(nil), seed, shoot, AllowIPv4)
			if tt.ok {
				assert.Empty(t, violations)
				return
			}
			code, text := why(seed)
			assert.Contains(t, text, "access restrictions")
			assert.Equal(t, AccessRestrictionsTooMany, code)
			require.Len(t, violations, 1)
			assert.Contains(t, violations[0], "spec.accessRestrictions")
		})
	}
}

// Gardener's regionConfigMinimalDistance starts its least distance at
// math.MaxInt32 and levenshteinMinimalDistance at 1000: a seed farther away
// is never a candidate.
func TestMinimalDistanceLimits(t *testing.T) {
	long, far := strings.Repeat("q", 520), strings.Repeat("z", 520) // 520 edits apart
	for _, tt := range []struct {
		name   string
		region string
		table  string // the region config's entry for the Shoot's region; "" for none
		want   string // "" for unschedulable
	}{
		{name: "table at the limit", region: "eu-west-1", table: "eu-west-1: 2147483648\nus-east-1: 2147483647\n", want: "us"},
		{name: "table past the limit falls back to names", region: "eu-west-1", table: "eu-west-1: 2147483648\nus-east-1: 4294967296\n", want: "eu"},
		{name: "table: the own region past the limit", region: "us-east-1", table: "us-east-1: 2147483648\n", want: "us"},
		{name: "table: nothing within the limit, names decide", region: "us-east-1", table: "us-east-1: 4294967296\neu-west-1: 2147483648\n", want: "us"},
		{name: "table: exactly 2^31-1 is within", region: "us-east-1", table: "us-east-1: 4294967296\neu-west-1: 2147483647\n", want: "eu"},
		{name: "names within 1000", region: "eu-west-1", want: "eu"},
		{name: "no seed within 1000 by name", region: far, want: ""},
		{name: "a long region near the seed's", region: long + "-2", want: "long"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			snap := snapshotOf(nil,
				readySeed("eu", withRegion("aws", "eu-west-1")),
				readySeed("us", withRegion("aws", "us-east-1")),
				readySeed("long", withRegion("aws", long+"-1")))
			if tt.table != "" {
				snap.RegionConfigs = []*RegionConfig{NewRegionConfig(regionConfigMap("rc", "aws", map[string]string{tt.region: tt.table}))}
			}
			shoot := basicShoot(func(s *api.Shoot) { s.Spec.Region = tt.region })
			d := decideBoth(t, snap, shoot, Options{Strategy: MinimalDistance})
			assert.Equal(t, tt.want, d.Seed, d.Summary())
			if tt.want == "" {
				assert.Equal(t, StepStrategy, d.Step)
			}
		})
	}
}

// Gardener's DetermineSeed looks up the Project of the Shoot's namespace
// (ProjectForNamespaceFromReader) before any filter and fails without one.
func TestProjectIsRequired(t *testing.T) {
	snap := snapshotOf(nil, readySeed("a"))
	d := decideBoth(t, snap, basicShoot(func(s *api.Shoot) { s.Namespace = "garden-elsewhere" }), Options{Strategy: SameRegion})
	assert.False(t, d.Schedulable())
	assert.Equal(t, StepProject, d.Step)
	assert.Contains(t, d.Summary(), `"garden-elsewhere"`)

	snap.Projects = nil // not tracked: every namespace counts as owned
	d = decideBoth(t, snap, basicShoot(func(s *api.Shoot) { s.Namespace = "garden-elsewhere" }), Options{Strategy: SameRegion})
	assert.Equal(t, "a", d.Seed)
}
