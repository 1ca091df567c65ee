package main

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"

	"github.com/seedwarden/seedwarden/internal/handlers"
)

// A cluster server needs the shared placement key; it stops before touching
// the cluster, with the field named.
func TestServeClusterRequiresPlacementKey(t *testing.T) {
	noCluster := filepath.Join(t.TempDir(), "no-kubeconfig")

	code, _, errOut := runCmd(t, "serve", "--kubeconfig", noCluster)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "invalid configuration: placement.keyFile: required when serving a cluster")

	// Without the binding webhook no key is needed: it gets as far as the cluster.
	cfg := writeFile(t, "config.yaml", configHeader+"binding: {enabled: false}\n")
	code, _, errOut = runCmd(t, "serve", "--config", cfg, "--kubeconfig", noCluster)
	assert.Equal(t, exitError, code)
	assert.Contains(t, errOut, "kubeconfig "+noCluster)

	// A key file that cannot be read or is too short stops every mode.
	for _, key := range []string{filepath.Join(t.TempDir(), "missing"), writeFile(t, "short.key", "c2hvcnQ=\n")} {
		cfg := writeFile(t, "config.yaml", configHeader+"placement: {keyFile: "+key+"}\n")
		for _, args := range [][]string{
			{"serve", "--config", cfg, "--kubeconfig", noCluster},
			{"serve", "--config", cfg, "--landscape", "../../examples/landscape.yaml"},
		} {
			code, _, errOut := runCmd(t, args...)
			assert.Equal(t, exitUsage, code, "%q", args)
			assert.Contains(t, errOut, "placement.keyFile", "%q", args)
			assert.NotContains(t, errOut, "c2hvcnQ", "the key is never printed")
		}
	}
}

// TestServeLandscapeValidatingWebhooks runs `webhook serve --landscape` and
// sends the validating webhooks what the API server would.
func TestServeLandscapeValidatingWebhooks(t *testing.T) {
	certDir := devCertDir(t)
	keyFile := placementKeyFile(t)
	port, metricsPort, healthPort := freePort(t), freePort(t), freePort(t)
	cfg := writeFile(t, "config.yaml", configHeader+fmt.Sprintf(`
server: {port: %d, certDir: %s}
metrics: {bindAddress: "127.0.0.1:%d"}
health: {bindAddress: "127.0.0.1:%d"}
log: {level: debug}
placement: {keyFile: %s}
binding:
  landscapeAllowedSubjects: [{kind: Group, name: "garden:operators"}]
capacity:
  unrestrictedSubjects: [{kind: User, name: "admin@example.com"}]
resourceSize:
  limits:
  - {apiGroups: [core.gardener.cloud], apiVersions: ["*"], resources: [shoots], size: 2Ki}
  counts:
  - {apiGroups: [core.gardener.cloud], apiVersions: ["*"], resources: [seeds], count: 3}
`, port, certDir, metricsPort, healthPort, keyFile))
	srv := startLandscape(t, cfg, healthPort)
	client := devClient(t, certDir)
	url := func(path string) string { return fmt.Sprintf("https://localhost:%d%s", port, path) }

	jane := authenticationv1.UserInfo{Username: "jane.doe@example.com", Groups: []string{"system:authenticated"}}
	operator := authenticationv1.UserInfo{Username: "op@example.com", Groups: []string{"system:authenticated", "garden:operators"}}
	shoot := yamlToJSON(t, "../../examples/shoot.yaml")

	// The webhook's own placement passes binding and capacity for a user
	// without binding permission.
	resp := send(t, client, url(handlers.MutateShootsPath), "uid-mutate", admissionv1.Create, "", shoot, nil, jane)
	require.True(t, resp.Allowed)
	assert.Contains(t, string(resp.Patch), `"seedwarden.io/placement"`)
	placed := applyJSONPatch(t, shoot, resp.Patch)
	for _, path := range []string{handlers.WebhookBindingPath, handlers.WebhookCapacityPath, handlers.WebhookSeedPath} {
		resp := send(t, client, url(path), "uid-validate", admissionv1.Create, "", placed, nil, jane)
		assert.True(t, resp.Allowed, "%s: %+v", path, resp.Result)
	}

	// The same seed chosen by the user: the binding webhook refuses it;
	// in landscape mode only the configured subjects may bind.
	manual := setSeed(t, shoot, "aws-eu1")
	resp = send(t, client, url(handlers.WebhookBindingPath), "uid-2", admissionv1.Create, "", manual, nil, jane)
	assert.False(t, resp.Allowed)
	assert.Contains(t, resp.Result.Message, `user "jane.doe@example.com" may not set spec.seedName to "aws-eu1"`)
	assert.Contains(t, resp.Result.Message, "landscape mode: only binding.landscapeAllowedSubjects may bind Shoots")
	resp = send(t, client, url(handlers.WebhookBindingPath), "uid-3", admissionv1.Create, "", manual, nil, operator)
	assert.True(t, resp.Allowed, "%+v", resp.Result)

	// Changing the seed through the main resource.
	resp = send(t, client, url(handlers.WebhookBindingPath), "uid-4", admissionv1.Update, "", setSeed(t, shoot, "aws-eu2"), manual, operator)
	assert.False(t, resp.Allowed)
	assert.Contains(t, resp.Result.Message, "use the shoots/binding subresource")

	// Binding to the full seed: gcp-us1 (allocatable 3, 3 Shoots).
	resp = send(t, client, url(handlers.WebhookCapacityPath), "uid-5", admissionv1.Update, "binding", setSeed(t, shoot, "gcp-us1"), manual, operator)
	assert.False(t, resp.Allowed)
	assert.Contains(t, resp.Result.Message, `seed "gcp-us1" is full: usage 3 (3 shoots + 0 reservations) + 1 would exceed allocatable shoots 3`)
	admin := authenticationv1.UserInfo{Username: "admin@example.com"}
	resp = send(t, client, url(handlers.WebhookCapacityPath), "uid-6", admissionv1.Update, "binding", setSeed(t, shoot, "gcp-us1"), manual, admin)
	assert.True(t, resp.Allowed, "unrestricted: %+v", resp.Result)

	// Resource size and count.
	big := bytes.Replace(shoot, []byte(`"purpose":"evaluation"`), []byte(`"purpose":"evaluation","x":"`+strings.Repeat("x", 3000)+`"`), 1)
	resp = send(t, client, url(handlers.WebhookResourceSizePath), "uid-7", admissionv1.Create, "", big, nil, jane)
	assert.False(t, resp.Allowed)
	assert.Contains(t, resp.Result.Message, "exceeds the limit of 2Ki (2048 bytes) for shoots.core.gardener.cloud/v1beta1")
	resp = send(t, client, url(handlers.WebhookResourceSizePath), "uid-8", admissionv1.Create, "", shoot, nil, jane)
	assert.True(t, resp.Allowed, "%+v", resp.Result)
	seed := []byte(`{"apiVersion":"core.gardener.cloud/v1beta1","kind":"Seed","metadata":{"name":"new"}}`)
	resp = sendResource(t, client, url(handlers.WebhookResourceSizePath), "uid-9", "seeds", "Seed", seed, jane)
	assert.False(t, resp.Allowed)
	assert.Contains(t, resp.Result.Message, "seeds.core.gardener.cloud exist, the limit is 3")

	metrics := body(t, fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort))
	assert.Contains(t, metrics, `seedwarden_validations_total{result="allowed",webhook="binding"}`)
	assert.Contains(t, metrics, `seedwarden_validations_total{result="denied",webhook="capacity"}`)
	assert.Contains(t, metrics, `seedwarden_rejected_resources_total{kind="Shoot",operation="CREATE",reason="size",resource_namespace="garden-dev"}`)
	assert.Contains(t, metrics, `seedwarden_rejected_resources_total{kind="Seed",operation="CREATE",reason="count",resource_namespace=""}`)

	srv.stopAndWait(t, 30*time.Second)
	logs := srv.stderr.String()
	assert.Contains(t, logs, "Placement key loaded")
	assert.NotContains(t, logs, testPlacementKey, "the key is never logged")
}

// Without a key file, --landscape uses a random key and says so.
func TestServeLandscapeRandomKey(t *testing.T) {
	certDir := devCertDir(t)
	port, healthPort := freePort(t), freePort(t)
	cfg := writeFile(t, "config.yaml", configHeader+fmt.Sprintf(`
server: {port: %d, certDir: %s}
metrics: {bindAddress: "0"}
health: {bindAddress: "127.0.0.1:%d"}
`, port, certDir, healthPort))
	srv := startLandscape(t, cfg, healthPort)

	client := devClient(t, certDir)
	shoot := yamlToJSON(t, "../../examples/shoot.yaml")
	jane := authenticationv1.UserInfo{Username: "jane.doe@example.com"}
	resp := send(t, client, fmt.Sprintf("https://localhost:%d%s", port, handlers.MutateShootsPath), "m", admissionv1.Create, "", shoot, nil, jane)
	require.True(t, resp.Allowed)
	resp = send(t, client, fmt.Sprintf("https://localhost:%d%s", port, handlers.WebhookBindingPath), "v", admissionv1.Create, "", applyJSONPatch(t, shoot, resp.Patch), nil, jane)
	assert.True(t, resp.Allowed, "%+v", resp.Result)

	srv.stop()
	<-srv.done
	assert.Contains(t, srv.stderr.String(), "using a random in-memory placement key")
}
