package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/config"
	"github.com/seedwarden/seedwarden/internal/handlers"
	"github.com/seedwarden/seedwarden/internal/metrics"
	"github.com/seedwarden/seedwarden/internal/pending"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// TestConfigChecks has one row per rule that configChecks add to config's
// validation: the YAML after the header, and the problem expected (empty
// means valid).
func TestConfigChecks(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"count uncountable", `resourceSize: {counts: [{apiGroups: [core.gardener.cloud], apiVersions: ["*"], resources: [seeds, shoots, "*"], count: 1}]}`,
			`resourceSize.counts[0].resources: cannot count "shoots", "*" (countable: cloudprofiles, projects, seeds of core.gardener.cloud)`},
		{"resourceAdmission uncountable", `resourceAdmission: {limits: [{apiGroups: [core.gardener.cloud], apiVersions: ["*"], resources: [shoots], count: 1}]}`,
			`resourceAdmission.limits[0].resources: cannot count "shoots"`},
		{"kubeconfigSecret.allowedFields ok", "kubeconfigSecret: {allowedFields: [client-certificate, client-key, as, as-groups, auth-provider, exec, token]}", ""},
		{"kubeconfigSecret.allowedFields empty", "kubeconfigSecret: {allowedFields: []}", ""},
		{"kubeconfigSecret.allowedFields unknown", "kubeconfigSecret: {allowedFields: [exec, tokenfile]}",
			`kubeconfigSecret.allowedFields: unknown kubeconfig field(s) "tokenfile" (want any of client-certificate, client-key, tokenFile,`},
		{"resourceAdmission size only is not counted", `resourceAdmission: {limits: [{apiGroups: ["*"], apiVersions: ["*"], resources: [shoots], size: 1Ki}]}`, ""},
		{"count ok", `resourceSize: {counts: [{apiGroups: [core.gardener.cloud], apiVersions: ["*"], resources: [seeds, cloudprofiles], count: 0}]}`, ""},
		{"headroom shoot ok", `headroom: {profiles: [{name: a, shoot: {apiVersion: core.gardener.cloud/v1beta1, kind: Shoot, metadata: {name: t, namespace: garden-dev}, spec: {region: eu-west-1}}}]}`, ""},
		{"headroom shoot is a Seed", `headroom: {profiles: [{name: a, shoot: {apiVersion: core.gardener.cloud/v1beta1, kind: Seed, metadata: {name: s}}}]}`,
			`headroom.profiles[0].shoot: want a core.gardener.cloud/v1beta1 Shoot, found Seed "s"`},
		{"headroom shoot without kind", `headroom: {profiles: [{name: a, shoot: {metadata: {name: t}}}]}`, "headroom.profiles[0].shoot: "},
		{"headroom shoot of another kind", `headroom: {profiles: [{name: a, shoot: {apiVersion: v1, kind: Pod, metadata: {name: p}}}]}`,
			"headroom.profiles[0].shoot: want exactly one core.gardener.cloud/v1beta1 Shoot, found 0 supported objects"},
		{"headroom shoot bad field", `headroom: {profiles: [{name: a, shoot: {apiVersion: v1, kind: Pod}}, {name: b, shoot: {apiVersion: core.gardener.cloud/v1beta1, kind: Shoot, metadata: {name: t}, spec: {region: [1]}}}]}`,
			"headroom.profiles[1].shoot: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := config.Parse([]byte(configHeader+tc.yaml+"\n"), configChecks...)
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// loadConfig reports the checks' problems with config's own, all at once.
func TestLoadConfigRunsChecks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(path, []byte(configHeader+"strategy: Nearest\nkubeconfigSecret: {allowedFields: [tokenfile]}\n"), 0o600))
	_, err := loadConfig(path)
	var cfgErr *config.Error
	require.ErrorAs(t, err, &cfgErr)
	require.Len(t, cfgErr.Problems, 2, "%v", cfgErr.Problems)
	assert.Equal(t, `strategy: unsupported value "Nearest" (want SameRegion or MinimalDistance)`, cfgErr.Problems[0])
	assert.Contains(t, cfgErr.Problems[1], `kubeconfigSecret.allowedFields: unknown kubeconfig field(s) "tokenfile"`)
}

// Every value config accepts is one the package it is converted for
// accepts: the conversions rely on the same spelling.
func TestOptionsAcceptConfigValues(t *testing.T) {
	for _, s := range []string{config.StrategySameRegion, config.StrategyMinimalDistance} {
		for _, n := range []string{config.NetworkOverlapDisjoint, config.NetworkOverlapAllowIPv4} {
			cfg := config.Default()
			cfg.Strategy, cfg.NetworkOverlap = s, n
			require.NoError(t, cfg.Validate())
			assert.NoError(t, placementOptions(cfg).Validate(), "%s, %s", s, n)
		}
	}
	cfg := config.Default()
	cfg.Strategy = "Nearest"
	assert.Error(t, placementOptions(cfg).Validate(), "the check can fail")

	for _, m := range []string{config.BindThroughSubresource, config.BindThroughUpdate} {
		cfg := config.Default()
		cfg.PendingShoots.BindMode = m
		require.NoError(t, cfg.Validate())
		assert.NoError(t, pendingConfig(cfg).Validate(), m)
	}
	assert.Equal(t, pending.BindThroughUpdate, pending.Mode(config.BindThroughUpdate))
	assert.Equal(t, pending.BindThroughSubresource, pending.Mode(config.BindThroughSubresource))

	// The resource-size validator takes operationMode as it is written.
	assert.Equal(t, handlers.OperationModeBlock, config.OperationModeBlock)
	assert.Equal(t, handlers.OperationModeLog, config.OperationModeLog)
	// The guards take enforcement as it is written.
	assert.Equal(t, handlers.EnforceDeny, config.EnforcementDeny)
	assert.Equal(t, handlers.EnforceWarn, config.EnforcementWarn)
	assert.Equal(t, handlers.EnforceDryRun, config.EnforcementDryRun)

}

func TestOptionsFromConfig(t *testing.T) {
	cfg, err := config.Parse([]byte(configHeader+`
strategy: MinimalDistance
networkOverlap: AllowIPv4
schedulerName: my-scheduler
pendingShoots: {bindMode: update, backoffBase: 500ms, backoffMax: 1m, workers: 2}
reservations: {maxPerNamespace: 7, maxPerUser: 3, maxTotal: 70}
`), configChecks...)
	require.NoError(t, err)
	assert.Equal(t, placement.Options{Strategy: placement.MinimalDistance, NetworkMode: placement.AllowIPv4}, placementOptions(cfg))
	assert.Equal(t, cache.Limits{PerNamespace: 7, PerUser: 3, Total: 70}, reservationLimits(cfg))
	assert.Equal(t, pending.Config{
		Mode: pending.BindThroughUpdate, SchedulerName: "my-scheduler",
		BackoffBase: 500 * time.Millisecond, BackoffMax: time.Minute, ConflictBackoffMax: 5 * time.Second, Workers: 2,
	}, pendingConfig(cfg))

	def := config.Default()
	assert.Equal(t, placement.Options{Strategy: placement.SameRegion, NetworkMode: placement.Disjoint}, placementOptions(def))
	// A Store built without options (tests, benchmarks) behaves as a
	// default installation: cache spells the configuration's defaults.
	assert.Equal(t, cache.Limits{}.WithDefaults(), reservationLimits(def))
	assert.Equal(t, cache.DefaultGardenNamespace, def.GardenNamespace)
	assert.Equal(t, cache.DefaultReservationTTL, def.ReservationTTL.Duration)
	assert.Equal(t, cache.DefaultConfirmWindow, def.Reservations.ConfirmWindow.Duration)
}

// The Store serve builds applies the configured limits and counts what they
// refuse in the Prometheus registry.
func TestNewStoreLimits(t *testing.T) {
	cfg, err := config.Parse([]byte(configHeader+"reservations: {maxPerNamespace: 2, maxPerUser: 1, maxTotal: 5}\n"), configChecks...)
	require.NoError(t, err)
	reg := prometheus.NewPedanticRegistry()
	store := newStore(cfg, metrics.New(reg))
	store.Apply(&api.Seed{ObjectMeta: metav1.ObjectMeta{Name: "s"}})
	claim := func(key, namespace, user string) cache.Claim {
		return cache.Claim{Key: key, Namespace: namespace, Name: key, User: user}
	}
	require.NoError(t, store.Reserve("s", claim("k1", "garden-dev", "alice")))
	var limit *cache.LimitError
	require.ErrorAs(t, store.Reserve("s", claim("k2", "garden-dev", "alice")), &limit)
	assert.Equal(t, metrics.RefusedReasonUser, limit.Reason)
	require.NoError(t, store.Reserve("s", claim("k3", "garden-dev", "bob")))
	require.ErrorAs(t, store.Reserve("s", claim("k4", "garden-dev", "carol")), &limit)
	assert.Equal(t, metrics.RefusedReasonNamespace, limit.Reason)
	require.NoError(t, store.Reserve("s", claim("k5", "garden-prod", "carol")))
	n, err := testutil.GatherAndCount(reg, metrics.ReservationsRefusedName)
	require.NoError(t, err)
	assert.Equal(t, 2, n, "one series per reason")

	quiet := newStore(cfg, nil) // as simulate builds it
	quiet.Apply(&api.Seed{ObjectMeta: metav1.ObjectMeta{Name: "s"}})
	require.NoError(t, quiet.Reserve("s", claim("k1", "garden-dev", "")))
	require.NoError(t, quiet.Reserve("s", claim("k2", "garden-dev", "")), "without a user: the namespace's limit only")
	assert.Error(t, quiet.Reserve("s", claim("k3", "garden-dev", "")))
}

// The policies block converts into placement's policies as written, pool
// for pool; the modes are placement's values; no block is no policies.
func TestPlacementPoliciesConvert(t *testing.T) {
	assert.Equal(t, placement.PoolRequired, placement.PoolMode(config.PoolRequired))
	assert.Equal(t, placement.PoolPreferred, placement.PoolMode(config.PoolPreferred))
	assert.Equal(t, placement.MaxPools, config.MaxPools)
	assert.Nil(t, placementOptions(config.Default()).Policies)

	cfg := config.Default()
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"pool": "acme"}}
	cfg.Policies = &config.Policies{SoftLimitPercent: 80, KeptSeats: config.KeptSeats{Seats: 4},
		Pools: []config.Pool{{Name: "acme", Mode: config.PoolRequired, Projects: []string{"acme"}, SeedSelector: sel}}}
	require.NoError(t, cfg.Validate())
	p := placementOptions(cfg).Policies
	require.NoError(t, p.Validate())
	assert.Equal(t, 80, p.SoftLimitPercent)
	assert.Equal(t, int64(4), p.KeptSeats)
	require.Len(t, p.Pools, 1)
	assert.Equal(t, "acme", p.Pools[0].Name)
	assert.Equal(t, "pool=acme", p.Pools[0].SeedSelector.String())
	assert.Empty(t, checkPolicies(cfg))

	// What config cannot see but placement refuses fails every decision
	// rather than drop the pool, and start-up says so.
	cfg.Policies.Pools[0].Mode = "Sometimes"
	assert.ErrorContains(t, placementOptions(cfg).Validate(), `policies: policies.pools[0]: pool "acme": mode: unsupported value "Sometimes"`)
	assert.Equal(t, []string{`policies: policies.pools[0]: pool "acme": mode: unsupported value "Sometimes" (want Required or Preferred)`}, checkPolicies(cfg))
}
