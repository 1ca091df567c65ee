package difftest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/landscape"
)

func TestGenerateIsDeterministic(t *testing.T) {
	a, b := Generate(7, 50), Generate(7, 50)
	require.Equal(t, a, b)
	assert.Equal(t, One(7, 42), a[42], "scenario i depends on (seed, i) only")
	assert.NotEqual(t, Generate(8, 50), a)
}

// TestGeneratedScenariosDecode: every scenario is a corpus file seedwarden
// reads (the landscape decodes, the Shoot too), with 3-8 seeds.
func TestGeneratedScenariosDecode(t *testing.T) {
	for _, sc := range Generate(DefaultSeed, 300) {
		all, err := json.Marshal(sc.Objects)
		require.NoError(t, err)
		objs, err := landscape.Decode(all)
		require.NoError(t, err, sc.Name)
		seeds := 0
		for _, o := range objs {
			if _, ok := o.(*api.Seed); ok {
				seeds++
			}
		}
		assert.GreaterOrEqual(t, seeds, 3, sc.Name)
		assert.LessOrEqual(t, seeds, 8, sc.Name)
		var shoot api.Shoot
		require.NoError(t, json.Unmarshal(sc.Shoot, &shoot), sc.Name)
		assert.Nil(t, shoot.Spec.SeedName, sc.Name)
		assert.Contains(t, []string{"SameRegion", "MinimalDistance"}, sc.Strategy)
		assert.Contains(t, []string{"Disjoint", "AllowIPv4"}, sc.NetworkOverlap)
	}
}

// TestGeneratorReachesEveryFamily: over a default-sized run each family is
// stressed in many scenarios, and the rare values the six rule differences
// hinge on do occur.
func TestGeneratorReachesEveryFamily(t *testing.T) {
	stressed := map[feature]int{}
	for i := range 2000 {
		for f := range newGen(DefaultSeed, i).focus {
			stressed[f]++
		}
	}
	for _, f := range features {
		assert.Greater(t, stressed[f], 80, "feature %d is stressed in too few scenarios", f)
	}

	var statusNoServices, dupAccess, hugeDistance, longRegion int
	for _, sc := range Generate(DefaultSeed, 2000) {
		var shoot api.Shoot
		require.NoError(t, json.Unmarshal(sc.Shoot, &shoot))
		if st := shoot.Status.Networking; st != nil && len(st.Services) == 0 && shoot.Spec.Networking != nil {
			statusNoServices++
		}
		names := map[string]bool{}
		for _, a := range shoot.Spec.AccessRestrictions {
			if names[a.Name] {
				dupAccess++
			}
			names[a.Name] = true
		}
		if len(shoot.Spec.Region) > 400 {
			longRegion++
		}
		for _, o := range sc.Objects {
			if containsAny(string(o), "2147483648", "4294967296") {
				hugeDistance++
			}
		}
	}
	for name, n := range map[string]int{"status.networking without services": statusNoServices,
		"duplicate access restrictions": dupAccess, "distances past 2^31-1": hugeDistance, "long regions": longRegion} {
		assert.Greater(t, n, 10, name)
	}
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
