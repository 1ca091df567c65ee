package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The worked example of docs/policies.md (examples/policies-landscape.yaml
// with examples/config-policies.yaml).
var policiesExample = []string{"--config", "../../examples/config-policies.yaml", "--landscape", "../../examples/policies-landscape.yaml"}

// simulate explains each policy's effect: the seeds the Required pool
// removed and those each preference set aside, in text and in JSON; on the
// same landscape without the configuration only the avoided seed (an
// annotation acts by itself) is set aside.
func TestSimulateExplainsPolicies(t *testing.T) {
	for _, tc := range []struct {
		name, shoot, seed, policies string
		args                        []string
	}{
		{"webshop", "../../examples/shoot.yaml", "eu-b", "seeds of Required pools [\"payments\"] withheld; avoided set aside 1; kept seats set aside 2", policiesExample},
		{"storefront", "../../examples/shoot-ha.yaml", "eu-c", "seeds of Required pools [\"payments\"] withheld; avoided set aside 1; past soft limit set aside 1", policiesExample},
		// Without the configuration only the annotations act: eu-retiring
		// is avoided, and Gardener's least-used rule takes eu-pay (1 Shoot),
		// no pool keeping it.
		{"webshop", "../../examples/shoot.yaml", "eu-pay", "avoided set aside 1", policiesExample[2:]},
	} {
		t.Run(strings.Join(tc.args, " ")+" "+tc.shoot, func(t *testing.T) {
			args := append(append([]string{"simulate"}, tc.args...), "--shoot", tc.shoot)
			code, out, errOut := runCmd(t, args...)
			require.Equal(t, exitOK, code, errOut)
			var r result
			require.NoError(t, json.Unmarshal([]byte(out), &r), out)
			assert.Equal(t, tc.seed, r.Seed)
			assert.Equal(t, tc.policies, r.Policies)

			code, out, errOut = runCmd(t, append([]string{"simulate", "-o", "text"}, args[1:]...)...)
			require.Equal(t, exitOK, code, errOut)
			assert.True(t, strings.HasPrefix(out, tc.name+": seed "+tc.seed+"\n  policies: "+tc.policies+"\n"), out)
		})
	}
	// No policy acted: no line, no field.
	code, out, errOut := runCmd(t, "simulate", "--landscape", "../../examples/landscape.yaml", "--shoot", "../../examples/shoot.yaml")
	require.Equal(t, exitOK, code, errOut)
	assert.NotContains(t, out, "policies")
}

// plan --add-shoots places as the policies say and reports both limits:
// two webshops fill eu-b (its own soft limit is its allocatable), the third
// takes a kept seat of eu-c, which ranks above eu-a (past its soft limit
// and into its kept seats) and the avoided eu-retiring; each seed's soft
// limit is beside its allocatable.
func TestPlanHonoursPolicies(t *testing.T) {
	args := append(append([]string{"plan"}, policiesExample...), "--add-shoots", "3", "--like", "../../examples/shoot.yaml")
	code, out, errOut := runCmd(t, append(args, "-o", "json")...)
	require.Equal(t, exitOK, code, errOut)
	var r struct {
		Seeds []struct {
			Name        string `json:"name"`
			Allocatable *int64 `json:"allocatable"`
			SoftLimit   *int64 `json:"softLimit"`
		} `json:"seeds"`
		Placed []struct {
			Shoot, To string
		} `json:"placed"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &r), out)
	var to []string
	for _, p := range r.Placed {
		to = append(to, p.To)
	}
	assert.Equal(t, []string{"eu-b", "eu-b", "eu-c"}, to)
	soft := map[string]int64{}
	for _, s := range r.Seeds {
		require.NotNil(t, s.SoftLimit, s.Name)
		soft[s.Name] = *s.SoftLimit
	}
	assert.Equal(t, map[string]int64{"eu-a": 4, "eu-b": 4, "eu-c": 3, "eu-pay": 8, "eu-retiring": 16}, soft)

	code, out, errOut = runCmd(t, args...)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "SEED         PROVIDER  REGION        SHOOTS  ALLOCATABLE  SOFT LIMIT  UTILIZATION  STATE\neu-a         aws       eu-central-1  4 -> 4  5            4           80%")

	// Without soft limits the table is as it always was.
	code, out, errOut = runCmd(t, "plan", "--landscape", "../../examples/landscape.yaml")
	require.Equal(t, exitOK, code, errOut)
	assert.NotContains(t, out, "SOFT LIMIT")
	assert.NotContains(t, out, "softLimit")
}
