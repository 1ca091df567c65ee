package config

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAutoscalerDefaults(t *testing.T) {
	c := Default()
	assert.False(t, c.Autoscaler.Enabled, "opt-in")
	assert.False(t, c.Autoscaler.DryRun)
	assert.Equal(t, 30*time.Second, c.Autoscaler.SyncPeriod.Duration)
	assert.Equal(t, 5*time.Second, c.Autoscaler.SyncBudget.Duration)

	c, err := Parse([]byte(header + "autoscaler: {enabled: true, dryRun: true, syncPeriod: 2m, syncBudget: 1500ms}\n"))
	require.NoError(t, err)
	assert.True(t, c.Autoscaler.Enabled)
	assert.True(t, c.Autoscaler.DryRun)
	assert.Equal(t, 2*time.Minute, c.Autoscaler.SyncPeriod.Duration)
	assert.Equal(t, 1500*time.Millisecond, c.Autoscaler.SyncBudget.Duration)
}

func TestAutoscalerSyncBudgetValidation(t *testing.T) {
	for _, tc := range []struct {
		value, problem string
	}{
		{"50ms", "autoscaler.syncBudget: 50ms is shorter than the minimum 100ms"},
		{"1m", "autoscaler.syncBudget: 1m0s is longer than the maximum 30s"},
		{"100ms", ""},
		{"30s", ""},
	} {
		t.Run(tc.value, func(t *testing.T) {
			_, err := Parse([]byte(header + "autoscaler: {syncBudget: " + tc.value + "}\n"))
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

func TestAutoscalerSyncPeriodValidation(t *testing.T) {
	for _, tc := range []struct {
		value, problem string
	}{
		{"500ms", "autoscaler.syncPeriod: 500ms is shorter than the minimum 1s"},
		{"2h", "autoscaler.syncPeriod: 2h0m0s is longer than the maximum 1h0m0s"},
		{"soon", `autoscaler.syncPeriod: invalid value "soon" (want a duration such as "30s")`},
		{"1s", ""},
		{"1h", ""},
	} {
		t.Run(tc.value, func(t *testing.T) {
			_, err := Parse([]byte(header + "autoscaler: {syncPeriod: " + tc.value + "}\n"))
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

func TestAutoscalerUnknownFieldRejected(t *testing.T) {
	_, err := Parse([]byte(header + "autoscaler: {enable: true}\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "enable")
}
