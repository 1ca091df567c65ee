package e2e

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seedwarden/seedwarden/internal/config"
)

// TestParseBenchShapes (no cluster): BenchShapesEnv values and what
// TestBindSideBySide runs for them, in the order it runs them.
func TestParseBenchShapes(t *testing.T) {
	loads, _ := sideBySidePlan(false)
	one := benchShape{limit: true, users: 1, replicas: 1}
	for _, tc := range []struct {
		name, v string
		want    []string // label of each scenario, in the order run
		err     string
	}{
		{name: "one shape", v: "limit:burst,20", want: []string{
			"limit, 1 user, 1 replica; empty, 20/s for 10 s", "limit, 1 user, 1 replica; empty, burst of 300"}},
		{name: "full loads run after every empty one", v: "limit:full20,50; nolimit,users=10,replicas=3:burst", want: []string{
			"limit, 1 user, 1 replica; empty, 50/s for 10 s",
			"no limit, 10 users, 3 replicas; empty, burst of 300",
			"limit, 1 user, 1 replica; full, 20/s for 10 s"}},
		{name: "spaces and empty shapes", v: " ; limit , users=2 : 50 ;", want: []string{"limit, 2 users, 1 replica; empty, 50/s for 10 s"}},
		{name: "no limit key", v: "users=2:20", err: `keys "users=2": want limit or nolimit`},
		{name: "limit twice", v: "limit,nolimit:20", err: `key "nolimit"`},
		{name: "unknown key", v: "limit,seeds=3:20", err: `key "seeds=3": want one of limit, nolimit, users=N, replicas=N`},
		{name: "two replicas", v: "limit,replicas=2:20", err: `replicas "2": want 1 or 3`},
		{name: "no users", v: "limit,users=0:20", err: `users "0": want 1 to 100`},
		{name: "unknown load", v: "limit:30", err: `load "30": want one of 20, 50, burst, full20, full50, fullburst`},
		{name: "no loads", v: "limit", err: `want keys:loads`},
		{name: "load twice", v: "limit:20;limit:20", err: `load 20 listed twice`},
		{name: "nothing", v: " ; ", err: `no shape`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseBenchShapes(tc.v, loads)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				assert.Contains(t, err.Error(), BenchShapesEnv)
				return
			}
			require.NoError(t, err)
			var labels []string
			for _, sc := range (benchPlan{scenarios: got}).ordered() {
				labels = append(labels, sc.label())
			}
			assert.Equal(t, tc.want, labels)
		})
	}
	t.Run("default", func(t *testing.T) {
		got, err := parseBenchShapes(defaultBenchShapes, loads)
		require.NoError(t, err)
		// The acceptance's shapes: one user on limited seeds, 1 and 3
		// replicas, each in every load the acceptance names.
		for _, replicas := range []int{1, 3} {
			shape := one
			shape.replicas = replicas
			for _, sc := range loads {
				if loadKey(sc) == "fullburst" {
					continue
				}
				sc.shape = shape
				assert.Contains(t, got, sc, "%s", sc.label())
			}
		}
	})
}

// TestAcceptanceGoals (no cluster): issue 40's targets per load, and the
// verdicts from pooled figures: seedwarden binds at twice the rate with
// 1.2× the p50 and 1.2× the API-server CPU.
func TestAcceptanceGoals(t *testing.T) {
	loads, _ := sideBySidePlan(true)
	shape := benchShape{limit: true, users: 1, replicas: 3}
	phase := func(sc scenario, b binder) phaseFigures {
		lat, span, cpu := 100*time.Millisecond, 10*time.Second, time.Second
		if b == bySeedwarden {
			lat, span, cpu = 120*time.Millisecond, 5*time.Second, 1200*time.Millisecond
		}
		return phaseFigures{scenario: sc, binder: b, bound: slices.Repeat([]time.Duration{lat}, 10), calls: []time.Duration{lat},
			span: span, cpu: map[string]time.Duration{compGardenerAPIServer: cpu}}
	}
	var rs []phaseFigures
	for _, sc := range loads {
		sc.shape = shape
		for _, b := range roundOrder {
			rs = append(rs, phase(sc, b))
		}
	}
	var got []string
	for _, g := range acceptanceGoals(rs) {
		got = append(got, fmt.Sprintf("%s: %s %t %.1f", loadKey(g.sc), g.what, g.atLeast, g.bound))
	}
	assert.Equal(t, []string{
		"20: CREATE→bound p50 false 1.5", "20: API-server CPU per placed Shoot false 1.3",
		"50: binds/s true 1.2", "50: API-server CPU per placed Shoot false 1.3",
		"burst: binds/s true 1.2", "burst: API-server CPU per placed Shoot false 1.3",
		"full20: CREATE→bound p50 false 0.1", "full20: API-server CPU per placed Shoot false 1.3",
		"full50: binds/s true 1.2", "full50: CREATE→bound p50 false 0.1", "full50: API-server CPU per placed Shoot false 1.3",
		"fullburst: binds/s true 1.2", "fullburst: API-server CPU per placed Shoot false 1.3",
	}, got)
	table := acceptanceTable(rs)
	for _, row := range []string{
		"| CREATE→bound p50 | limit, 1 user, 3 replicas | empty, 20/s for 2 s | 100 ms | 120 ms | 1.20 | ≤ 1.5 | met |",
		"| CREATE→bound p50 | limit, 1 user, 3 replicas | full, 20/s for 2 s | 100 ms | 120 ms | 1.20 | ≤ 0.1 | **not met** |",
		"| binds/s | limit, 1 user, 3 replicas | empty, burst of 60 | 1.0/s | 2.0/s | 2.00 | ≥ 1.2 | met |",
		"| API-server CPU per placed Shoot | limit, 1 user, 3 replicas | full, burst of 60 | 100.0 ms | 120.0 ms | 1.20 | ≤ 1.3 | met |",
	} {
		assert.Contains(t, table, row)
	}
	assert.Contains(t, shapesTable(rs), "| limit, 1 user, 3 replicas | empty, burst of 60 | 100 ms / 120 ms (**1.20×**) | 1.0 / 2.0 (**2.00×**) | 100.0 ms / 120.0 ms (**1.20×**) | 0.00 / 0.00 | 20 of 20 (100 %) |")
}

// TestBenchConfigAsShipped (no cluster): every change of the bench's
// configuration finds its piece in the suite's, and the result reads as
// deploy/manifests/config.yaml sets those fields.
func TestBenchConfigAsShipped(t *testing.T) {
	if !bindingMode() {
		t.Skipf("placement mode %q: the bench runs in mode binding only (TestBindSideBySide), and so does its configuration", placementMode)
	}
	suiteCfg, _, err := webhookConfig(ports{webhook: 9443, metrics: 8080, health: 8081}, "/certs", "/work")
	require.NoError(t, err)
	cfg := suiteCfg
	for _, c := range benchConfigChanges() {
		if c[1] == "" && !strings.Contains(cfg, c[0]) {
			continue // a size snippet the suite did not pick
		}
		require.Contains(t, cfg, c[0])
		cfg = strings.Replace(cfg, c[0], c[1], 1)
	}
	got, err := config.Parse([]byte(cfg))
	require.NoError(t, err)
	shipped, err := os.ReadFile("../deploy/manifests/config.yaml")
	require.NoError(t, err)
	want, err := config.Parse(shipped)
	require.NoError(t, err)
	assert.Equal(t, want.ReservationTTL.Duration, got.ReservationTTL.Duration, "reservationTTL")
	assert.Equal(t, want.PendingShoots.BackoffBase.Duration, got.PendingShoots.BackoffBase.Duration, "pendingShoots.backoffBase")
	assert.Equal(t, want.PendingShoots.Workers, got.PendingShoots.Workers, "pendingShoots.workers")
	assert.Equal(t, want.Placement.Mode, got.Placement.Mode, "placement.mode")
	assert.Equal(t, want.Capacity.Coordination, got.Capacity.Coordination, "capacity.coordination")
	assert.False(t, got.Autoscaler.Enabled || got.SeedDrain.Enabled || got.Audit.Enabled, "autoscaler, seedDrain, audit")
	assert.Empty(t, got.ResourceSize.Limits, "resourceSize.limits")
}
