package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"

	"github.com/seedwarden/seedwarden/internal/handlers"
)

// TestServeLandscapeGuardEnforcement: each guard takes the enforcement of
// its own section. With every guard softened, one request each guard's
// rules refuse is admitted, with a warning under warn and none under
// dryrun, and counted under its guard and action.
func TestServeLandscapeGuardEnforcement(t *testing.T) {
	certDir := devCertDir(t)
	keyFile := placementKeyFile(t)
	port, metricsPort, healthPort := freePort(t), freePort(t), freePort(t)
	cfg := writeFile(t, "config.yaml", configHeader+fmt.Sprintf(`
server: {port: %d, certDir: %s}
metrics: {bindAddress: "127.0.0.1:%d"}
health: {bindAddress: "127.0.0.1:%d"}
placement: {keyFile: %s}
binding: {enforcement: warn}
capacity: {enforcement: dryrun}
resourceSize:
  enforcement: dryrun
  limits:
  - {apiGroups: [core.gardener.cloud], apiVersions: ["*"], resources: [shoots], size: 2Ki, enforcement: warn}
kubeconfigSecret: {enforcement: dryrun}
namespaceDeletion: {enforcement: warn}
`, port, certDir, metricsPort, healthPort, keyFile))
	srv := startLandscape(t, cfg, healthPort)
	metricsURL := fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort)
	// The registry is the process's: other tests (and -count) count there
	// too, so each guard's counter is compared with its value before.
	before := body(t, metricsURL)
	client := devClient(t, certDir)
	url := func(path string) string { return fmt.Sprintf("https://localhost:%d%s", port, path) }
	jane := authenticationv1.UserInfo{Username: "jane.doe@example.com", Groups: []string{"system:authenticated"}}
	admin := authenticationv1.UserInfo{Username: "admin@example.com"}
	shoot := yamlToJSON(t, "../../examples/shoot.yaml")
	warned := func(r *admissionv1.AdmissionResponse, want string) {
		t.Helper()
		require.True(t, r.Allowed, "%+v", r.Result)
		require.Len(t, r.Warnings, 1)
		assert.Contains(t, r.Warnings[0], want)
		assert.Contains(t, r.Warnings[0], "enforcement is warn; deny would refuse this request")
	}
	silent := func(r *admissionv1.AdmissionResponse) {
		t.Helper()
		require.True(t, r.Allowed, "%+v", r.Result)
		assert.Empty(t, r.Warnings)
	}

	// binding warn: jane may not bind in landscape mode.
	warned(send(t, client, url(handlers.WebhookBindingPath), "uid-1", admissionv1.Create, "", setSeed(t, shoot, "aws-eu1"), nil, jane),
		`user "jane.doe@example.com" may not set spec.seedName to "aws-eu1"`)
	// capacity dryrun: gcp-us1 is full (allocatable 3, 3 Shoots).
	silent(send(t, client, url(handlers.WebhookCapacityPath), "uid-2", admissionv1.Update, "binding", setSeed(t, shoot, "gcp-us1"), setSeed(t, shoot, "aws-eu1"), admin))
	// resource size: the limit's warn, not the section's dryrun.
	big := bytes.Replace(shoot, []byte(`"purpose":"evaluation"`), []byte(`"purpose":"evaluation","x":"`+strings.Repeat("x", 3000)+`"`), 1)
	warned(send(t, client, url(handlers.WebhookResourceSizePath), "uid-3", admissionv1.Create, "", big, nil, jane), "exceeds the limit of 2Ki (2048 bytes)")
	// kubeconfig Secret dryrun.
	secret, err := json.Marshal(map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "kubeconfig", "namespace": "garden-dev"},
		"data":     map[string]any{"kubeconfig": base64.StdEncoding.EncodeToString([]byte(execKubeconfig))},
	})
	require.NoError(t, err)
	silent(sendSecret(t, client, url(handlers.WebhookKubeconfigSecretPath), secret, jane))
	// namespace deletion warn: garden-dev belongs to Project dev.
	warned(sendNamespaceDelete(t, client, url(handlers.WebhookNamespaceDeletionPath), "garden-dev", jane), `deletion of namespace "garden-dev" is not permitted`)

	after := body(t, metricsURL)
	for guard, action := range map[string]string{
		handlers.WebhookBinding:           handlers.EnforceWarn,
		handlers.WebhookCapacity:          handlers.EnforceDryRun,
		handlers.WebhookResourceSize:      handlers.EnforceWarn,
		handlers.WebhookKubeconfigSecret:  handlers.EnforceDryRun,
		handlers.WebhookNamespaceDeletion: handlers.EnforceWarn,
	} {
		series := fmt.Sprintf(`seedwarden_guard_refusals_total{action=%q,guard=%q}`, action, guard)
		assert.Equal(t, counterValue(t, before, series)+1, counterValue(t, after, series), "%s: one refusal", series)
	}
	srv.stopAndWait(t, 30*time.Second)
}

// counterValue is series' value in a /metrics text (0 when absent).
func counterValue(t *testing.T, text, series string) float64 {
	t.Helper()
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			require.NoError(t, err, "%s", line)
			return f
		}
	}
	return 0
}
