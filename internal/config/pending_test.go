package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLeaderElectionNamespace(t *testing.T) {
	env := func(v string) func(string) string {
		return func(name string) string {
			if name == PodNamespaceEnv {
				return v
			}
			return ""
		}
	}
	c := Default()
	assert.Equal(t, "garden", c.LeaderElectionNamespace(env("")), "no POD_NAMESPACE: the garden namespace")
	assert.Equal(t, "seedwarden", c.LeaderElectionNamespace(env("seedwarden")))
	assert.Equal(t, "garden", c.LeaderElectionNamespace(env("  ")))

	c, err := Parse([]byte(header + "gardenNamespace: garden-ops\n"))
	require.NoError(t, err)
	assert.Equal(t, "garden-ops", c.LeaderElectionNamespace(env("")))

	c, err = Parse([]byte(header + "leaderElection: {namespace: kube-system}\n"))
	require.NoError(t, err)
	assert.Equal(t, "kube-system", c.LeaderElectionNamespace(env("seedwarden")), "the configured namespace wins")
}

// Unparsable durations are reported once each, and do not make up a
// relation between them.
func TestPendingDurationsInvalid(t *testing.T) {
	_, err := Parse([]byte(header + "pendingShoots: {backoffBase: x, backoffMax: later, workers: 0, bindMode: Binding}\n"))
	var cfgErr *Error
	require.ErrorAs(t, err, &cfgErr)
	assert.ElementsMatch(t, []string{
		`pendingShoots.backoffBase: invalid value "x" (want a duration such as "30s")`,
		`pendingShoots.backoffMax: invalid value "later" (want a duration such as "30s")`,
		`pendingShoots.bindMode: unsupported value "Binding" (want "binding" or "update")`,
	}, cfgErr.Problems, "workers 0 means the default")

	_, err = Parse([]byte(header + "pendingShoots: {backoffBase: x, backoffMax: 1s}\n"))
	require.ErrorAs(t, err, &cfgErr)
	assert.Equal(t, []string{`pendingShoots.backoffBase: invalid value "x" (want a duration such as "30s")`}, cfgErr.Problems)
}
