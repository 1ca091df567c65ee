package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/utils/ptr"

	"github.com/seedwarden/seedwarden/internal/api"
)

func dns(internal string, defaults ...string) func(*api.Seed) {
	return func(s *api.Seed) {
		s.Spec.DNS.Internal = &api.SeedDNSProviderConfig{Domain: internal}
		for _, d := range defaults {
			s.Spec.DNS.Defaults = append(s.Spec.DNS.Defaults, api.SeedDNSProviderConfig{Domain: d})
		}
	}
}

// TestDrainKeepsGardenersMigrationRules: a Shoot moves only to a seed with
// backup and the same internal domain, and one under the old seed's
// default domain only to a seed serving it.
func TestDrainKeepsGardenersMigrationRules(t *testing.T) {
	seeds := []*api.Seed{
		seed("old", "eu-west-1", 10, dns("int.example.com", "dev.example.com")),
		seed("same", "eu-west-1", 10, dns("int.example.com", "dev.example.com")),
		seed("other-internal", "eu-west-1", 10, dns("int.other.com", "dev.example.com")),
		seed("no-backup", "eu-west-1", 10, dns("int.example.com", "dev.example.com"), noBackup),
		seed("no-default", "eu-west-1", 10, dns("int.example.com")),
	}
	tests := []struct {
		name      string
		domain    string   // under which the Shoot's own domain lies; "" for none
		wantSeeds []string // where the two Shoots go, in order
		vetoed    map[string]string
	}{
		{"no domain of its own", "", []string{"no-default", "same"}, nil},
		{"own domain outside the defaults", "example.org", []string{"no-default", "same"}, nil},
		{"under the old seed's default domain", "dev.example.com", []string{"same", "same"}, map[string]string{
			"other-internal": `cannot change seed name because internal domain would change from "int.example.com" to "int.other.com"`,
			"no-backup":      `cannot change seed name because backup is not configured for seed "no-backup"`,
			"no-default":     `the Shoot uses the default domain "dev.example.com" of seed "old", which seed "no-default" does not serve (it serves [])`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			shoots := shootsOn("s", "old", 2)
			for _, s := range shoots {
				if tt.domain != "" {
					// <shoot>.<project>.<domain>, as Gardener names it
					s.Spec.DNS = &api.DNS{Domain: ptr.To(s.Name + ".dev." + tt.domain)}
				}
			}
			snap := landscape(seeds, shoots)
			r, err := Run(snap, shoots, sameRegion, []Operation{Drain{Seed: "old"}})
			require.NoError(t, err)
			var got []string
			for _, p := range r.Placed {
				got = append(got, p.To)
			}
			assert.Equal(t, tt.wantSeeds, got)
			if tt.vetoed == nil {
				return
			}
			// Fill "same" and drain again: the reasons name every rule.
			full := append(shootsOn("full", "same", 10), shoots...)
			r, err = Run(landscape(seeds, full), full, sameRegion, []Operation{Drain{Seed: "old"}})
			require.NoError(t, err)
			require.Len(t, r.Unplaced, 2)
			for seed, why := range tt.vetoed {
				assert.Equal(t, why, r.Unplaced[0].Reasons[seed])
			}
		})
	}
	t.Run("from a seed without backup nothing moves", func(t *testing.T) {
		shoots := shootsOn("s", "nb", 1)
		r, err := Run(landscape([]*api.Seed{seed("nb", "eu-west-1", 10, noBackup), seed("b", "eu-west-1", 10)}, shoots), shoots, sameRegion, []Operation{Drain{Seed: "nb"}})
		require.NoError(t, err)
		require.Len(t, r.Unplaced, 1)
		assert.Equal(t, `cannot change seed name because backup is not configured for old seed "nb"`, r.Unplaced[0].Reasons["b"])
	})
}

// A drained Shoot that the placement rules would place, but only on seeds
// the migration rules refuse, is reported with step Migration and the seed
// it would otherwise go to; one that no seed fits either way keeps the
// placement step that ran out of seeds.
func TestDrainNamesMigrationVetoAsReason(t *testing.T) {
	tests := []struct {
		name     string
		seeds    []*api.Seed
		wantStep string
		wantMsg  string
	}{
		{"targets without backup", []*api.Seed{seed("old", "eu-west-1", 10), seed("b", "eu-west-1", 10, noBackup), seed("c", "eu-west-1", 10, noBackup)},
			"Migration", `no seed it could go to accepts a control plane migration from "old" (without the migration rules it would go to "b")`},
		{"old seed without backup", []*api.Seed{seed("old", "eu-west-1", 10, noBackup), seed("b", "eu-west-1", 10)},
			"Migration", `no seed it could go to accepts a control plane migration from "old" (without the migration rules it would go to "b")`},
		{"the one allowed seed is full", []*api.Seed{seed("old", "eu-west-1", 10), seed("full", "eu-west-1", 0), seed("b", "eu-west-1", 10, noBackup)},
			"Migration", `no seed it could go to accepts a control plane migration from "old" (without the migration rules it would go to "b")`},
		{"no veto, no room", []*api.Seed{seed("old", "eu-west-1", 10), seed("full", "eu-west-1", 0)},
			"Candidates", ""},
		{"vetoed, but no room either", []*api.Seed{seed("old", "eu-west-1", 10), seed("full", "eu-west-1", 0, noBackup)},
			"Candidates", ""},
		{"vetoed, but in another region", []*api.Seed{seed("old", "eu-west-1", 10), seed("us", "us-east-1", 10, noBackup)},
			"Strategy", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			shoots := shootsOn("s", "old", 1)
			r, err := Run(landscape(tt.seeds, shoots), shoots, sameRegion, []Operation{Drain{Seed: "old"}})
			require.NoError(t, err)
			require.Len(t, r.Unplaced, 1)
			u := r.Unplaced[0]
			assert.Equal(t, tt.wantStep, string(u.Step), u.Message)
			if tt.wantMsg != "" {
				assert.Equal(t, tt.wantMsg, u.Message)
			} else {
				assert.NotContains(t, u.Message, "migration")
			}
			for _, s := range tt.seeds {
				assert.Contains(t, u.Reasons, s.Name, "every seed has its reason")
				assert.NotEmpty(t, u.Codes[s.Name], "every seed has its code")
			}
			assert.Len(t, u.Codes, len(u.Reasons))
		})
	}
}

// A drained seed's count after the plan is what stays on it: the Shoots
// that found no seed plus those migrating away from it (charged to it by
// status.seedName until their migration completes), which the row counts
// as MigratingAway so that the table adds up.
func TestDrainedSeedCountAddsUp(t *testing.T) {
	away := shoot("away", "b") // spec b, status old: migrating away from old
	away.Status.SeedName = ptr.To("old")
	into := shoot("into", "old") // spec old, status b: migrating into old, cannot move
	into.Status.SeedName = ptr.To("b")
	tests := []struct {
		name          string
		seeds         []*api.Seed
		shoots        []*api.Shoot
		wantAfter     int64
		wantAway      map[string]int64
		wantUnplaced  int
		wantPlacedOut int
	}{
		{"everything moves", []*api.Seed{seed("old", "eu-west-1", 10), seed("b", "eu-west-1", 10)},
			shootsOn("s", "old", 2), 0, map[string]int64{}, 0, 2},
		{"one migrating away stays", []*api.Seed{seed("old", "eu-west-1", 10), seed("b", "eu-west-1", 10)},
			append(shootsOn("s", "old", 2), away), 1, map[string]int64{"old": 1}, 0, 2},
		{"vetoed, and one migrating away", []*api.Seed{seed("old", "eu-west-1", 10), seed("b", "eu-west-1", 10, noBackup)},
			append(shootsOn("s", "old", 3), away), 4, map[string]int64{"old": 1}, 3, 0},
		{"migrating both ways", []*api.Seed{seed("old", "eu-west-1", 10), seed("b", "eu-west-1", 10)},
			append(shootsOn("s", "old", 2), away, into), 2, map[string]int64{"old": 1, "b": 1}, 1, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Run(landscape(tt.seeds, tt.shoots), tt.shoots, sameRegion, []Operation{Drain{Seed: "old"}})
			require.NoError(t, err)
			assert.Len(t, r.Unplaced, tt.wantUnplaced)
			assert.Len(t, r.Placed, tt.wantPlacedOut)
			for _, row := range r.Seeds {
				assert.Equal(t, tt.wantAway[row.Name], row.MigratingAway, row.Name)
				if row.Name == "old" {
					assert.Equal(t, tt.wantAfter, row.After)
					assert.Equal(t, row.After, row.MigratingAway+int64(len(r.Unplaced)), "what stays on the drained seed")
					assert.Equal(t, row.Before-int64(len(r.Placed)), row.After)
				}
			}
		})
	}
}
