package config

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSeedLabelName(t *testing.T) {
	for key, want := range map[string]string{
		"environment": "label_environment",
		"seedmanagement.gardener.cloud/managed-seed-set": "label_seedmanagement_gardener_cloud_managed_seed_set",
		"Tier_2":  "label_Tier_2",
		"zone ä!": "label_zone___",
	} {
		assert.Equal(t, want, SeedLabelName(key), key)
	}
}

func TestSeedLabelsRules(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"two keys", `metrics: {seedLabels: ["seedmanagement.gardener.cloud/managed-seed-set", environment]}`, ""},
		{"empty key", `metrics: {seedLabels: [environment, ""]}`, "metrics.seedLabels[1]: empty (want a Seed label key such as environment)"},
		{"blank key", `metrics: {seedLabels: [" "]}`, "metrics.seedLabels[0]: empty"},
		{"duplicate", `metrics: {seedLabels: [env, env]}`, `metrics.seedLabels[1]: "env" is exported as label_env like metrics.seedLabels[0] "env"`},
		{"duplicate after sanitising", `metrics: {seedLabels: [a.b, a/b]}`, `metrics.seedLabels[1]: "a/b" is exported as label_a_b like metrics.seedLabels[0] "a.b"`},
		{"not a list", `metrics: {seedLabels: environment}`, "metrics.seedLabels: cannot use string here (want a list)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse([]byte(header + tc.yaml + "\n"))
			if tc.want == "" {
				require.NoError(t, err)
				assert.Equal(t, []string{"label_seedmanagement_gardener_cloud_managed_seed_set", "label_environment"}, c.SeedLabelNames())
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

const shootYAML = `{apiVersion: core.gardener.cloud/v1beta1, kind: Shoot, metadata: {name: t, namespace: garden-dev}}`

func TestHeadroomDefaults(t *testing.T) {
	c, err := Parse([]byte(header + "headroom: {profiles: [{name: small, shoot: " + shootYAML + "}]}\n"))
	require.NoError(t, err)
	require.NotNil(t, c.Headroom)
	assert.Equal(t, DefaultHeadroomInterval, c.Headroom.Interval.Duration)
	require.Len(t, c.Headroom.Profiles, 1)
	p := c.Headroom.Profiles[0]
	assert.Equal(t, DefaultHeadroomLimit, p.Limit)
	assert.Nil(t, p.AlertBelow)
	assert.JSONEq(t, `{"apiVersion":"core.gardener.cloud/v1beta1","kind":"Shoot","metadata":{"name":"t","namespace":"garden-dev"}}`, string(p.Shoot))
	assert.Nil(t, Default().Headroom, "no headroom unless configured")
}

func TestHeadroomRules(t *testing.T) {
	profile := func(fields string) string {
		return "headroom: {profiles: [{" + fields + "}]}"
	}
	for _, tc := range []struct{ name, yaml, want string }{
		{"ok", "headroom: {interval: 5s, profiles: [{name: aws-small, limit: 50, alertBelow: 10, shoot: " + shootYAML + "}]}", ""},
		{"alertBelow 0", profile("name: a, alertBelow: 0, shoot: " + shootYAML), ""},
		{"alertBelow at limit", profile("name: a, limit: 5, alertBelow: 5, shoot: " + shootYAML), ""},
		{"interval too short", "headroom: {interval: 500ms, profiles: [{name: a, shoot: " + shootYAML + "}]}", "headroom.interval: 500ms is shorter than the minimum 1s"},
		{"interval too long", "headroom: {interval: 48h, profiles: [{name: a, shoot: " + shootYAML + "}]}", "headroom.interval: 48h0m0s is longer than the maximum 24h0m0s"},
		{"interval garbage", "headroom: {interval: often, profiles: [{name: a, shoot: " + shootYAML + "}]}", `headroom.interval: invalid value "often"`},
		{"no profiles", "headroom: {}", "headroom.profiles: empty (name at least one profile, or leave headroom out)"},
		{"empty name", profile("shoot: " + shootYAML), `headroom.profiles[0].name: invalid value ""`},
		{"name not a DNS label", profile("name: AWS_small, shoot: " + shootYAML), `headroom.profiles[0].name: invalid value "AWS_small"`},
		{"duplicate name", "headroom: {profiles: [{name: a, shoot: " + shootYAML + "}, {name: a, shoot: " + shootYAML + "}]}",
			`headroom.profiles[1].name: duplicate profile "a" (already headroom.profiles[0])`},
		{"negative limit", profile("name: a, limit: -1, shoot: " + shootYAML), "headroom.profiles[0].limit: -1 out of range 1-1000000"},
		{"huge limit", profile("name: a, limit: 2000000, shoot: " + shootYAML), "headroom.profiles[0].limit: 2000000 out of range 1-1000000"},
		{"negative alertBelow", profile("name: a, alertBelow: -1, shoot: " + shootYAML), "headroom.profiles[0].alertBelow: -1 out of range 0-1000 (the profile's limit)"},
		{"alertBelow above limit", profile("name: a, limit: 5, alertBelow: 6, shoot: " + shootYAML), "headroom.profiles[0].alertBelow: 6 out of range 0-5"},
		{"no shoot", profile("name: a"), "headroom.profiles[0].shoot: missing (want an inline core.gardener.cloud/v1beta1 Shoot manifest)"},
		{"null shoot", profile("name: a, shoot: null"), "headroom.profiles[0].shoot: missing"},
		{"unknown field", profile("name: a, shot: {}, shoot: " + shootYAML), "headroom.profiles[0].shot: unknown field"},
		{"limit not a number", profile("name: a, limit: many, shoot: " + shootYAML), "headroom.profiles.limit: cannot use string here (want an integer)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse([]byte(header + tc.yaml + "\n"))
			if tc.want == "" {
				require.NoError(t, err)
				assert.NotNil(t, c.Headroom)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestHeadroomIntervalMinimumIsOneSecond(t *testing.T) {
	c, err := Parse([]byte(header + "headroom: {interval: 1s, profiles: [{name: a, shoot: " + shootYAML + "}]}\n"))
	require.NoError(t, err)
	assert.Equal(t, time.Second, c.Headroom.Interval.Duration)
}
