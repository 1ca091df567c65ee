package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seedwarden/seedwarden/internal/plan"
)

const (
	planLandscape = "testdata/plan/landscape.yaml"
	planShoot     = "testdata/plan/shoot.yaml"
	planNewSeed   = "testdata/plan/new-seed.yaml"
)

func TestPlanJSON(t *testing.T) {
	code, out, errOut := runCmd(t, "plan", "--landscape", planLandscape, "-o", "json",
		"--drain", "a", "--add-seed", planNewSeed, "--add-shoots", "5", "--like", planShoot)
	require.Equal(t, exitOK, code, errOut)
	var r plan.Report
	require.NoError(t, json.Unmarshal([]byte(out), &r))

	var placed []string
	for _, p := range r.Placed {
		placed = append(placed, p.Shoot+" "+p.From+"->"+p.To)
	}
	// The drain goes first (least used, name order on ties), then the new
	// seed d joins and the new Shoots go to the least used of b, c and d.
	assert.Equal(t, []string{
		"garden-dev/a0 a->c", "garden-dev/a1 a->b", "garden-dev/a2 a->c", "garden-dev/a3 a->b",
		"garden-dev/small-1 ->d", "garden-dev/small-2 ->d", "garden-dev/small-3 ->c", "garden-dev/small-4 ->d", "garden-dev/small-5 ->b",
	}, placed)
	assert.Empty(t, r.Unplaced)
	assert.Equal(t, []plan.GroupRow{
		{Provider: "aws", Region: "eu-west-1", Seeds: 4, FreeBefore: 13, FreeAfter: 2},
		{Provider: "aws", Region: "us-east-1", Seeds: 1, FreeBefore: 100, FreeAfter: 100},
	}, r.Groups)
}

func TestPlanText(t *testing.T) {
	code, out, errOut := runCmd(t, "plan", "--landscape", planLandscape, "--add-shoots", "15", "--like", planShoot)
	require.Equal(t, exitIncomplete, code, "13 free slots in eu-west-1 for 15 Shoots: %s", errOut)
	for _, want := range []string{
		"SEED  PROVIDER  REGION     SHOOTS   ALLOCATABLE  UTILIZATION  STATE\n",
		"a     aws       eu-west-1  4 -> 10  10           100%         \n",
		"aws       eu-west-1  3      13 -> 0     0\n",
		"PLACED (13)\n",
		"NO SEED (2)\n",
		"  garden-dev/small-14: step Strategy: no matching seed candidate found",
		"    a: seed does not have available capacity for shoots (usage 10, allocatable 10)\n",
	} {
		assert.Contains(t, out, want)
	}
}

func TestPlanStrandedShootsFailThePlan(t *testing.T) {
	code, out, _ := runCmd(t, "plan", "--landscape", planLandscape, "--remove-seed", "b")
	assert.Equal(t, exitIncomplete, code)
	assert.Contains(t, out, "STRANDED ON A REMOVED SEED (1)\n  garden-dev/b0 on b\n")
	assert.Contains(t, out, "b     aws       eu-west-1  1 -> gone")

	code, _, _ = runCmd(t, "plan", "--landscape", planLandscape, "--drain", "b", "--remove-seed", "b")
	assert.Equal(t, exitOK, code, "drained first, nothing is stranded")
}

func TestPlanBadInput(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown seed to drain", []string{"--drain", "nope"}, `webhook plan: --drain "nope": no seed "nope"`},
		{"unknown seed to remove", []string{"--remove-seed", "nope"}, `webhook plan: --remove-seed "nope": no seed "nope"`},
		{"seed added twice", []string{"--add-seed", planNewSeed, "--add-seed", planNewSeed}, `webhook plan: --add-seed "testdata/plan/new-seed.yaml": seed "d" exists already`},
		{"template not a Shoot", []string{"--add-shoots", "1", "--like", planNewSeed}, `webhook plan: --like "testdata/plan/new-seed.yaml": want a core.gardener.cloud/v1beta1 Shoot, found Seed "d"`},
		{"seeds file with a Shoot", []string{"--add-seed", planShoot}, `webhook plan: --add-seed "testdata/plan/shoot.yaml": item 0: want a core.gardener.cloud/v1beta1 Seed, found Shoot "small"`},
		{"N is 0", []string{"--add-shoots", "0", "--like", planShoot}, `invalid value "0" for flag -add-shoots: must be a whole number of at least 1`},
		{"N is negative", []string{"--add-shoots", "-3", "--like", planShoot}, `invalid value "-3" for flag -add-shoots: must be a whole number of at least 1`},
		{"N is not a number", []string{"--add-shoots", "many", "--like", planShoot}, `invalid value "many" for flag -add-shoots`},
		{"no --like", []string{"--add-shoots", "3"}, "webhook plan: --add-shoots 3: needs --like FILE right after it"},
		{"--like alone", []string{"--like", planShoot}, `webhook plan: --like "testdata/plan/shoot.yaml": no --add-shoots before it`},
		{"missing template", []string{"--add-shoots", "1", "--like", "testdata/plan/missing.yaml"}, `webhook plan: --like "testdata/plan/missing.yaml": open testdata/plan/missing.yaml: no such file or directory`},
		{"unknown output", []string{"-o", "yaml"}, `webhook plan: -o: unsupported value "yaml" (want text or json)`},
		{"stray argument", []string{"a"}, `webhook plan: unexpected argument "a"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCmd(t, append([]string{"plan", "--landscape", planLandscape}, tt.args...)...)
			assert.Equal(t, exitUsage, code)
			assert.Empty(t, out)
			assert.Contains(t, errOut, tt.want)
		})
	}

	code, _, errOut := runCmd(t, "plan", "--landscape", "testdata/plan/missing.yaml")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, `webhook plan: --landscape "testdata/plan/missing.yaml": `)
}

// The documented drain of the example landscape: a Shoot that only
// migration vetoes keep from a seed says so (step Migration), and the
// drained seed's count is what stays on it, with the Shoots migrating away
// named in the table.
func TestPlanDrainExampleReasonsAndCounts(t *testing.T) {
	args := []string{"plan", "--landscape", "../../examples/landscape.yaml", "--drain", "aws-eu1"}
	code, out, errOut := runCmd(t, append(args, "-o", "json")...)
	require.Contains(t, []int{exitOK, exitIncomplete}, code, errOut)
	var r plan.Report
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	for _, u := range r.Unplaced {
		vetoedOnly := len(u.Reasons) > 0
		for seed, why := range u.Reasons {
			vetoedOnly = vetoedOnly && (seed == "aws-eu1" || strings.HasPrefix(why, "cannot change seed name because"))
		}
		if vetoedOnly {
			assert.Equal(t, plan.StepMigration, u.Step, "%s: %s", u.Shoot, u.Message)
		}
	}
	var drained *plan.SeedRow
	for i := range r.Seeds {
		if r.Seeds[i].Name == "aws-eu1" {
			drained = &r.Seeds[i]
		}
	}
	require.NotNil(t, drained)
	assert.Equal(t, drained.After, drained.MigratingAway+int64(len(r.Unplaced)), "what stays on aws-eu1")

	_, text, _ := runCmd(t, args...)
	if drained.MigratingAway > 0 {
		assert.Contains(t, text, fmt.Sprintf("%d -> %d (%d migrating away)", drained.Before, drained.After, drained.MigratingAway))
	}
}
