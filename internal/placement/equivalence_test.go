package placement_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/landscapegen"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// TestFastPathMatchesPlain checks the fast path (fast.go, steps 1-6 in one
// pass, with and without the seed index of fast_index.go) against the plain
// filters (filters.go): for every case the whole Decision (seed, tied, usage,
// failing step, message, reasons, total) of the fast path never, always and
// as in production going through the index equals the plain path's, and
// Decide equals the plain path replayed with explanations when
// unschedulable. The cases
// are the 1229 recorded conformance scenarios under both strategies and every
// network mode, and generated landscapes of 0 to 700 seeds whose seeds and
// Shoots are mutated at random (unusable, deleting, other providers and
// regions, labels, zones and zone modes, taints, capacity, seedwarden's
// cordon, ...), with random
// region configs and scoring profiles (narrow_gen_test.go), decided on
// alternately with a neighbouring snapshot that differs by one seed, so the
// index is also rebuilt from its predecessor.
func TestFastPathMatchesPlain(t *testing.T) {
	t.Run("conformance", func(t *testing.T) {
		var st stats
		for _, ls := range loadScenarios(t) {
			sc, store := ls.scenario, ls.store
			for _, strategy := range []placement.Strategy{placement.SameRegion, placement.MinimalDistance} {
				for _, mode := range []placement.NetworkMode{placement.Disjoint, placement.AllowIPv4, ""} {
					st.check(t, sc.Name, store.Snapshot(), &sc.Shoot, placement.Options{Strategy: strategy, NetworkMode: mode})
				}
			}
		}
		st.report(t)
	})

	t.Run("generated", func(t *testing.T) {
		landscapes, shoots := 150, 12
		if testing.Short() {
			// 30 reached only 38 of its 60 narrowed cases: the first
			// landscapes narrow less often than the scaled floors assume.
			landscapes = 60
		}
		r := rand.New(rand.NewPCG(1, 2))
		sizes := []int{0, 1, 2, 5, 30, 100, placement.MinIndexed - 1, placement.MinIndexed, 300, 700}
		var st stats
		for l := 0; l < landscapes; l++ {
			n := sizes[l%len(sizes)]
			snap, usage := genSnapshot(r, n)
			neighbour := neighbourOf(r, snap, usage)
			for i := 0; i < shoots; i++ {
				shoot := genShoot(r)
				for _, strategy := range []placement.Strategy{placement.SameRegion, placement.MinimalDistance} {
					opts := placement.Options{
						Strategy:    strategy,
						NetworkMode: []placement.NetworkMode{placement.Disjoint, placement.AllowIPv4}[r.IntN(2)],
						Scoring:     genProfiles[r.IntN(len(genProfiles))],
					}
					name := fmt.Sprintf("landscape %d (%d seeds), shoot %d, %s", l, n, i, strategy)
					st.check(t, name, snap, shoot, opts)
					st.check(t, name+", neighbour", neighbour, shoot, opts)
				}
			}
		}
		st.report(t)
		// The generator must reach every way a decision ends, or the
		// comparison proves less than it claims.
		for _, step := range []placement.Step{
			placement.StepUsable, placement.StepCloudProfileSelector, placement.StepShootSelector,
			placement.StepProvider, placement.StepZones, placement.StepFailureTolerance, placement.StepCandidates, placement.StepStrategy,
		} {
			require.NotZero(t, st.failed[step], "no generated case fails at step %s", step)
		}
		// Floors per 150 landscapes, scaled for -short.
		require.Greater(t, st.scheduled, 500*landscapes/150, "too few generated cases are schedulable")
		require.Greater(t, st.scheduledIndexed, 200*landscapes/150, "too few schedulable cases on landscapes large enough for the index")
		require.Greater(t, st.excluded, 500*landscapes/150, "too few cases decided again with excluded seeds")
		require.Greater(t, st.narrowed, 300*landscapes/150, "too few schedulable cases decided on the narrowed seeds")
		require.Greater(t, st.scheduled-st.narrowed, 100*landscapes/150, "too few schedulable cases decided without narrowing")
	})
}

// stats counts the outcomes compared, to show the cases cover what they claim.
type stats struct {
	scheduled, scheduledIndexed int
	excluded                    int // decisions with Options.Exclude
	narrowed                    int // schedulable on the first, narrowed attempt (fast_narrow.go)
	failed                      map[placement.Step]int
	codes                       map[placement.ReasonCode]int // seeds and decisions per code
}

func (st *stats) countCodes(d placement.Decision) {
	if st.codes == nil {
		st.codes = map[placement.ReasonCode]int{}
	}
	for _, c := range d.Codes {
		st.codes[c]++
	}
	if d.Code != "" {
		st.codes[d.Code]++
	}
}

// checkCodes: an explained unschedulable decision gives every seed with a
// reason a code, and the decision itself one when no seed carries one;
// every code is one ReasonCodes lists (a seed's per seed, the decision's
// for its step). A schedulable decision carries none.
func checkCodes(t *testing.T, name string, d placement.Decision) {
	t.Helper()
	if d.Schedulable() {
		require.Empty(t, d.Codes, name)
		require.Empty(t, d.Code, name)
		return
	}
	require.Len(t, d.Codes, len(d.Reasons), "%s: seeds with a reason and seeds with a code differ", name)
	for seed := range d.Reasons {
		code := d.Codes[seed]
		require.True(t, slices.ContainsFunc(placement.ReasonCodes, func(i placement.ReasonCodeInfo) bool { return i.Code == code && i.PerSeed }),
			"%s: seed %s: code %q is no seed code (reason %q)", name, seed, code, d.Reasons[seed])
	}
	if d.Code != "" {
		require.True(t, slices.ContainsFunc(placement.ReasonCodes, func(i placement.ReasonCodeInfo) bool { return i.Code == d.Code && i.Step == d.Step && !i.PerSeed }),
			"%s: decision code %q is not listed for step %s", name, d.Code, d.Step)
	}
	require.True(t, d.Code != "" || len(d.Codes) > 0, "%s: unschedulable at %s without any code: %s", name, d.Step, d.Message)
}

func (st *stats) check(t *testing.T, name string, snap *placement.Snapshot, shoot *api.Shoot, opts placement.Options) {
	t.Helper()
	want := st.compare(t, name, snap, shoot, opts)
	// Decided again without the chosen seed and a neighbour (the mutating
	// webhook's retry when a seed is full across replicas): the paths
	// must still agree, down to the reasons naming the excluded seeds.
	for range 2 {
		if !want.Schedulable() {
			break
		}
		opts.Exclude = append(slices.Clone(opts.Exclude), want.Seed, neighbourName(snap, want.Seed))
		want = st.compare(t, fmt.Sprintf("%s, excluding %v", name, opts.Exclude), snap, shoot, opts)
		st.excluded++
	}
}

// neighbourName is the name of the seed after name in snap (wrapping).
func neighbourName(snap *placement.Snapshot, name string) string {
	for i, s := range snap.Seeds {
		if s.Name == name {
			return snap.Seeds[(i+1)%len(snap.Seeds)].Name
		}
	}
	return name
}

// compare checks every way of the fast path against the plain filters and
// returns Decide's decision.
func (st *stats) compare(t *testing.T, name string, snap *placement.Snapshot, shoot *api.Shoot, opts placement.Options) placement.Decision {
	t.Helper()
	plain := placement.Plain.Run(snap, shoot, opts)
	for _, v := range placement.FastVariants {
		got := v.Run(snap, shoot, opts)
		require.Equal(t, plain, got, "%s: fast path (%s) differs from the plain filters", name, v.Name)
	}
	want := plain
	if !want.Schedulable() {
		want = placement.Explain.Run(snap, shoot, opts)
	}
	require.Equal(t, want, placement.Decide(snap, shoot, opts), "%s: Decide differs from the plain filters", name)

	if st.failed == nil {
		st.failed = map[placement.Step]int{}
	}
	checkCodes(t, name, want)
	switch {
	case !want.Schedulable():
		st.failed[want.Step]++
		st.countCodes(want)
		require.False(t, placement.NarrowedFirst(snap, shoot, opts), "%s: narrowed seeds left for an unschedulable Shoot", name)
	case len(snap.Seeds) >= placement.MinIndexed:
		st.scheduled++
		st.scheduledIndexed++
	default:
		st.scheduled++
	}
	if want.Schedulable() && placement.NarrowedFirst(snap, shoot, opts) {
		st.narrowed++
	}
	return want
}

func (st *stats) report(t *testing.T) {
	t.Logf("compared: %d schedulable (%d on landscapes using the index, %d on narrowed seeds), unschedulable by step: %v; %d with excluded seeds; codes: %v",
		st.scheduled, st.scheduledIndexed, st.narrowed, st.failed, st.excluded, st.codes)
}

var (
	genProviders = []string{"aws", "gcp", "azure", "openstack", "alicloud", "*", ""}
	genLabels    = []map[string]string{nil, {"environment": "prod"}, {"environment": "dev"}, {"environment": "dev", "tier": "edge"}}
)

// genSnapshot is a landscapegen landscape of n seeds, each mutated with
// probabilities drawn per landscape (so some landscapes are mostly unusable,
// mostly of another provider, ...), with random usage and a random profile.
func genSnapshot(r *rand.Rand, n int) (*placement.Snapshot, map[string]int64) {
	return genSnapshotMarked(r, n, nil)
}

// genSnapshotMarked is genSnapshot with mark (when not nil) applied to each
// Seed last, before it is digested: what the policy tests add to a seed.
func genSnapshotMarked(r *rand.Rand, n int, mark func(*api.Seed)) (*placement.Snapshot, map[string]int64) {
	p := make([]float64, 15)
	for i := range p {
		p[i] = []float64{0, 0, 0.02, 0.1, 0.3, 1}[r.IntN(6)]
	}
	hit := func(i int) bool { return r.Float64() < p[i] }
	usage := map[string]int64{}
	snap := &placement.Snapshot{
		CloudProfiles: map[string]*placement.CloudProfile{"aws": placement.NewCloudProfile("aws", genProfile(r))},
		Projects:      map[string]*placement.Project{landscapegen.Namespace: {Name: "dev"}},
		Usage:         func(s *placement.Seed) int64 { return usage[s.Name] },
	}
	if r.IntN(4) > 0 {
		snap.RegionConfigs = []*placement.RegionConfig{genRegionConfig(r)}
	}
	for i := 0; i < n; i++ {
		s := landscapegen.Seed(i)
		if s.Spec.Settings == nil {
			s.Spec.Settings = &api.SeedSettings{}
		}
		if hit(0) {
			switch r.IntN(4) {
			case 0:
				s.Status.LastOperation = nil
			case 1:
				s.Spec.Settings.Scheduling = &api.SeedSettingScheduling{Visible: false}
			case 2:
				s.Status.Conditions[0].Status = "False"
			case 3:
				s.Spec.Backup = &api.SeedBackup{Provider: "aws"} // without BackupBucketsReady
			}
		}
		if hit(1) {
			now := metav1.Now()
			s.DeletionTimestamp = &now
		}
		if hit(2) {
			s.Spec.Provider.Type = genProviders[r.IntN(len(genProviders))]
		}
		if hit(3) {
			s.Spec.Provider.Region = landscapegen.Regions[r.IntN(len(landscapegen.Regions))]
		}
		if hit(4) {
			s.Labels = genLabels[r.IntN(len(genLabels))]
		}
		if hit(5) {
			s.Spec.Provider.Zones = genZones(r, s.Spec.Provider.Region)
		}
		if hit(6) {
			switch r.IntN(4) {
			case 0:
				s.Spec.Settings.ZoneSelection = nil
			case 1:
				s.Spec.Settings.ZoneSelection.Mode = api.ZoneSelectionEnforce
			case 2:
				s.Spec.Settings.ZoneSelection.Mode = ""
			case 3:
				s.Spec.Settings.ZoneSelection.Mode = "Sometimes"
			}
		}
		if hit(7) {
			s.Annotations = map[string]string{api.AnnotationEmergencyStop: "true"}
		}
		if hit(8) {
			s.Spec.Taints = []api.SeedTaint{{Key: "dedicated", Value: ptr.To("team")}}
		}
		if hit(9) {
			s.Spec.AccessRestrictions = []api.AccessRestriction{{Name: "eu-access-only"}}
		}
		if hit(10) {
			s.Spec.DNS.Defaults = []api.SeedDNSProviderConfig{{Domain: "example.com"}}
		}
		if hit(11) {
			s.Status.Allocatable[api.ResourceShoots] = *resource.NewQuantity(int64(r.IntN(3)), resource.DecimalSI)
		}
		if hit(12) {
			s.Spec.Networks.Pods = "10.181.0.0/16" // the generated Shoot's pods
		}
		if hit(13) {
			s.Spec.Settings = nil
		}
		if mark != nil {
			mark(s)
		}
		seed := placement.NewSeed(s)
		if hit(14) {
			seed = seed.WithCordon("seed is being drained (SeedDrain gen)")
		}
		snap.Seeds = append(snap.Seeds, seed)
		usage[s.Name] = int64(r.IntN(300))
	}
	return snap, usage
}

// neighbourOf is snap with one seed replaced, added or removed and every
// other Seed shared, as the cache publishes a landscape change.
func neighbourOf(r *rand.Rand, snap *placement.Snapshot, usage map[string]int64) *placement.Snapshot {
	next := *snap
	next.Seeds = slices.Clone(snap.Seeds)
	n := len(next.Seeds)
	switch op := r.IntN(3); {
	case op == 0 && n > 0: // replace
		i := r.IntN(n)
		s := landscapegen.Seed(i)
		s.Spec.Provider.Zones = genZones(r, s.Spec.Provider.Region)
		next.Seeds[i] = placement.NewSeed(s)
	case op == 1 && n > 0: // remove
		i := r.IntN(n)
		next.Seeds = slices.Clip(slices.Delete(next.Seeds, i, i+1))
	default: // add, after every existing name
		s := landscapegen.Seed(n + 1000)
		usage[s.Name] = 0
		next.Seeds = append(next.Seeds, placement.NewSeed(s))
	}
	return &next
}

func genZones(r *rand.Rand, region string) []string {
	letters := "abcdefg"
	switch r.IntN(6) {
	case 0:
		return nil
	case 1: // more zones than a Seed keeps hashes of inline
		zones := []string{}
		for _, c := range letters[:placement.InlineZones+1+r.IntN(2)] {
			zones = append(zones, region+"-"+string(c))
		}
		r.Shuffle(len(zones), func(i, j int) { zones[i], zones[j] = zones[j], zones[i] })
		return zones
	case 2: // another region's
		return []string{landscapegen.Regions[r.IntN(len(landscapegen.Regions))] + "-a"}
	default:
		zones := []string{}
		for _, c := range letters[:1+r.IntN(3)] {
			zones = append(zones, region+"-"+string(c))
		}
		return zones
	}
}

func genProfile(r *rand.Rand) *api.CloudProfileSpec {
	spec := &api.CloudProfileSpec{Type: "aws"}
	switch r.IntN(8) {
	case 0:
	case 1:
		spec.SeedSelector = &api.SeedSelector{ProviderTypes: []string{"aws", "gcp"}}
	case 2:
		spec.SeedSelector = &api.SeedSelector{ProviderTypes: []string{"*"}}
	case 3: // more types than the fast path hashes
		types := []string{"a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8", "a9", "gcp", "aws"}
		spec.SeedSelector = &api.SeedSelector{ProviderTypes: types[r.IntN(3):]}
	case 4:
		spec.SeedSelector = &api.SeedSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"environment": "prod"}}}
	case 5:
		spec.SeedSelector = &api.SeedSelector{LabelSelector: metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "environment", Operator: "Bogus"}}}}
	case 6:
		spec.SeedSelector = &api.SeedSelector{ProviderTypes: []string{"azure"}, LabelSelector: metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "environment", Operator: metav1.LabelSelectorOpExists}}}}
	default:
		spec.SeedSelector = &api.SeedSelector{ProviderTypes: []string{"aws"}}
	}
	return spec
}

// genShoot is landscapegen's Shoot with random changes to everything steps
// 1-5 read, and some of what the later steps read.
func genShoot(r *rand.Rand) *api.Shoot {
	sh := landscapegen.NewShoot("new")
	if r.IntN(4) == 0 {
		sh.Spec.Region = landscapegen.Regions[r.IntN(len(landscapegen.Regions))]
	}
	if r.IntN(4) == 0 {
		sh.Spec.Provider.Type = genProviders[r.IntN(len(genProviders)-1)]
	}
	switch r.IntN(8) {
	case 0:
		sh.Spec.Provider.Workers = nil
	case 1:
		sh.Spec.Provider.Workers = []api.Worker{{Name: "a"}, {Name: "b"}}
	case 2:
		sh.Spec.Provider.Workers = []api.Worker{{Name: "a", Zones: genZones(r, landscapegen.Regions[r.IntN(len(landscapegen.Regions))])}}
	case 3: // more worker zones than the fast path hashes
		var zones []string
		for _, region := range landscapegen.Regions[:3+r.IntN(3)] {
			zones = append(zones, region+"-b", region+"-c")
		}
		r.Shuffle(len(zones), func(i, j int) { zones[i], zones[j] = zones[j], zones[i] })
		sh.Spec.Provider.Workers = []api.Worker{{Name: "a", Zones: zones[:len(zones)/2]}, {Name: "b", Zones: zones[len(zones)/2:]}}
	case 4:
		sh.Spec.Provider.Workers = []api.Worker{{Name: "a", Zones: []string{"nowhere-1"}}}
	case 5: // one zone, possibly one a seed lists beyond its inline hashes
		sh.Spec.Provider.Workers = []api.Worker{{Name: "a", Zones: []string{sh.Spec.Region + "-" + string("abcdef"[r.IntN(6)])}}}
	}
	switch r.IntN(10) {
	case 0:
		sh.Spec.ControlPlane = &api.ControlPlane{HighAvailability: &api.HighAvailability{FailureTolerance: api.FailureTolerance{Type: api.FailureToleranceZone}}}
	case 1:
		sh.Spec.ControlPlane = &api.ControlPlane{Zones: []string{sh.Spec.Region + "-a"}}
	case 2:
		sh.Spec.ControlPlane = &api.ControlPlane{Zones: []string{sh.Spec.Region + "-a", sh.Spec.Region + "-d"}}
	}
	switch r.IntN(8) {
	case 0:
		sh.Spec.SeedSelector = &api.SeedSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"environment": "prod"}}}
	case 1:
		sh.Spec.SeedSelector = &api.SeedSelector{LabelSelector: metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "environment", Operator: metav1.LabelSelectorOpIn, Values: []string{"dev"}}}}}
	case 2:
		sh.Spec.SeedSelector = &api.SeedSelector{LabelSelector: metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "environment", Operator: "Bogus"}}}}
	case 3:
		sh.Spec.SeedSelector = &api.SeedSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"tier": "edge"}}}
	case 4:
		sh.Spec.SeedSelector = &api.SeedSelector{ProviderTypes: []string{"gcp"}} // plays no part, as in the reference
	}
	if r.IntN(10) == 0 {
		sh.Spec.Purpose = ptr.To(api.PurposeTesting)
	}
	if r.IntN(10) == 0 {
		sh.Spec.Networking = nil
	}
	if r.IntN(4) == 0 {
		sh.Spec.Tolerations = []api.Toleration{{Key: "dedicated", Value: ptr.To("team")}, {Key: "seed.gardener.cloud/protected"}}
	}
	if r.IntN(10) == 0 {
		sh.Spec.AccessRestrictions = []api.AccessRestrictionWithOptions{{Name: "eu-access-only"}}
	}
	if r.IntN(10) == 0 {
		sh.Spec.DNS = &api.DNS{Domain: ptr.To([]string{"new.dev.example.com", "custom.example.org"}[r.IntN(2)])}
	}
	return sh
}
