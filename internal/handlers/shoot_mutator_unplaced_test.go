package handlers

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seedwarden/seedwarden/internal/metrics"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// Answers without a placement (nothing fits, no placer, the request
// abandoned), their warnings, and the decision metrics.

func TestShootMutatorUnschedulable(t *testing.T) {
	long := placement.Decision{Total: 2000, Reasons: map[string]string{}}
	for i := range 2000 {
		// Distinct reasons: the summary groups seeds sharing one.
		long.Reasons[fmt.Sprintf("seed-%04d", i)] = fmt.Sprintf("taints not tolerated: «dedicated-%d»", i)
	}
	tests := []struct {
		name     string
		decision placement.Decision
		dryRun   bool
		want     func(t *testing.T, w string)
	}{{
		name:     "per-seed reasons",
		decision: unschedulable,
		want: func(t *testing.T, w string) {
			assert.Equal(t, "seedwarden: no seed fits this Shoot; it stays pending: "+
				"0/3 seeds eligible: aws-eu1: taints not tolerated, aws-eu2: no capacity, gcp-eu1: provider type does not match", w)
		},
	}, {
		name:     "dry-run",
		decision: unschedulable,
		dryRun:   true,
		want: func(t *testing.T, w string) {
			assert.True(t, strings.HasPrefix(w, UnschedulableWarningPrefix+"0/3 seeds eligible: aws-eu1"), w)
		},
	}, {
		name: "message without reasons, with control characters",
		decision: placement.Decision{Step: placement.StepStrategy, Total: 7,
			Message: "region config \"eu\": yaml: line 2:\n\tmapping values are not allowed"},
		want: func(t *testing.T, w string) {
			assert.Equal(t, UnschedulableWarningPrefix+
				`0/7 seeds eligible: region config "eu": yaml: line 2:  mapping values are not allowed`, w)
		},
	}, {
		name:     "truncated on a rune boundary",
		decision: long,
		want: func(t *testing.T, w string) {
			assert.Equal(t, maxWarningRunes, utf8.RuneCountInString(w))
			assert.True(t, utf8.ValidString(w))
			assert.True(t, strings.HasSuffix(w, "…"))
			assert.True(t, strings.HasPrefix(w, UnschedulableWarningPrefix+"0/2000 seeds eligible: seed-0000: taints"))
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			placer := &fakePlacer{decision: tt.decision}
			m := newMutator(t, placer, nil)
			_, ar := serve(t, m, t.Context(), review{dryRun: tt.dryRun}.body())
			resp := ar.Response

			assert.True(t, resp.Allowed)
			assert.Nil(t, resp.PatchType)
			assert.Empty(t, resp.Patch)
			require.Len(t, resp.Warnings, 1)
			tt.want(t, resp.Warnings[0])
			assertValidWarning(t, resp.Warnings[0])

			calls := placer.Calls()
			require.Len(t, calls, 1)
			if tt.dryRun {
				assert.Empty(t, calls[0].key)
			} else {
				assert.Equal(t, testUID, calls[0].key)
			}
		})
	}
}

func assertValidWarning(t testing.TB, w string) {
	t.Helper()
	assert.True(t, utf8.ValidString(w), "warning not UTF-8: %q", w)
	assert.LessOrEqual(t, utf8.RuneCountInString(w), maxWarningRunes)
	assert.False(t, strings.ContainsFunc(w, unicode.IsControl), "control character in warning %q", w)
}

func TestShootMutatorContextDone(t *testing.T) {
	placer := &fakePlacer{decision: scheduled}
	m := newMutator(t, placer, nil)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, ar := serve(t, m, ctx, review{}.body())
	assert.False(t, ar.Response.Allowed)
	assert.Equal(t, int32(http.StatusServiceUnavailable), ar.Response.Result.Code)
	assert.Contains(t, ar.Response.Result.Message, "context canceled")
	assert.Empty(t, placer.Calls())
}

func TestShootMutatorNoPlacer(t *testing.T) {
	m := newMutator(t, nil, nil)
	_, ar := serve(t, m, t.Context(), review{}.body())
	assert.False(t, ar.Response.Allowed)
	assert.Equal(t, int32(http.StatusInternalServerError), ar.Response.Result.Code)
}

func TestShootMutatorMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	scheduler := &fakePlacer{decision: scheduled}
	m := newMutator(t, scheduler, reg)
	serve(t, m, t.Context(), review{}.body())
	serve(t, m, t.Context(), review{dryRun: true}.body())
	serve(t, m, t.Context(), review{object: shootJSON("", `"seedName": "gcp-eu1",`)}.body())
	serve(t, m, t.Context(), review{kind: "core.gardener.cloud/v1beta1/Seed"}.body())
	m.Placer = &fakePlacer{decision: unschedulable}
	serve(t, m, t.Context(), review{}.body())

	// Metrics may be nil.
	m.Metrics = nil
	serve(t, m, t.Context(), review{}.body())

	families, err := reg.Gather()
	require.NoError(t, err)
	counts := map[string]float64{}
	var observations uint64
	for _, f := range families {
		switch f.GetName() {
		case metrics.DecisionsTotalName:
			for _, mt := range f.GetMetric() {
				labels := map[string]string{}
				for _, l := range mt.GetLabel() {
					labels[l.GetName()] = l.GetValue()
				}
				assert.Equal(t, "MinimalDistance", labels["strategy"])
				counts[labels["result"]] = mt.GetCounter().GetValue()
			}
		case metrics.DurationName:
			observations = f.GetMetric()[0].GetHistogram().GetSampleCount()
		}
	}
	assert.Equal(t, map[string]float64{
		metrics.ResultScheduled:     2,
		metrics.ResultSkipped:       1,
		metrics.ResultError:         1,
		metrics.ResultUnschedulable: 1,
	}, counts)
	assert.Equal(t, uint64(5), observations)
}

func TestWarning(t *testing.T) {
	assert.Equal(t, "a b\uFFFDc", warning("a\nb\xffc"))
	s := strings.Repeat("ä", maxWarningRunes)
	assert.Equal(t, s, warning(s))
	w := warning(s + "x")
	assert.Equal(t, maxWarningRunes, utf8.RuneCountInString(w))
	assert.Equal(t, strings.Repeat("ä", maxWarningRunes-1)+"…", w)
}
