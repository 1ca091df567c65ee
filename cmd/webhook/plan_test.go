package main

import (
	"encoding/json"
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
		{"N is 0", []string{"--add-shoots", "0", "--like", planShoot}, `invalid argument "0" for "--add-shoots" flag: must be a whole number of at least 1`},
		{"N is negative", []string{"--add-shoots", "-3", "--like", planShoot}, `invalid argument "-3" for "--add-shoots" flag: must be a whole number of at least 1`},
		{"N is not a number", []string{"--add-shoots", "many", "--like", planShoot}, `invalid argument "many" for "--add-shoots" flag`},
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

// The documented drain of the example landscape moves every Shoot of
// aws-eu1 to aws-eu2, the only other seed in the region with backup and the
// same internal domain; the Shoot migrating away from aws-eu1 stays charged
// to it, and the table says so.
func TestPlanDrainExampleMovesShoots(t *testing.T) {
	args := []string{"plan", "--landscape", "../../examples/landscape.yaml", "--drain", "aws-eu1"}
	code, out, errOut := runCmd(t, append(args, "-o", "json")...)
	require.Equal(t, exitOK, code, errOut)
	var r plan.Report
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	assert.Empty(t, r.Unplaced)
	moved := map[string]string{}
	for _, p := range r.Placed {
		assert.Equal(t, "aws-eu1", p.From, p.Shoot)
		moved[p.Shoot] = p.To
	}
	assert.Equal(t, map[string]string{
		"garden-dev/billing": "aws-eu2", "garden-dev/checkout": "aws-eu2", "garden-dev/search": "aws-eu2",
	}, moved)
	rows := map[string]plan.SeedRow{}
	for _, row := range r.Seeds {
		rows[row.Name] = row
	}
	drained := rows["aws-eu1"]
	assert.Equal(t, [3]int64{4, 1, 1}, [3]int64{drained.Before, drained.After, drained.MigratingAway}, "before, after, migrating away")
	assert.Equal(t, plan.StateDrained, drained.State)
	assert.Equal(t, int64(5), rows["aws-eu2"].After)

	_, text, _ := runCmd(t, args...)
	assert.Contains(t, text, "4 -> 1 (1 migrating away)")
	assert.Contains(t, text, "garden-dev/billing   aws-eu1 -> aws-eu2")
}

// Removing the drained aws-eu1 of the example landscape strands inventory,
// whose control plane is still migrating away from it to aws-eu2: the seed
// cannot go before that migration completes, and the plan says so (exit 3).
func TestPlanRemoveSeedUnderMigrationIsStranded(t *testing.T) {
	args := []string{"plan", "--landscape", "../../examples/landscape.yaml", "--drain", "aws-eu1", "--remove-seed", "aws-eu1"}
	code, out, errOut := runCmd(t, append(args, "-o", "json")...)
	require.Equal(t, exitIncomplete, code, errOut)
	var r plan.Report
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	assert.Empty(t, r.Unplaced)
	assert.Len(t, r.Placed, 3)
	assert.Equal(t, []plan.Stranded{{Shoot: "garden-dev/inventory", Seed: "aws-eu1", MigratingTo: "aws-eu2"}}, r.Stranded)
	for _, row := range r.Seeds {
		if row.Name == "aws-eu1" {
			assert.Equal(t, plan.StateRemoved, row.State)
			assert.Equal(t, int64(1), row.Stranded)
		}
	}

	code, text, _ := runCmd(t, args...)
	assert.Equal(t, exitIncomplete, code)
	assert.Contains(t, text, "4 -> gone (1 stranded)")
	assert.Contains(t, text, "STRANDED ON A REMOVED SEED (1)\n  garden-dev/inventory on aws-eu1 (control plane still migrating to aws-eu2: the seed can go once that completes)\n")
}

// A Shoot the placement rules would move, but only to a seed Gardener
// refuses as a migration target, is reported with step Migration, the seed
// it would otherwise go to, and that seed's reason; it stays on the seed.
func TestPlanDrainNamesMigrationVeto(t *testing.T) {
	args := []string{"plan", "--landscape", "testdata/plan/no-backup.yaml", "--drain", "old"}
	code, out, errOut := runCmd(t, append(args, "-o", "json")...)
	require.Equal(t, exitIncomplete, code, errOut)
	var r plan.Report
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	require.Len(t, r.Unplaced, 1)
	u := r.Unplaced[0]
	assert.Equal(t, plan.StepMigration, u.Step)
	assert.Equal(t, `no seed it could go to accepts a control plane migration from "old" (without the migration rules it would go to "new")`, u.Message)
	assert.Equal(t, `cannot change seed name because backup is not configured for seed "new"`, u.Reasons["new"])
	assert.Equal(t, "seed is being drained by the plan", u.Reasons["old"])

	_, text, _ := runCmd(t, args...)
	assert.Contains(t, text, "1 -> 1")
	assert.Contains(t, text, `garden-dev/app (from old): step Migration: `)
}
