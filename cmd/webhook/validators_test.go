package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"

	"github.com/seedwarden/seedwarden/internal/config"
	"github.com/seedwarden/seedwarden/internal/handlers"
)

// Kubeconfigs as Gardener components would read them from a Secret.
const (
	tokenKubeconfig = `apiVersion: v1
kind: Config
clusters: [{name: garden, cluster: {server: "https://api.example.com", certificate-authority-data: Zm9v}}]
users: [{name: robot, user: {token: abc}}]
contexts: [{name: garden, context: {cluster: garden, user: robot}}]
current-context: garden
`
	execKubeconfig = `apiVersion: v1
kind: Config
clusters: [{name: garden, cluster: {server: "https://api.example.com"}}]
users: [{name: admin, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/sh, args: ["-c", "id"]}}}]
contexts: [{name: garden, context: {cluster: garden, user: admin}}]
current-context: garden
`
	tokenFileKubeconfig = `apiVersion: v1
kind: Config
clusters: [{name: garden, cluster: {server: "https://api.example.com"}}]
users: [{name: reader, user: {tokenFile: /var/run/secrets/token}}]
contexts: [{name: garden, context: {cluster: garden, user: reader}}]
current-context: garden
`
)

// TestServeLandscapeKubeconfigAndNamespaceWebhooks: both validators are served
// in --landscape mode behind the same body limit as every route, the
// allow-list of the configuration applies, namespace deletion is decided from
// the loaded landscape, and the answers are counted.
func TestServeLandscapeKubeconfigAndNamespaceWebhooks(t *testing.T) {
	certDir := devCertDir(t)
	port, metricsPort, healthPort := freePort(t), freePort(t), freePort(t)
	cfg := writeFile(t, "config.yaml", configHeader+fmt.Sprintf(`
server: {port: %d, certDir: %s, maxRequestBytes: 16384}
metrics: {bindAddress: "127.0.0.1:%d"}
health: {bindAddress: "127.0.0.1:%d"}
kubeconfigSecret: {allowedFields: [tokenFile]}
`, port, certDir, metricsPort, healthPort))
	srv := startLandscape(t, cfg, healthPort)
	client := devClient(t, certDir)
	url := func(path string) string { return fmt.Sprintf("https://localhost:%d%s", port, path) }
	jane := authenticationv1.UserInfo{Username: "jane.doe@example.com"}

	secret := func(kubeconfig string) []byte {
		b, err := json.Marshal(map[string]any{
			"apiVersion": "v1", "kind": "Secret",
			"metadata": map[string]any{"name": "kubeconfig", "namespace": "garden-dev"},
			"data":     map[string]any{"kubeconfig": base64.StdEncoding.EncodeToString([]byte(kubeconfig))},
		})
		require.NoError(t, err)
		return b
	}
	resp := sendSecret(t, client, url(handlers.WebhookKubeconfigSecretPath), secret(execKubeconfig), jane)
	assert.False(t, resp.Allowed)
	assert.Equal(t, int32(http.StatusForbidden), resp.Result.Code)
	assert.Contains(t, resp.Result.Message, `user "admin" uses field "exec", which is not allowed`)
	resp = sendSecret(t, client, url(handlers.WebhookKubeconfigSecretPath), secret(tokenKubeconfig), jane)
	assert.True(t, resp.Allowed, "%+v", resp.Result)
	resp = sendSecret(t, client, url(handlers.WebhookKubeconfigSecretPath), secret(tokenFileKubeconfig), jane)
	assert.True(t, resp.Allowed, "tokenFile is in kubeconfigSecret.allowedFields: %+v", resp.Result)

	// garden-dev belongs to Project dev and holds Shoots.
	resp = sendNamespaceDelete(t, client, url(handlers.WebhookNamespaceDeletionPath), "garden-dev", jane)
	assert.False(t, resp.Allowed)
	assert.Contains(t, resp.Result.Message, `deletion of namespace "garden-dev" is not permitted: it belongs to project "dev"`)
	resp = sendNamespaceDelete(t, client, url(handlers.WebhookNamespaceDeletionPath), "scratch", jane)
	assert.True(t, resp.Allowed, "%+v", resp.Result)

	// The body limit (server.maxRequestBytes) guards the new routes too.
	for _, path := range []string{handlers.WebhookKubeconfigSecretPath, handlers.WebhookNamespaceDeletionPath} {
		r, err := client.Post(url(path), "application/json", bytes.NewReader(bytes.Repeat([]byte(" "), 20000)))
		require.NoError(t, err)
		r.Body.Close()
		assert.Equal(t, http.StatusRequestEntityTooLarge, r.StatusCode, path)
	}

	m := body(t, fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort))
	assert.Contains(t, m, `seedwarden_validations_total{result="denied",webhook="kubeconfig-secret"}`)
	assert.Contains(t, m, `seedwarden_validations_total{result="allowed",webhook="kubeconfig-secret"}`)
	assert.Contains(t, m, `seedwarden_validations_total{result="denied",webhook="namespace-deletion"}`)
	assert.Contains(t, m, `seedwarden_validations_total{result="allowed",webhook="namespace-deletion"}`)

	srv.stopAndWait(t, 30*time.Second)
}

func TestLeaderElection(t *testing.T) {
	env := func(ns string) func(string) string {
		return func(k string) string {
			if k == config.PodNamespaceEnv {
				return ns
			}
			return ""
		}
	}
	parse := func(yaml string) *config.Config {
		c, err := config.Parse([]byte(configHeader + yaml))
		require.NoError(t, err)
		return c
	}
	for _, tc := range []struct {
		name, config, podNamespace string
		want                       election
	}{
		{"defaults", "", "seedwarden", election{elected: true, namespace: "seedwarden", id: "seedwarden-pending-shoots"}},
		{"no POD_NAMESPACE: the garden namespace", "gardenNamespace: garden-ops\nleaderElection: {id: other}\n", "", election{elected: true, namespace: "garden-ops", id: "other"}},
		{"nothing to elect a leader for", "pendingShoots: {enabled: false}\n", "seedwarden", election{}},
		{"election off", "leaderElection: {enabled: false}\n", "seedwarden", election{}},
		{"the autoscaler alone needs a leader too", "pendingShoots: {enabled: false}\nplacement: {mode: patch}\nautoscaler: {enabled: true}\n", "seedwarden",
			election{elected: true, namespace: "seedwarden", id: "seedwarden-pending-shoots"}},
		{"the autoscaler, election off", "autoscaler: {enabled: true}\nleaderElection: {enabled: false}\n", "seedwarden", election{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, leaderElection(parse(tc.config), env(tc.podNamespace)))
		})
	}
}
