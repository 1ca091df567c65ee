package config

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAuditDefaults(t *testing.T) {
	c := Default()
	assert.False(t, c.Audit.Enabled, "opt-in")
	assert.Equal(t, 5*time.Minute, c.Audit.Interval.Duration)
	assert.Equal(t, 100, c.Audit.ResultsLimit)

	c, err := Parse([]byte(header + "audit: {enabled: true, interval: 30s, resultsLimit: 5}\n"))
	require.NoError(t, err)
	assert.True(t, c.Audit.Enabled)
	assert.Equal(t, 30*time.Second, c.Audit.Interval.Duration)
	assert.Equal(t, 5, c.Audit.ResultsLimit)
}

func TestAuditValidation(t *testing.T) {
	for _, tc := range []struct {
		value, problem string
	}{
		{"interval: 5s", "audit.interval: 5s is shorter than the minimum 10s"},
		{"interval: 25h", "audit.interval: 25h0m0s is longer than the maximum 24h0m0s"},
		{"resultsLimit: 1001", "audit.resultsLimit: 1001 is out of range (want 1 to 1000)"},
		{"resultsLimit: -1", "audit.resultsLimit: -1 is out of range (want 1 to 1000)"},
		{"interval: 10s", ""},
		{"resultsLimit: 1000", ""},
	} {
		t.Run(tc.value, func(t *testing.T) {
			_, err := Parse([]byte(header + "audit: {" + tc.value + "}\n"))
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
