package handlers

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
)

// fixedFreshness reports the cache stale for a fixed duration.
type fixedFreshness time.Duration

func (f fixedFreshness) StaleFor(time.Time) time.Duration { return time.Duration(f) }

func TestStalenessGuard(t *testing.T) {
	for _, tc := range []struct {
		name  string
		g     StalenessGuard
		stale bool
	}{
		{name: "no freshness", g: StalenessGuard{MaxStaleness: time.Second}},
		{name: "bound disabled", g: StalenessGuard{Freshness: fixedFreshness(time.Hour)}},
		{name: "fresh", g: StalenessGuard{Freshness: fixedFreshness(0), MaxStaleness: time.Second}},
		{name: "at the bound", g: StalenessGuard{Freshness: fixedFreshness(30 * time.Second), MaxStaleness: 30 * time.Second}},
		{name: "beyond the bound", g: StalenessGuard{Freshness: fixedFreshness(31 * time.Second), MaxStaleness: 30 * time.Second}, stale: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stale := tc.g.StaleBeyond(time.Now())
			assert.Equal(t, tc.stale, stale)
		})
	}
}

func TestShootMutatorStaleCache(t *testing.T) {
	t.Run("beyond the bound: admitted without a seed, with a warning", func(t *testing.T) {
		placer := &fakePlacer{decision: scheduled}
		reg := prometheus.NewRegistry()
		m := newMutator(t, placer, reg)
		m.StalenessGuard = StalenessGuard{Freshness: fixedFreshness(45 * time.Second), MaxStaleness: 30 * time.Second}
		_, out := serve(t, m, context.Background(), review{}.body())
		assert.True(t, out.Response.Allowed)
		assert.Empty(t, out.Response.Patch, "no seed is set")
		assert.Empty(t, placer.Calls(), "nothing is decided from the stale cache")
		require.Len(t, out.Response.Warnings, 1)
		assert.Equal(t, "seedwarden: the placement cache is stale (watch broken for 45s); the Shoot is admitted without a seed and stays pending",
			out.Response.Warnings[0])
		assert.True(t, strings.HasPrefix(out.Response.Warnings[0], StaleCacheWarningPrefix))
	})
	t.Run("a user's placement annotation is still removed", func(t *testing.T) {
		m := newMutator(t, &fakePlacer{decision: scheduled}, prometheus.NewRegistry())
		m.StalenessGuard = StalenessGuard{Freshness: fixedFreshness(time.Minute), MaxStaleness: time.Second}
		obj := shootJSON(`"annotations": {"seedwarden.io/placement": "forged"},`, "")
		_, out := serve(t, m, context.Background(), review{object: obj}.body())
		assert.True(t, out.Response.Allowed)
		got := applyPatch(t, obj, out.Response.Patch)
		assert.NotContains(t, got["metadata"].(map[string]any)["annotations"], "seedwarden.io/placement")
		assert.NotContains(t, got["spec"], "seedName")
	})
	t.Run("within the bound: placed as usual", func(t *testing.T) {
		placer := &fakePlacer{decision: scheduled}
		m := newMutator(t, placer, prometheus.NewRegistry())
		m.StalenessGuard = StalenessGuard{Freshness: fixedFreshness(10 * time.Second), MaxStaleness: 30 * time.Second}
		_, out := serve(t, m, context.Background(), review{}.body())
		assert.True(t, out.Response.Allowed)
		assert.NotEmpty(t, out.Response.Patch)
		assert.Empty(t, out.Response.Warnings)
		assert.Len(t, placer.Calls(), 1)
	})
}

func TestShootCapacityValidatorStaleCache(t *testing.T) {
	stale := StalenessGuard{Freshness: fixedFreshness(45 * time.Second), MaxStaleness: 30 * time.Second}

	f := newCapacityFixture(t)
	f.v.StalenessGuard = stale
	resp := vServe(t, f.v, vReview{object: vShoot("small", nil)}.body(t))
	assert.False(t, resp.Allowed)
	assert.Equal(t, `seedwarden: cannot check seed "small": the placement cache is stale (watch broken for 45s, longer than cache.maxStaleness 30s); retry once the webhook has resynced`, vMessage(resp))
	assert.Equal(t, int64(1), f.store.Usage("small"), "nothing reserved")

	// The webhook's own placement is denied too: its capacity is checked in the cache.
	resp = vServe(t, f.v, vReview{object: vShoot("small", f.ownPlacement("small"))}.body(t))
	assert.False(t, resp.Allowed)

	// Requests setting no seed are unaffected.
	resp = vServe(t, f.v, vReview{object: vShoot("", nil)}.body(t))
	assert.True(t, resp.Allowed)
	resp = vServe(t, f.v, vReview{operation: admissionv1.Update, object: vShoot("full", nil), oldObject: vShoot("full", nil)}.body(t))
	assert.True(t, resp.Allowed)

	// Within the bound nothing changes.
	f = newCapacityFixture(t)
	f.v.StalenessGuard = StalenessGuard{Freshness: fixedFreshness(10 * time.Second), MaxStaleness: 30 * time.Second}
	resp = vServe(t, f.v, vReview{object: vShoot("small", nil)}.body(t))
	assert.True(t, resp.Allowed, vMessage(resp))
	assert.Equal(t, int64(2), f.store.Usage("small"))
}

func TestShootBindingValidatorStaleCache(t *testing.T) {
	stale := StalenessGuard{Freshness: fixedFreshness(45 * time.Second), MaxStaleness: 30 * time.Second}
	binding := vReview{operation: admissionv1.Update, subResource: "binding", object: vShoot("aws-eu2", nil), oldObject: vShoot("aws-eu1", nil)}

	f := newBindingFixture(t)
	f.v.StalenessGuard = stale
	resp := vServe(t, f.v, func() vReview { r := binding; r.user = binderUser; return r }().body(t))
	assert.False(t, resp.Allowed)
	assert.Contains(t, vMessage(resp), `cannot check seed "aws-eu2": the placement cache is stale (watch broken for 45s`)
	assert.Zero(t, f.auth.calls.Load(), "denied before asking the API server")

	// The webhook's own placement needs no cache: still admitted.
	resp = vServe(t, f.v, vReview{object: vShoot("aws-eu1", placed(f.token(vNamespace, vName, "", "aws-eu1")))}.body(t))
	assert.True(t, resp.Allowed, vMessage(resp))
	// Rules that need no cache still apply.
	resp = vServe(t, f.v, vReview{operation: admissionv1.Update, object: vShoot("", nil), oldObject: vShoot("aws-eu1", nil)}.body(t))
	assert.False(t, resp.Allowed)
	assert.Contains(t, vMessage(resp), "unsetting the seed")
	resp = vServe(t, f.v, vReview{object: vShoot("", nil)}.body(t))
	assert.True(t, resp.Allowed)
	// A seed selector change is checked against the current seed, from the cache.
	withSelector := strings.Replace(vShoot("aws-eu1", nil), `"purpose": "evaluation"`, `"seedSelector": {"matchLabels": {"env": "prod"}}, "purpose": "evaluation"`, 1)
	resp = vServe(t, f.v, vReview{operation: admissionv1.Update, object: withSelector, oldObject: vShoot("aws-eu1", nil)}.body(t))
	assert.False(t, resp.Allowed)
	assert.Contains(t, vMessage(resp), `cannot check seed "aws-eu1": the placement cache is stale`)
	// Updates that change nothing the seed must offer need no cache.
	resp = vServe(t, f.v, vReview{operation: admissionv1.Update, object: withSelector, oldObject: withSelector}.body(t))
	assert.True(t, resp.Allowed, vMessage(resp))

	// Within the bound nothing changes.
	f = newBindingFixture(t)
	f.v.StalenessGuard = StalenessGuard{Freshness: fixedFreshness(10 * time.Second), MaxStaleness: 30 * time.Second}
	resp = vServe(t, f.v, func() vReview { r := binding; r.user = binderUser; return r }().body(t))
	assert.True(t, resp.Allowed, vMessage(resp))
}
