package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/operationsapi"
)

// A seed a SeedDrain cordons in the landscape takes no Shoot of a plan:
// neither a placed one nor one drained from another seed, and the report
// lists it drained, its room left out of the group's free room.
func TestPlanHonoursSeedDrainCordon(t *testing.T) {
	seeds := []*api.Seed{seed("old", "eu-west-1", 10), seed("b", "eu-west-1", 10), seed("c", "eu-west-1", 10)}
	shoots := shootsOn("s", "old", 3)
	snap := landscapeWith(seeds, shoots,
		&operationsapi.SeedDrain{ObjectMeta: metav1.ObjectMeta{Name: "drain-c"}, Spec: operationsapi.SeedDrainSpec{SeedName: "c"}})

	r, err := Run(snap, shoots, sameRegion, []Operation{Drain{Seed: "old"}, AddShoots{Like: shoot("new", ""), Count: 2}})
	require.NoError(t, err)
	for _, p := range r.Placed {
		assert.Equal(t, "b", p.To, p.Shoot)
	}
	assert.Len(t, r.Placed, 5)
	for _, row := range r.Seeds {
		if row.Name == "c" {
			assert.Equal(t, StateDrained, row.State)
		}
	}
}
