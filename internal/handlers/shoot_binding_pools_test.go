package handlers

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// poolLabel marks the seeds of the test pools.
const poolLabel = "seedwarden.io/pool"

// poolsFor builds the pools (name, mode, projects, the seeds' poolLabel
// value; a project list of one "tier=..." entry selects projects by label).
func poolsFor(t *testing.T, specs ...[4]string) *placement.Policies {
	t.Helper()
	p := &placement.Policies{}
	for _, s := range specs {
		var projects []string
		var sel *metav1.LabelSelector
		if k, v, ok := strings.Cut(s[2], "="); ok {
			sel = &metav1.LabelSelector{MatchLabels: map[string]string{k: v}}
		} else if s[2] != "" {
			projects = []string{s[2]}
		}
		pool, err := placement.NewPool(s[0], placement.PoolMode(s[1]), projects, sel, &metav1.LabelSelector{MatchLabels: map[string]string{poolLabel: s[3]}})
		require.NoError(t, err)
		p.Pools = append(p.Pools, pool)
	}
	require.NoError(t, p.Validate())
	return p
}

// The binding webhook enforces Required seed pools for a seed set or
// changed (issue 39 item 4): the project dev (garden-dev, labelled
// tier=regulated) and seeds aws-eu1 (pool label "a"), aws-eu2 ("b") and
// two-zones (none). A refusal names the field, the seed, the pool and the
// project; Preferred pools refuse nothing; a request that keeps the seed
// is never refused for a pool.
func TestShootBindingValidatorRequiredPools(t *testing.T) {
	f0 := newBindingFixture(t)
	ownOnB := f0.token(vNamespace, vName, "", "aws-eu2")
	as := asUser
	cases := []struct {
		name        string
		pools       [][4]string
		review      vReview
		wantAllowed bool
		wantMessage []string
	}{
		{name: "project in a Required pool, seed outside it",
			pools:  [][4]string{{"regulated", "Required", "dev", "a"}},
			review: as(reviewCreate("two-zones", nil), binderUser),
			wantMessage: []string{`Shoot "garden-dev/crazy-botany" cannot be placed on seed "two-zones"`,
				`spec.seedName: project "dev" is in seed pool "regulated" (mode Required), whose Shoots go only to its seeds, and seed "two-zones" is not one of them`}},
		{name: "project in a Required pool, seed in it", pools: [][4]string{{"regulated", "Required", "dev", "a"}},
			review: as(reviewCreate("aws-eu1", nil), binderUser), wantAllowed: true},
		{name: "seed in a Required pool of another project",
			pools:       [][4]string{{"payments", "Required", "payments", "b"}},
			review:      as(reviewCreate("aws-eu2", nil), binderUser),
			wantMessage: []string{`spec.seedName: seed "aws-eu2" is in seed pool "payments" (mode Required), which takes only the Shoots of its projects, and project "dev" is not one of them`}},
		{name: "seed outside every pool, project in none", pools: [][4]string{{"payments", "Required", "payments", "b"}},
			review: as(reviewCreate("two-zones", nil), binderUser), wantAllowed: true},
		{name: "project by label selector", pools: [][4]string{{"by-tier", "Required", "tier=regulated", "a"}},
			review:      as(reviewCreate("aws-eu2", nil), binderUser),
			wantMessage: []string{`project "dev" is in seed pool "by-tier" (mode Required)`, `seed "aws-eu2" is not one of them`}},
		{name: "a Preferred pool refuses nothing", pools: [][4]string{{"soft", "Preferred", "dev", "a"}, {"other", "Preferred", "payments", "b"}},
			review: as(reviewCreate("aws-eu2", nil), binderUser), wantAllowed: true},
		{name: "the first breaking pool is named", pools: [][4]string{{"first", "Required", "payments", "b"}, {"second", "Required", "dev", "a"}},
			review: as(reviewCreate("aws-eu2", nil), binderUser), wantMessage: []string{`seed pool "first"`}},
		{name: "a binding to a seed outside the pool", pools: [][4]string{{"regulated", "Required", "dev", "a"}},
			review:      as(reviewBinding("", "aws-eu2"), binderUser),
			wantMessage: []string{`project "dev" is in seed pool "regulated"`, `seed "aws-eu2" is not one of them`}},
		// The token names the Shoot and the seed; the pool changed since.
		{name: "own placement onto a seed a pool now keeps", pools: [][4]string{{"payments", "Required", "payments", "b"}},
			review: reviewCreate("aws-eu2", placed(ownOnB)), wantMessage: []string{`seed "aws-eu2" is in seed pool "payments"`}},
		{name: "an update that keeps the seed", pools: [][4]string{{"payments", "Required", "payments", "b"}},
			review: reviewUpdate("aws-eu2", "aws-eu2", nil), wantAllowed: true},
		{name: "no policies", review: as(reviewCreate("aws-eu2", nil), binderUser), wantAllowed: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newBindingFixture(t)
			store := f.v.Landscape.(*cache.Store)
			ns := vNamespace
			store.Apply(&api.Project{ObjectMeta: metav1.ObjectMeta{Name: "dev", Labels: map[string]string{"tier": "regulated"}}, Spec: api.ProjectSpec{Namespace: &ns}})
			store.Apply(vSeed("aws-eu1", 10, func(s *api.Seed) { s.Labels = map[string]string{poolLabel: "a"} }))
			store.Apply(vSeed("aws-eu2", 10, func(s *api.Seed) { s.Labels = map[string]string{poolLabel: "b"} }))
			store.Apply(vSeed("two-zones", 10))
			if tc.pools != nil {
				f.v.Policies = poolsFor(t, tc.pools...)
			}
			resp := vServe(t, f.v, tc.review.body(t))
			assert.Equal(t, tc.wantAllowed, resp.Allowed, vMessage(resp))
			for _, m := range tc.wantMessage {
				assert.Contains(t, vMessage(resp), m)
			}
			if !resp.Allowed {
				assert.Equal(t, int32(http.StatusForbidden), resp.Result.Code)
			}
		})
	}
}

// Under enforcement warn a pool's refusal admits the request with deny's
// message as a warning.
func TestShootBindingValidatorRequiredPoolWarn(t *testing.T) {
	f := newBindingFixture(t)
	f.v.Policies = poolsFor(t, [4]string{"payments", "Required", "payments", "b"})
	f.v.Landscape.(*cache.Store).Apply(vSeed("aws-eu2", 10, func(s *api.Seed) { s.Labels = map[string]string{poolLabel: "b"} }))
	f.v.Enforce = NewEnforcer(WebhookBinding, EnforceWarn, nil, nil, vLog(t))
	resp := vServe(t, f.v, asUser(reviewCreate("aws-eu2", nil), binderUser).body(t))
	require.True(t, resp.Allowed, vMessage(resp))
	require.Len(t, resp.Warnings, 1)
	assert.Contains(t, resp.Warnings[0], `seed "aws-eu2" is in seed pool "payments" (mode Required)`)
}
