package config

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSeedDrainDefaults(t *testing.T) {
	c := Default()
	assert.False(t, c.SeedDrain.Enabled, "opt-in")
	assert.Equal(t, 15*time.Second, c.SeedDrain.SyncPeriod.Duration)

	c, err := Parse([]byte(header + "seedDrain: {enabled: true, syncPeriod: 2m}\n"))
	require.NoError(t, err)
	assert.True(t, c.SeedDrain.Enabled)
	assert.Equal(t, 2*time.Minute, c.SeedDrain.SyncPeriod.Duration)
}

func TestSeedDrainSyncPeriodValidation(t *testing.T) {
	for _, tc := range []struct {
		value, problem string
	}{
		{"500ms", "seedDrain.syncPeriod: 500ms is shorter than the minimum 1s"},
		{"11m", "seedDrain.syncPeriod: 11m0s is longer than the maximum 10m0s"},
		{"1s", ""},
		{"10m", ""},
	} {
		t.Run(tc.value, func(t *testing.T) {
			_, err := Parse([]byte(header + "seedDrain: {syncPeriod: " + tc.value + "}\n"))
			if tc.problem == "" {
				assert.NoError(t, err)
				return
			}
			var cfgErr *Error
			require.ErrorAs(t, err, &cfgErr)
			assert.Equal(t, []string{tc.problem}, cfgErr.Problems)
		})
	}
}
