package main

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seedwarden/seedwarden/internal/handlers"
)

// server.maxRequestBytesInFlight is one budget for every path, exported as
// metrics: a large body held on one path (a client sending it slowly) makes
// a large review on another path wait and then be refused with 429, while a
// Shoot review of everyday size still gets in and is placed.
func TestServeSharesOneRequestBudget(t *testing.T) {
	certDir := devCertDir(t)
	port, metricsPort, healthPort := freePort(t), freePort(t), freePort(t)
	// 3 MiB for large requests (one at the body limit) and 1 MiB for small ones.
	cfg := writeFile(t, "config.yaml", configHeader+fmt.Sprintf(`
server: {port: %d, certDir: %s, maxRequestBytes: 3145728, maxRequestBytesInFlight: 4194304, requestQueueTimeout: 300ms}
metrics: {bindAddress: "127.0.0.1:%d"}
health: {bindAddress: "127.0.0.1:%d"}
`, port, certDir, metricsPort, healthPort))
	srv := startLandscape(t, cfg, healthPort)
	metricsURL := fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort)
	assert.Contains(t, body(t, metricsURL), "seedwarden_webhook_max_request_bytes_in_flight 4.194304e+06\n")

	// Headers of a 3,000,000-byte review and its first bytes, then nothing.
	conn, err := tls.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port), &tls.Config{RootCAs: devCAPool(t, certDir), ServerName: "localhost"})
	require.NoError(t, err)
	_, err = fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 3000000\r\n\r\n{\"apiVersion\":", handlers.WebhookResourceSizePath)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		return strings.Contains(body(t, metricsURL), "seedwarden_webhook_request_bytes_in_flight 3e+06\n")
	}, 10*time.Second, 20*time.Millisecond)

	client := devClient(t, certDir)
	large := bytes.Repeat([]byte(" "), 200<<10) // JSON allows the whitespace; never decoded
	resp, err := client.Post(fmt.Sprintf("https://localhost:%d%s", port, handlers.MutateShootsPath), "application/json", bytes.NewReader(large))
	require.NoError(t, err)
	refusal, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	assert.Equal(t, "request body of 204800 bytes refused: no room within 300ms (server.requestQueueTimeout) in server.maxRequestBytesInFlight: "+
		"4194304 bytes, 3000000 in use, 1048576 of them kept for requests of at most 65536 bytes\n", string(refusal))

	placed := admit(t, client, fmt.Sprintf("https://localhost:%d%s", port, handlers.MutateShootsPath), "../../examples/shoot.yaml")
	assert.Contains(t, string(placed.Patch), `"seedwarden.io/seed":"aws-eu2"`, "a Shoot review of everyday size passes")

	m := body(t, metricsURL)
	assert.Contains(t, m, `seedwarden_webhook_request_budget_waits_total{outcome="refused"} 1`+"\n")
	assert.Contains(t, m, `seedwarden_webhook_request_budget_waits_total{outcome="queued"} 0`+"\n")

	require.NoError(t, conn.Close())
	require.Eventually(t, func() bool {
		return strings.Contains(body(t, metricsURL), "seedwarden_webhook_request_bytes_in_flight 0\n")
	}, 10*time.Second, 20*time.Millisecond, "the held bytes are given back when the client goes away")
	srv.stopAndWait(t, 30*time.Second)
}
