package seedscale

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// poolWorld: project pay (garden-pay) and its Preferred pool "pay" of the
// seeds labelled pool=pay, which the set's seed and model are; the set's
// one seed is full (4 of 4), a seed outside set and pool has room for 50,
// and 6 of dev's and 2 of pay's Shoots wait for a seed in the set's region
// (the other seed is in eu-central-1).
func poolWorld(t *testing.T) (*world, *placement.Policies) {
	t.Helper()
	inPool := func(s *api.Seed) { s.Labels["pool"] = "pay" }
	w := &world{model: seed("model", "eu-west-1", 4, true, inPool)}
	w.seeds = append(w.seeds, seed("set-0", "eu-west-1", 4, true, inPool), seed("elsewhere", "eu-central-1", 50, false))
	w.shoots = shoots("full", "eu-west-1", "set-0", 4)
	w.pending = shoots("dev", "eu-west-1", "", 6)
	for _, s := range shoots("pay", "eu-west-1", "", 2) {
		s.Namespace = "garden-pay"
		w.pending = append(w.pending, s)
	}
	w.extra = []client.Object{&api.Project{
		TypeMeta:   metav1.TypeMeta{APIVersion: "core.gardener.cloud/v1beta1", Kind: "Project"},
		ObjectMeta: metav1.ObjectMeta{Name: "pay", ResourceVersion: "1"},
		Spec:       api.ProjectSpec{Namespace: ptr.To("garden-pay")},
	}}
	pool, err := placement.NewPool("pay", placement.PoolPreferred, []string{"pay"}, nil, &metav1.LabelSelector{MatchLabels: map[string]string{"pool": "pay"}})
	require.NoError(t, err)
	return w, &placement.Policies{Pools: []placement.Pool{pool}}
}

// payTemplate is a Shoot of project pay, in any region: the rest of the
// landscape (elsewhere, eu-central-1) takes it too.
func payTemplate() *api.Shoot {
	s := shoot("pay-small", "", "")
	s.Namespace = "garden-pay"
	return s
}

// A Headroom target naming a pool scales the pool's set for the pool's
// pending Shoots only (issue 39 item 4), and counts room on the pool's
// seeds only; without the pool the set grows for every pending Shoot its
// new seeds take, and the room elsewhere meets the target.
func TestHeadroomNamingAPool(t *testing.T) {
	for _, tc := range []struct {
		name      string
		pool      string
		minShoots int32
		region    string
		desired   int32
		placed    int
	}{
		// 8 pending in eu-west-1 and room for 1 more: three new
		// replicas of 4.
		{"no pool: every pending Shoot", "", 1, "eu-west-1", 4, 8},
		// 2 of pay pending, plus room for 1 more: one new replica.
		{"pool: its project's pending Shoots only", "pay", 1, "eu-west-1", 2, 2},
		// Every region: the pending Shoots and the room fit on elsewhere
		// (50 free), so the set stays.
		{"no pool: room anywhere counts", "", 10, "", 1, 8},
		// Room for 10 on the pool's seeds only: three new replicas of 4.
		{"pool: room on the pool's seeds only", "pay", 10, "", 4, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, policies := poolWorld(t)
			tmpl := payTemplate()
			tmpl.Spec.Region = tc.region
			if tc.region == "" {
				tmpl.Spec.Region = "eu-west-1"
			}
			m := headroom("pay-small", tc.minShoots)
			m.Headroom.Pool = tc.pool
			in := w.input(spec(1, 10, m))
			in.Options.Policies = policies
			in.Profiles = map[string]*api.Shoot{"pay-small": tmpl}
			if tc.region == "" {
				// Room anywhere: the strategy keeps every region.
				in.Options.Strategy = placement.MinimalDistance
			}
			rec, err := Recommend(in)
			require.NoError(t, err)
			assert.Equal(t, tc.desired, rec.Desired, rec.Message)
			assert.Equal(t, tc.placed, rec.PendingPlaced, "pending Shoots placed at %d replicas", rec.Desired)
			if tc.pool != "" {
				assert.Contains(t, rec.Metrics[0].Target, "on seed pool pay")
			}
		})
	}
}

// A pool the configuration does not have is an error naming the field and
// the value, as an unknown profile is.
func TestHeadroomUnknownPool(t *testing.T) {
	w, policies := poolWorld(t)
	m := headroom("pay-small", 1)
	m.Headroom.Pool = "payments"
	for _, p := range []*placement.Policies{policies, nil} {
		in := w.input(spec(1, 10, m))
		in.Options.Policies = p
		in.Profiles = map[string]*api.Shoot{"pay-small": payTemplate()}
		_, err := Recommend(in)
		require.Error(t, err)
		assert.Contains(t, err.Error(), `spec.metrics[0].headroom.pool: "payments" is not one of seedwarden's seed pools (policies.pools)`)
	}
}
