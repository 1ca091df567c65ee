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
