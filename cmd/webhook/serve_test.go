package main

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seedwarden/seedwarden/internal/handlers"
)

// TestServeLandscape runs `webhook serve --landscape` in-process and talks to
// it like the API server and Prometheus would.
func TestServeLandscape(t *testing.T) {
	certDir := devCertDir(t)
	port, metricsPort, healthPort := freePort(t), freePort(t), freePort(t)
	cfg := writeFile(t, "config.yaml", configHeader+fmt.Sprintf(`
server:
  port: %d
  certDir: %s
  maxRequestBytes: 65536
metrics: {bindAddress: "127.0.0.1:%d", seedLabels: [seed.gardener.cloud/region, environment]}
health: {bindAddress: "127.0.0.1:%d"}
log: {level: debug, format: json}
`, port, certDir, metricsPort, healthPort))
	srv := startLandscape(t, cfg, healthPort)

	health := fmt.Sprintf("http://127.0.0.1:%d", healthPort)
	assert.Equal(t, http.StatusOK, get(t, health+"/healthz"))
	assert.Equal(t, http.StatusOK, get(t, health+"/readyz/webhook"))

	client := devClient(t, certDir)
	url := fmt.Sprintf("https://localhost:%d%s", port, handlers.MutateShootsPath)

	resp := admit(t, client, url, "../../examples/shoot.yaml")
	assert.True(t, resp.Allowed)
	// The default placement mode announces the seed; nothing sets spec.seedName.
	assert.Contains(t, string(resp.Patch), `"seedwarden.io/seed":"aws-eu2"`)
	assert.NotContains(t, string(resp.Patch), "/spec/seedName")
	assert.Equal(t, []string{`seedwarden: will be scheduled to seed "aws-eu2"`}, resp.Warnings)

	resp = admit(t, client, url, "../../examples/shoot-unschedulable.yaml")
	assert.True(t, resp.Allowed)
	// Claimed for the retry controller, not placed.
	assert.JSONEq(t, `[{"op":"add","path":"/spec/schedulerName","value":"seedwarden"}]`, string(resp.Patch))
	require.Len(t, resp.Warnings, 1)
	assert.Contains(t, resp.Warnings[0], "aws-eu-restricted: shoot does not tolerate the seed's taints")

	// Bodies over server.maxRequestBytes are refused before decoding.
	big := bytes.Repeat([]byte(" "), 70000)
	r, err := client.Post(url, "application/json", bytes.NewReader(big))
	require.NoError(t, err)
	r.Body.Close()
	assert.Equal(t, http.StatusRequestEntityTooLarge, r.StatusCode)

	// Metrics: decisions (counted process-wide, so other tests' servers may
	// have added to them), per-seed usage (the placement reserved a place on
	// aws-eu2: 2 shoots + 1) and controller-runtime's webhook metrics.
	metrics := body(t, fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort))
	assert.Contains(t, metrics, `seedwarden_scheduling_decisions_total{result="scheduled",strategy="SameRegion"} `)
	assert.Contains(t, metrics, `seedwarden_scheduling_decisions_total{result="unschedulable",strategy="SameRegion"} `)
	// Shoots as the scheduler counts them leave the reservation out; the
	// allowlisted Seed labels follow, "" where a seed lacks one.
	const eu2 = `{label_environment="",label_seed_gardener_cloud_region="eu-central-1",provider="aws",region="eu-central-1",seed="aws-eu2"}`
	assert.Contains(t, metrics, `seedwarden_seed_charged_shoots`+eu2+` 3`)
	assert.Contains(t, metrics, `seedwarden_seed_shoots`+eu2+` 2`)
	assert.Contains(t, metrics, `seedwarden_seed_allocatable_shoots`+eu2+` 100`)
	assert.Contains(t, metrics, `seedwarden_seed_utilization_ratio`+eu2+` 0.03`)
	assert.Contains(t, metrics, `seedwarden_seed_allocatable_shoots{label_environment="",label_seed_gardener_cloud_region="us-central1",provider="gcp",region="us-central1",seed="gcp-us1"} 3`)
	assert.Contains(t, metrics, `controller_runtime_webhook_requests_total{code="200",webhook="/mutate-shoots"}`)

	// The server refuses TLS below 1.2 (the client here would allow 1.0).
	_, err = tls.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port), &tls.Config{
		MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS11, InsecureSkipVerify: true, //nolint:gosec // probing the server's floor
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "protocol version")

	srv.stopAndWait(t, 30*time.Second)
	// JSON logs, as configured.
	first, _, _ := strings.Cut(srv.stderr.String(), "\n")
	assert.True(t, json.Valid([]byte(first)), first)
}

func TestServeLandscapeWithoutCertsFails(t *testing.T) {
	cfg := writeFile(t, "config.yaml", configHeader+fmt.Sprintf(`
server: {port: %d, certDir: %s}
metrics: {bindAddress: "0"}
health: {bindAddress: "0"}
`, freePort(t), filepath.Join(t.TempDir(), "none")))
	code, _, errOut := runCmd(t, "serve", "--config", cfg, "--landscape", "../../examples/landscape.yaml")
	assert.Equal(t, exitError, code)
	assert.Contains(t, errOut, "webhook server (certificates from")
}
