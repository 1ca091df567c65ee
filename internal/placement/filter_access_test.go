package placement

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/seedwarden/seedwarden/internal/api"
)

func TestAccessRestrictions(t *testing.T) {
	eu := readySeed("eu", func(s *api.Seed) { s.Spec.AccessRestrictions = []api.AccessRestriction{{Name: "eu-access-only"}} })
	plain := readySeed("plain")
	want := []api.AccessRestrictionWithOptions{{Name: "eu-access-only"}}
	keepAll, _ := supportsAccessRestrictions(nil)
	assert.True(t, keepAll(NewSeed(plain)), "no restrictions asked: every seed")
	keep, why := supportsAccessRestrictions(want)
	assert.True(t, keep(NewSeed(eu)))
	assert.False(t, keep(NewSeed(plain)))
	code, text := why(NewSeed(plain))
	assert.Contains(t, text, "eu-access-only")
	assert.Equal(t, AccessRestrictionUnsupported, code)
}

// TestAccessRestrictionNamedEmpty: "" is a name like any other, as in
// Gardener's AccessRestrictionsAreSupported (a set lookup), so a seed that
// does not list it does not support it (the mutation search found
// seedwarden taking "" for "nothing missing": access-empty-name-*).
func TestAccessRestrictionNamedEmpty(t *testing.T) {
	other := readySeed("other", func(s *api.Seed) { s.Spec.AccessRestrictions = []api.AccessRestriction{{Name: "eu-access-only"}} })
	empty := readySeed("empty", func(s *api.Seed) { s.Spec.AccessRestrictions = []api.AccessRestriction{{Name: ""}} })
	keep, why := supportsAccessRestrictions([]api.AccessRestrictionWithOptions{{Name: ""}})
	assert.False(t, keep(NewSeed(other)), "a seed without the empty name")
	code, text := why(NewSeed(other))
	assert.Equal(t, AccessRestrictionUnsupported, code)
	assert.Contains(t, text, `""`)
	assert.True(t, keep(NewSeed(empty)), "a seed listing the empty name")
}
