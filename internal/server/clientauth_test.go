package server

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seedwarden/seedwarden/hack/devcerts/certgen"
)

// clientAuthFixture is a TLS server with client authentication on and the
// certificates to call it with.
type clientAuthFixture struct {
	addr     string
	serverCA *certgen.Authority
	caFile   string

	mu       sync.Mutex
	rejected []string
}

func (f *clientAuthFixture) rejections() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.rejected...)
}

// startClientAuthServer serves 200 "ok" behind a ClientVerifier trusting
// clientCA for allowed names.
func startClientAuthServer(t *testing.T, clientCA *certgen.Authority, allowed []string) *clientAuthFixture {
	t.Helper()
	now := time.Now()
	serverCA, err := certgen.NewAuthority("server CA", now)
	require.NoError(t, err)
	serving, err := serverCA.IssueServing([]string{"127.0.0.1"}, now)
	require.NoError(t, err)
	pair, err := serving.TLS()
	require.NoError(t, err)

	f := &clientAuthFixture{serverCA: serverCA, caFile: filepath.Join(t.TempDir(), "client-ca.crt")}
	require.NoError(t, os.WriteFile(f.caFile, clientCA.CertPEM, 0o600))
	v, err := NewClientVerifier(ClientAuth{
		CAFile:       f.caFile,
		AllowedNames: allowed,
		Log:          logr.Discard(),
		Rejected: func(reason string) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.rejected = append(f.rejected, reason)
		},
	})
	require.NoError(t, err)
	// As controller-runtime's webhook server builds its listener: the TLS
	// options, then the certificate set on the same config.
	cfg := &tls.Config{}
	HardenTLS(cfg)
	v.Apply(cfg)
	cfg.Certificates = []tls.Certificate{pair}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	require.NoError(t, err)
	srv := &http.Server{
		Handler:           http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }),
		ReadHeaderTimeout: 5 * time.Second,
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	f.addr = ln.Addr().String()
	return f
}

// get calls the server presenting cert (none when nil), on a new connection
// each time (no session resumption hides a refusal).
func (f *clientAuthFixture) get(t *testing.T, cert *certgen.Pair) error {
	t.Helper()
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(f.serverCA.CertPEM))
	cfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if cert != nil {
		pair, err := cert.TLS()
		require.NoError(t, err)
		cfg.Certificates = []tls.Certificate{pair}
	}
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg, DisableKeepAlives: true}}
	resp, err := c.Get("https://" + f.addr + "/mutate-shoots")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, "ok", string(body))
	return nil
}

func TestClientAuthAcceptsOnlyTrustedAllowedClients(t *testing.T) {
	now := time.Now()
	clientCA, err := certgen.NewAuthority("client CA", now)
	require.NoError(t, err)
	otherCA, err := certgen.NewAuthority("other CA", now)
	require.NoError(t, err)
	issue := func(ca *certgen.Authority, cn string) *certgen.Pair {
		p, err := ca.IssueClient(cn, now)
		require.NoError(t, err)
		return &p
	}
	serving, err := clientCA.IssueServing([]string{"kube-apiserver"}, now)
	require.NoError(t, err)

	tests := []struct {
		name    string
		allowed []string
		cert    *certgen.Pair
		reason  string // "" for accepted
	}{
		{"the API server's certificate", []string{"kube-apiserver"}, issue(clientCA, "kube-apiserver"), ""},
		{"one of several allowed names", []string{"a", "kube-apiserver"}, issue(clientCA, "kube-apiserver"), ""},
		{"any name when none are configured", nil, issue(clientCA, "anyone"), ""},
		{"no certificate", []string{"kube-apiserver"}, nil, ClientCertMissing},
		{"no certificate, no names configured", nil, nil, ClientCertMissing},
		{"the allowed name from another CA", []string{"kube-apiserver"}, issue(otherCA, "kube-apiserver"), ClientCertUntrusted},
		{"a name not allowed", []string{"kube-apiserver"}, issue(clientCA, "attacker"), ClientCertNotAllowed},
		{"a name differing in case", []string{"kube-apiserver"}, issue(clientCA, "Kube-Apiserver"), ClientCertNotAllowed},
		{"a server certificate of the CA", []string{"kube-apiserver"}, &serving, ClientCertUntrusted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := startClientAuthServer(t, clientCA, tt.allowed)
			err := f.get(t, tt.cert)
			if tt.reason == "" {
				require.NoError(t, err)
				assert.Empty(t, f.rejections())
				return
			}
			require.Error(t, err, "the request must not be served")
			assert.Equal(t, []string{tt.reason}, f.rejections())
		})
	}
}

func TestClientAuthFollowsTheCAFile(t *testing.T) {
	now := time.Now()
	oldCA, err := certgen.NewAuthority("old client CA", now)
	require.NoError(t, err)
	newCA, err := certgen.NewAuthority("new client CA", now)
	require.NoError(t, err)
	oldCert, err := oldCA.IssueClient("kube-apiserver", now)
	require.NoError(t, err)
	newCert, err := newCA.IssueClient("kube-apiserver", now)
	require.NoError(t, err)

	f := startClientAuthServer(t, oldCA, []string{"kube-apiserver"})
	require.NoError(t, f.get(t, &oldCert))
	require.Error(t, f.get(t, &newCert))

	// Rotated: the new bundle applies at the next handshake.
	writeCAFile(t, f.caFile, newCA.CertPEM)
	require.NoError(t, f.get(t, &newCert))
	require.Error(t, f.get(t, &oldCert))

	// A broken file keeps the bundle in force rather than locking out (or
	// letting in) everyone.
	writeCAFile(t, f.caFile, []byte("not a certificate"))
	require.NoError(t, f.get(t, &newCert))
	require.Error(t, f.get(t, &oldCert))
	assert.Equal(t, []string{ClientCertUntrusted, ClientCertUntrusted, ClientCertUntrusted}, f.rejections())
}

// writeCAFile replaces the file atomically with a modification time the
// verifier cannot take for the previous one's.
func writeCAFile(t *testing.T, path string, data []byte) {
	t.Helper()
	tmp := path + ".tmp"
	require.NoError(t, os.WriteFile(tmp, data, 0o600))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	later := fi.ModTime().Add(time.Second)
	require.NoError(t, os.Chtimes(tmp, later, later))
	require.NoError(t, os.Rename(tmp, path))
}

func TestNewClientVerifierRefusesUnusableBundles(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.crt")
	require.NoError(t, os.WriteFile(empty, []byte("-----BEGIN NOTHING-----\n"), 0o600))
	for _, tt := range []struct{ name, file, want string }{
		{"missing file", filepath.Join(dir, "absent.crt"), "absent.crt"},
		{"no certificate", empty, "no PEM certificate"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewClientVerifier(ClientAuth{CAFile: tt.file})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// The handshake, not the HTTP layer, refuses: a forged AdmissionReview from
// a client without a certificate never reaches a handler.
func TestClientAuthRefusesBeforeAnyRequest(t *testing.T) {
	clientCA, err := certgen.NewAuthority("client CA", time.Now())
	require.NoError(t, err)
	f := startClientAuthServer(t, clientCA, nil)
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(f.serverCA.CertPEM))
	conn, err := tls.Dial("tcp", f.addr, &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12})
	if err == nil {
		defer conn.Close()
		// TLS 1.3: the client learns of the refusal on its first read.
		_, err = io.WriteString(conn, "POST /mutate-shoots HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
		if err == nil {
			_, err = conn.Read(make([]byte, 1))
		}
	}
	require.Error(t, err)
	var opErr *net.OpError
	if assert.ErrorAs(t, err, &opErr) {
		assert.True(t, strings.Contains(err.Error(), "certificate"), "the alert says why: %v", err)
	}
}
