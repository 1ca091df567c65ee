package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A kubeconfig gets no client-side rate limit, as ctrl.GetConfig's
// configuration has none: client-go's default of 5 requests/s throttled the
// retry controller to about two binds a second.
func TestRestConfigKubeconfigNotThrottled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(path, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]
users: [{name: u, user: {token: abc}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`), 0o600))
	cfg, err := restConfig(path)
	require.NoError(t, err)
	assert.Equal(t, float32(-1), cfg.QPS, "QPS")
	assert.Nil(t, cfg.RateLimiter)
}
