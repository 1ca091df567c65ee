package placement_test

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/landscapegen"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// TestPoliciesOnGeneratedLandscapes holds the placement policies (issue 39)
// to a model written from their definition, on generated landscapes with
// random policies, avoid and soft-limit annotations, allocatable and pool
// labels. Gardener's decision is the default profile's: TestConformance and
// TestDifferential hold that to Gardener's own scheduler.
//
//   - A Required pool only removes seeds: with the pools alone the decision
//     is Gardener's on the landscape without the seeds they refuse.
//   - The preferences never place a Shoot on a seed Gardener's filters and
//     strategy refuse, never make it unschedulable, and choose the least
//     used of the best-ranked seeds Gardener would choose from.
//   - Where no such seed is avoided, past its soft limit, holding kept seats
//     or outside a Preferred pool (or all are alike), the seed, ties and
//     usage are Gardener's.
//
// Every way of the fast path decides as the plain filters do, policies on.
func TestPoliciesOnGeneratedLandscapes(t *testing.T) {
	landscapes := 600
	if testing.Short() {
		landscapes = 150
	}
	r := rand.New(rand.NewPCG(39, 40))
	sizes := []int{1, 2, 4, 12, placement.MinIndexed, 200}
	var st policyStats
	for l := range landscapes {
		n := sizes[l%len(sizes)]
		snap := genPolicyLandscape(r, n)
		for i := range 6 {
			shoot := genPolicyShoot(r)
			pol := genPolicies(t, r)
			for _, strategy := range []placement.Strategy{placement.SameRegion, placement.MinimalDistance} {
				name := fmt.Sprintf("landscape %d (%d seeds), shoot %d, %s, policies %+v", l, n, i, strategy, pol)
				st.check(t, name, snap, shoot, placement.Options{Strategy: strategy, NetworkMode: placement.Disjoint}, pol)
			}
		}
	}
	t.Logf("%+v", st)
	// The counts of 600 landscapes, halved; scaled down under -short.
	at := func(n int) int { return n * landscapes / 600 }
	require.Greater(t, st.Moved, at(60), "too few decisions the preferences moved off Gardener's seed")
	require.Greater(t, st.Ranked, at(90), "too few decisions where the preferences told seeds apart")
	require.Greater(t, st.Gardener, at(1000), "too few decisions with nothing to prefer")
	require.Greater(t, st.OnlyAvoided, at(330), "too few decisions where every seed left was avoided")
	require.Greater(t, st.PoolsRemoved, at(1300), "too few decisions where a Required pool removed seeds")
	require.Greater(t, st.Unschedulable, at(2500), "too few unschedulable decisions")
}

type policyStats struct {
	// Moved: the policies chose another seed than Gardener on the whole
	// landscape; Gardener: nothing to prefer, Gardener's seed expected.
	// Ranked: the preferences told Gardener's candidates apart.
	Moved, Ranked, Gardener, OnlyAvoided, PoolsRemoved, Unschedulable int
}

func (st *policyStats) check(t *testing.T, name string, snap *placement.Snapshot, shoot *api.Shoot, base placement.Options, pol *placement.Policies) {
	t.Helper()
	opts := base
	opts.Policies = pol
	got := placement.Decide(snap, shoot, opts)
	plain := placement.Plain.Run(snap, shoot, opts)
	for _, v := range placement.FastVariants {
		require.Equal(t, plain, v.Run(snap, shoot, opts), "%s: fast path (%s) differs from the plain filters", name, v.Name)
	}

	project := snap.Projects[shoot.Namespace]
	allowed := *snap
	allowed.Seeds = nil
	for _, s := range snap.Seeds {
		if _, refused := pol.RequiredRefusal(s, project); !refused {
			allowed.Seeds = append(allowed.Seeds, s)
		}
	}
	gardener := placement.Decide(&allowed, shoot, base)
	require.Equal(t, gardener.Schedulable(), got.Schedulable(), "%s: %s / %s", name, got.Summary(), gardener.Summary())
	if len(allowed.Seeds) < len(snap.Seeds) {
		st.PoolsRemoved++
	}
	if !got.Schedulable() {
		st.Unschedulable++
		return
	}
	if whole := placement.Decide(snap, shoot, base); whole.Seed != got.Seed {
		st.Moved++
		require.True(t, got.Policy.Acted(), "%s: moved from %s to %s with no policy effect", name, whole.Seed, got.Seed)
	}

	ranks := map[string]placement.Rank{}
	best, alike := placement.Rank(255), true
	var candidates []*placement.Seed
	for _, s := range allowed.Seeds {
		if !placement.Admits(&allowed, shoot, base, s.Name) {
			continue
		}
		rank := wantRank(pol, snap, shoot, project, s)
		if len(candidates) > 0 && rank != best {
			alike = false
		}
		candidates = append(candidates, s)
		ranks[s.Name], best = rank, min(best, rank)
	}
	require.NotEmpty(t, candidates, name)
	require.Contains(t, ranks, got.Seed, "%s: %s is not among Gardener's candidates", name, got.Seed)
	require.Equal(t, best, got.Policy.Rank, "%s: rank of %s", name, got.Seed)

	least := int64(-1)
	var tied []string
	for _, s := range candidates {
		if ranks[s.Name] != best {
			continue
		}
		switch u := snap.Usage(s); {
		case least < 0 || u < least:
			least, tied = u, []string{s.Name}
		case u == least:
			tied = append(tied, s.Name)
		}
	}
	require.Equal(t, tied[0], got.Seed, "%s: %s", name, got.Policy.Summary())
	require.Equal(t, tied, got.Tied, name)
	require.Equal(t, least, got.Usage, name)
	if best&placement.RankAvoided != 0 {
		st.OnlyAvoided++
	}
	if !alike {
		st.Ranked++
	}
	if alike {
		st.Gardener++
		require.Equal(t, gardener.Seed, got.Seed, name)
		require.Equal(t, gardener.Tied, got.Tied, name)
	}
}

// genPolicyLandscape is a generated landscape with policy marks. Most of
// genSnapshot's landscapes leave landscapegen's Shoot no seed (it mutates
// whole landscapes at once); three in four are drawn again until one does, so
// most decisions have seeds to rank (up to 200 draws: a landscape of one
// seed rarely does).
func genPolicyLandscape(r *rand.Rand, n int) *placement.Snapshot {
	schedulable := r.IntN(4) > 0
	probe := landscapegen.NewShoot("probe")
	for tries := 0; ; tries++ {
		snap, _ := genSnapshotMarked(r, n, genPolicyMarks(r))
		snap.Projects = map[string]*placement.Project{landscapegen.Namespace: genPolicyProject(r)}
		d := placement.Decide(snap, probe, placement.Options{Strategy: placement.MinimalDistance, NetworkMode: placement.Disjoint})
		if !schedulable || d.Schedulable() || tries == 200 {
			return snap
		}
	}
}

// wantRank is a seed's rank by the definitions of issue 39: avoided; the
// Shoot is not zone-redundant and would take one of the places the seed
// keeps (no more free places than kept ones); at or past the soft limit; the
// project has Preferred pools and the seed is in none of them.
func wantRank(pol *placement.Policies, snap *placement.Snapshot, shoot *api.Shoot, project *placement.Project, s *placement.Seed) placement.Rank {
	var rank placement.Rank
	if _, ok := s.Avoided(); ok {
		rank |= placement.RankAvoided
	}
	if allocatable, ok := s.Allocatable(); ok {
		used := snap.Usage(s)
		if limit, ok := pol.SoftLimit(s); ok && used >= limit {
			rank |= placement.RankPastSoftLimit
		}
		cp := shoot.Spec.ControlPlane
		zoneRedundant := cp != nil && cp.HighAvailability != nil && cp.HighAvailability.FailureTolerance.Type == api.FailureToleranceZone
		if kept := pol.KeptSeatsOf(s); kept > 0 && !zoneRedundant && allocatable-used <= kept {
			rank |= placement.RankKeptSeat
		}
	}
	preferred := pol.ProjectPools(project) & pol.PoolsOf(placement.PoolPreferred)
	if preferred != 0 && pol.SeedPools(s)&preferred == 0 {
		rank |= placement.RankOutsidePreferredPool
	}
	return rank
}

// genPolicyMarks draws, per landscape, how often a seed is avoided, has a
// soft-limit annotation (valid or not), an allocatable of its own and a pool
// label; the result marks one Seed.
func genPolicyMarks(r *rand.Rand) func(*api.Seed) {
	pick := func(ps ...float64) float64 { return ps[r.IntN(len(ps))] }
	avoid, soft, alloc, pool := pick(0, 0, 0.1, 0.5, 1), pick(0, 0.2, 0.6), pick(0, 0.5, 1), pick(0, 0.3, 0.8)
	reasons := []string{"", "draining", " ", "old hardware"}
	percents := []string{"0", "30", "50", "90", "100", " 70 ", "x", "101", "-1"}
	pools := []string{"gold", "private", "shared"}
	return func(s *api.Seed) {
		ann := maps.Clone(s.Annotations)
		if ann == nil {
			ann = map[string]string{}
		}
		if r.Float64() < avoid {
			ann[api.AnnotationSeedAvoid] = reasons[r.IntN(len(reasons))]
		}
		if r.Float64() < soft {
			ann[api.AnnotationSeedSoftLimitPercent] = percents[r.IntN(len(percents))]
		}
		s.Annotations = ann
		if r.Float64() < alloc {
			s.Status.Allocatable[api.ResourceShoots] = *resource.NewQuantity(1+int64(r.IntN(320)), resource.DecimalSI)
		}
		if r.Float64() < pool {
			s.Labels = maps.Clone(s.Labels)
			if s.Labels == nil {
				s.Labels = map[string]string{}
			}
			s.Labels["pool"] = pools[r.IntN(len(pools))]
		}
	}
}

// genPolicyShoot is genShoot half the time; otherwise landscapegen's Shoot
// (which most generated landscapes admit), one in three zone-redundant.
func genPolicyShoot(r *rand.Rand) *api.Shoot {
	if r.IntN(2) == 0 {
		return genShoot(r)
	}
	shoot := landscapegen.NewShoot("new")
	if r.IntN(3) == 0 {
		shoot.Spec.ControlPlane = &api.ControlPlane{HighAvailability: &api.HighAvailability{FailureTolerance: api.FailureTolerance{Type: api.FailureToleranceZone}}}
	}
	return shoot
}

func genPolicyProject(r *rand.Rand) *placement.Project {
	labels := []map[string]string{nil, {"tier": "gold"}, {"tier": "bronze"}}
	return &placement.Project{Name: []string{"dev", "team-a"}[r.IntN(2)], Labels: labels[r.IntN(len(labels))]}
}

// genPolicies draws a policies block: none, or a soft limit, kept seats
// and up to three of a fixed set of pools, each Required or Preferred.
func genPolicies(t *testing.T, r *rand.Rand) *placement.Policies {
	if r.IntN(6) == 0 {
		return nil
	}
	pick := func(vs ...int) int { return vs[r.IntN(len(vs))] }
	pol := &placement.Policies{SoftLimitPercent: pick(0, 0, 50, 80, 100, r.IntN(101))}
	switch r.IntN(4) {
	case 1:
		pol.KeptSeats = int64(pick(1, 3, 50))
	case 2:
		pol.KeptSeatsPercent = pick(5, 34, 100)
	}
	pools := []struct {
		name     string
		projects []string
		project  *metav1.LabelSelector
		seeds    metav1.LabelSelector
	}{
		{"gold", []string{"dev"}, nil, metav1.LabelSelector{MatchLabels: map[string]string{"pool": "gold"}}},
		{"private", nil, &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "gold"}}, metav1.LabelSelector{MatchLabels: map[string]string{"pool": "private"}}},
		{"shared", []string{"team-a", "dev"}, nil, metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "pool", Operator: metav1.LabelSelectorOpIn, Values: []string{"shared", "gold"}},
		}}},
	}
	r.Shuffle(len(pools), func(i, j int) { pools[i], pools[j] = pools[j], pools[i] })
	for _, p := range pools[:r.IntN(len(pools)+1)] {
		mode := []placement.PoolMode{placement.PoolRequired, placement.PoolPreferred}[r.IntN(2)]
		pool, err := placement.NewPool(p.name, mode, p.projects, p.project, &p.seeds)
		require.NoError(t, err)
		pol.Pools = append(pol.Pools, pool)
	}
	require.NoError(t, pol.Validate(), strconv.Quote(fmt.Sprint(pol)))
	return pol
}
