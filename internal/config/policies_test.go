package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPoliciesParse(t *testing.T) {
	c, err := Parse([]byte(header + `
policies:
  softLimitPercent: 80
  keptSeats: {percent: 10}
  pools:
  - name: acme
    mode: Required
    projects: [acme]
    seedSelector: {matchLabels: {pool: acme}}
  - name: prod
    mode: Preferred
    projectSelector: {matchExpressions: [{key: tier, operator: In, values: [prod]}]}
    seedSelector: {matchLabels: {tier: prod}}
`))
	require.NoError(t, err)
	assert.Equal(t, &Policies{
		SoftLimitPercent: 80,
		KeptSeats:        KeptSeats{Percent: 10},
		Pools: []Pool{
			{Name: "acme", Mode: PoolRequired, Projects: []string{"acme"}, SeedSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"pool": "acme"}}},
			{Name: "prod", Mode: PoolPreferred,
				ProjectSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"prod"}}}},
				SeedSelector:    &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "prod"}}},
		},
	}, c.Policies)
	d := Default()
	assert.Nil(t, d.Policies, "no policies by default: every decision is Gardener's")
}

func TestPoliciesRules(t *testing.T) {
	pool := func(fields string) string { return "policies: {pools: [{" + fields + "}]}" }
	sel := "seedSelector: {matchLabels: {k: v}}"
	for _, tc := range []struct{ name, yaml, want string }{
		{"empty block", "policies: {}", ""},
		{"soft limit 100", "policies: {softLimitPercent: 100}", ""},
		{"soft limit negative", "policies: {softLimitPercent: -1}", "policies.softLimitPercent: -1 is out of range (want 0 for none, or 1 to 100)"},
		{"soft limit over 100", "policies: {softLimitPercent: 101}", "policies.softLimitPercent: 101 is out of range"},
		{"kept seats", "policies: {keptSeats: {seats: 3}}", ""},
		{"kept seats negative", "policies: {keptSeats: {seats: -3}}", "policies.keptSeats.seats: -3 must not be negative"},
		{"kept percent over 100", "policies: {keptSeats: {percent: 150}}", "policies.keptSeats.percent: 150 is out of range (want 0 to 100)"},
		{"kept both", "policies: {keptSeats: {seats: 1, percent: 5}}", "policies.keptSeats: seats 1 and percent 5 both set (want one of them)"},
		{"pool ok", pool("name: a, mode: Required, projects: [p], " + sel), ""},
		{"pool bad name", pool("name: A_b, mode: Required, projects: [p], " + sel), `policies.pools[0].name: invalid value "A_b"`},
		{"pool duplicate", "policies: {pools: [{name: a, mode: Required, projects: [p], " + sel + "}, {name: a, mode: Preferred, projects: [p], " + sel + "}]}",
			`policies.pools[1].name: duplicate pool "a" (already policies.pools[0])`},
		{"pool bad mode", pool("name: a, mode: required, projects: [p], " + sel), `policies.pools[0].mode: unsupported value "required" (want Required or Preferred)`},
		{"pool no projects", pool("name: a, mode: Required, " + sel), "policies.pools[0]: names no project (set projects, projectSelector or both)"},
		{"pool bad project name", pool("name: a, mode: Required, projects: [Not/Valid], " + sel), `policies.pools[0].projects[0]: invalid project name "Not/Valid"`},
		{"pool no seed selector", pool("name: a, mode: Required, projects: [p]"), "policies.pools[0].seedSelector: missing (want matchLabels or matchExpressions)"},
		{"pool empty seed selector", pool("name: a, mode: Required, projects: [p], seedSelector: {}"), "policies.pools[0].seedSelector: empty selector matches everything"},
		{"pool bad selector", pool("name: a, mode: Required, projectSelector: {matchExpressions: [{key: k, operator: Bogus}]}, " + sel), "policies.pools[0].projectSelector: invalid selector"},
		{"unknown field", "policies: {softLimit: 5}", "policies.softLimit: unknown field"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse([]byte(header + tc.yaml + "\n"))
			if tc.want == "" {
				require.NoError(t, err)
				assert.NotNil(t, c.Policies)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestTooManyPools(t *testing.T) {
	c := Default()
	c.Policies = &Policies{}
	for i := range MaxPools + 1 {
		c.Policies.Pools = append(c.Policies.Pools, Pool{Name: "p" + string(rune('a'+i%26)) + string(rune('a'+i/26)), Mode: PoolRequired, Projects: []string{"x"},
			SeedSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"k": "v"}}})
	}
	assert.ErrorContains(t, c.Validate(), "policies.pools: 65 pools, more than 64")
}
