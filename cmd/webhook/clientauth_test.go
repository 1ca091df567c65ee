package main

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seedwarden/seedwarden/hack/devcerts/certgen"
	"github.com/seedwarden/seedwarden/internal/handlers"
)

// server.clientAuth: only the API server's certificate gets a forged-looking
// review through; other clients are refused at the handshake, counted by
// reason, and nothing they send is decided (no reservation on any seed).
func TestServeClientAuthentication(t *testing.T) {
	certDir := devCertDir(t)
	now := time.Now()
	clientCA, err := certgen.NewAuthority("kube-apiserver client CA", now)
	require.NoError(t, err)
	otherCA, err := certgen.NewAuthority("attacker CA", now)
	require.NoError(t, err)
	caFile := writeFile(t, "client-ca.crt", string(clientCA.CertPEM))
	port, metricsPort, healthPort := freePort(t), freePort(t), freePort(t)
	cfg := writeFile(t, "config.yaml", configHeader+fmt.Sprintf(`
server:
  port: %d
  certDir: %s
  clientAuth:
    caFile: %s
    allowedNames: [kube-apiserver]
metrics: {bindAddress: "127.0.0.1:%d"}
health: {bindAddress: "127.0.0.1:%d"}
`, port, certDir, caFile, metricsPort, healthPort))
	srv := startLandscape(t, cfg, healthPort)
	url := fmt.Sprintf("https://localhost:%d%s", port, handlers.MutateShootsPath)
	withCert := func(ca *certgen.Authority, cn string) *http.Client {
		pair, err := ca.IssueClient(cn, now)
		require.NoError(t, err)
		cert, err := pair.TLS()
		require.NoError(t, err)
		c := devClient(t, certDir)
		c.Transport.(*http.Transport).TLSClientConfig.Certificates = []tls.Certificate{cert}
		return c
	}
	metricsURL := fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort)

	for _, c := range []*http.Client{devClient(t, certDir), withCert(otherCA, "kube-apiserver"), withCert(clientCA, "attacker")} {
		_, err := c.Post(url, "application/json", bytes.NewReader(yamlToJSON(t, "../../examples/shoot.yaml")))
		require.Error(t, err, "refused at the handshake")
	}
	// Only seedwarden's lines, so that a failure shows what matters. (The
	// HTTP client may retry a refused request once: counts are 1 or 2.)
	var m strings.Builder
	for line := range strings.Lines(body(t, metricsURL)) {
		if strings.HasPrefix(line, "seedwarden_") {
			m.WriteString(line)
		}
	}
	for _, reason := range []string{"missing", "untrusted", "name_not_allowed"} {
		assert.Regexp(t, `seedwarden_webhook_client_rejections_total\{reason="`+reason+`"\} [12]\n`, m.String())
	}
	assert.Contains(t, m.String(), `seedwarden_seed_charged_shoots{provider="aws",region="eu-central-1",seed="aws-eu2"} 2`+"\n", "nothing was reserved")

	resp := admit(t, withCert(clientCA, "kube-apiserver"), url, "../../examples/shoot.yaml")
	assert.Contains(t, string(resp.Patch), `"seedwarden.io/seed":"aws-eu2"`)
	srv.stopAndWait(t, 30*time.Second)
}

func TestServeClientAuthenticationNeedsAUsableBundle(t *testing.T) {
	cfg := writeFile(t, "config.yaml", configHeader+fmt.Sprintf(`
server: {port: %d, certDir: %s, clientAuth: {caFile: %s}}
metrics: {bindAddress: "0"}
health: {bindAddress: "0"}
`, freePort(t), devCertDir(t), writeFile(t, "ca.crt", "no certificate here")))
	code, _, errOut := runCmd(t, "serve", "--config", cfg, "--landscape", "../../examples/landscape.yaml")
	assert.Equal(t, exitError, code)
	assert.Contains(t, errOut, "server.clientAuth.caFile: client CA bundle")
	assert.Contains(t, errOut, "no PEM certificate")
}
