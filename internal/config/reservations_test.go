package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReservationsRules(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		want       Reservations
		problems   []string
	}{
		{"defaults", "", Reservations{MaxPerNamespace: 100, MaxTotal: 1000}, nil},
		{"zero is the default", "reservations: {maxPerNamespace: 0, maxTotal: 0}", Reservations{MaxPerNamespace: 100, MaxTotal: 1000}, nil},
		{"one each", "reservations: {maxPerNamespace: 1, maxTotal: 1}", Reservations{MaxPerNamespace: 1, MaxTotal: 1}, nil},
		{"maximum", "reservations: {maxPerNamespace: 1000000, maxTotal: 1000000}", Reservations{MaxPerNamespace: 1000000, MaxTotal: 1000000}, nil},
		{"negative per namespace", "reservations: {maxPerNamespace: -1}", Reservations{},
			[]string{"reservations.maxPerNamespace: -1 out of range 1-1000000"}},
		{"negative total", "reservations: {maxTotal: -5}", Reservations{},
			[]string{"reservations.maxTotal: -5 out of range 1-1000000"}},
		{"too many", "reservations: {maxPerNamespace: 1000001, maxTotal: 2000000}", Reservations{},
			[]string{"reservations.maxPerNamespace: 1000001 out of range 1-1000000", "reservations.maxTotal: 2000000 out of range 1-1000000"}},
		{"total below per namespace", "reservations: {maxPerNamespace: 100, maxTotal: 99}", Reservations{},
			[]string{"reservations.maxTotal: 99 is less than reservations.maxPerNamespace 100"}},
		{"total below the default per namespace", "reservations: {maxTotal: 10}", Reservations{},
			[]string{"reservations.maxTotal: 10 is less than reservations.maxPerNamespace 100"}},
		{"not a number", "reservations: {maxTotal: lots}", Reservations{},
			[]string{"reservations.maxTotal: cannot use string here (want an integer)"}},
		{"unknown field", "reservations: {maxPerSeed: 3}", Reservations{}, []string{"maxPerSeed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse([]byte(header + tc.yaml))
			if len(tc.problems) == 0 {
				require.NoError(t, err)
				assert.Equal(t, tc.want, c.Reservations)
				return
			}
			require.Error(t, err)
			for _, p := range tc.problems {
				assert.Contains(t, err.Error(), p)
			}
		})
	}
}
