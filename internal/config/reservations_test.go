package config

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReservationsRules(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		want       Reservations
		problems   []string
	}{
		{"defaults", "", Reservations{ConfirmWindow: NewDuration(5 * time.Second), MaxPerNamespace: 100, MaxPerUser: 20, MaxTotal: 1000}, nil},
		{"zero is the default", "reservations: {maxPerNamespace: 0, maxPerUser: 0, maxTotal: 0}",
			Reservations{ConfirmWindow: NewDuration(5 * time.Second), MaxPerNamespace: 100, MaxPerUser: 20, MaxTotal: 1000}, nil},
		{"one each", "reservations: {confirmWindow: 1s, maxPerNamespace: 1, maxPerUser: 1, maxTotal: 1}",
			Reservations{ConfirmWindow: NewDuration(time.Second), MaxPerNamespace: 1, MaxPerUser: 1, MaxTotal: 1}, nil},
		{"maximum", "reservations: {confirmWindow: 30s, maxPerNamespace: 1000000, maxPerUser: 1000000, maxTotal: 1000000}",
			Reservations{ConfirmWindow: NewDuration(30 * time.Second), MaxPerNamespace: 1000000, MaxPerUser: 1000000, MaxTotal: 1000000}, nil},
		{"window as long as a longer TTL", "reservationTTL: 2m\nreservations: {confirmWindow: 2m}",
			Reservations{ConfirmWindow: NewDuration(2 * time.Minute), MaxPerNamespace: 100, MaxPerUser: 20, MaxTotal: 1000}, nil},
		// A TTL shorter than the default window (valid before the window
		// existed) bounds the default, not an error about a field not set.
		{"default window within a shorter TTL", "reservationTTL: 3s",
			Reservations{ConfirmWindow: NewDuration(3 * time.Second), MaxPerNamespace: 100, MaxPerUser: 20, MaxTotal: 1000}, nil},
		{"default window within a TTL below a second", "reservationTTL: 500ms",
			Reservations{ConfirmWindow: NewDuration(time.Second), MaxPerNamespace: 100, MaxPerUser: 20, MaxTotal: 1000}, nil},
		{"window below a second", "reservations: {confirmWindow: 500ms}", Reservations{},
			[]string{"reservations.confirmWindow: 500ms is shorter than the minimum 1s"}},
		{"window zero", "reservations: {confirmWindow: 0s}", Reservations{},
			[]string{"reservations.confirmWindow: 0s is shorter than the minimum 1s"}},
		{"window beyond the TTL", "reservations: {confirmWindow: 31s}", Reservations{},
			[]string{"reservations.confirmWindow: 31s is longer than the maximum 30s"}},
		{"window beyond a shorter TTL", "reservationTTL: 10s\nreservations: {confirmWindow: 11s}", Reservations{},
			[]string{"reservations.confirmWindow: 11s is longer than the maximum 10s"}},
		{"window not a duration", "reservations: {confirmWindow: soon}", Reservations{},
			[]string{`reservations.confirmWindow: invalid value "soon" (want a duration such as "30s")`}},
		{"negative per user", "reservations: {maxPerUser: -3}", Reservations{},
			[]string{"reservations.maxPerUser: -3 out of range 1-1000000"}},
		{"too many per user", "reservations: {maxPerUser: 1000001}", Reservations{},
			[]string{"reservations.maxPerUser: 1000001 out of range 1-1000000"}},
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
