package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seedwarden/seedwarden/hack/devcerts/certgen"
)

// devCAName is the name every checkout's development CA carries, so another
// checkout's server looks like ours until its signature is checked.
const devCAName = "seedwarden development CA"

// newAuthority writes a fresh development CA (as hack/devcerts makes it) to
// dir/ca.crt and returns it.
func newAuthority(t *testing.T, dir string) *certgen.Authority {
	t.Helper()
	ca, err := certgen.NewAuthority(devCAName, time.Now())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, certgen.CAFile), ca.CertPEM, 0o644))
	return ca
}

// serveTLS answers every request with 200 over TLS with a certificate from ca.
func serveTLS(t *testing.T, ca *certgen.Authority) *httptest.Server {
	t.Helper()
	pair, err := ca.IssueServing(certgen.DefaultHosts, time.Now())
	require.NoError(t, err)
	cert, err := pair.TLS()
	require.NoError(t, err)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

func servePlain(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(srv.Close)
	return srv
}

// closedPort is a loopback port nothing listens on any more.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

func portOf(t *testing.T, rawURL string) int {
	t.Helper()
	_, port, err := net.SplitHostPort(rawURL[len("https://"):])
	if err != nil { // http://
		_, port, err = net.SplitHostPort(rawURL[len("http://"):])
	}
	require.NoError(t, err)
	p, err := strconv.Atoi(port)
	require.NoError(t, err)
	return p
}

func TestVerifyServer(t *testing.T) {
	dir := t.TempDir()
	caFile := filepath.Join(dir, certgen.CAFile)
	ours := newAuthority(t, dir)
	pool, err := loadCA(caFile)
	require.NoError(t, err)
	another, err := certgen.NewAuthority(devCAName, time.Now())
	require.NoError(t, err)

	tests := []struct {
		name string
		url  string
		want []string // empty: verified
	}{
		{name: "the server of this checkout", url: serveTLS(t, ours).URL + webhookPath},
		{
			name: "another checkout's seedwarden",
			url:  serveTLS(t, another).URL + webhookPath,
			want: []string{"something else answers on 127.0.0.1:", `issued by "` + devCAName + `"`, "not by the CA in " + caFile, "DEMO_PORT", "DEMO_URL"},
		},
		{
			name: "some other HTTPS server",
			url:  httptest.NewTLSServer(http.NotFoundHandler()).URL + webhookPath,
			want: []string{"something else answers on 127.0.0.1:", "not by the CA in " + caFile},
		},
		{
			name: "a plain HTTP server",
			url:  "https://" + servePlain(t).Listener.Addr().String() + webhookPath,
			want: []string{"something else answers on 127.0.0.1:", "does not speak TLS", "DEMO_PORT"},
		},
		{
			name: "nothing",
			url:  "https://" + closedPort(t) + webhookPath,
			want: []string{"nothing answers on 127.0.0.1:", "make run"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := verifyServer(context.Background(), tt.url, caFile, pool)
			if len(tt.want) == 0 {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
			assert.NotContains(t, err.Error(), "x509: certificate signed by unknown authority")
		})
	}
}

func TestResolvePorts(t *testing.T) {
	busy := portOf(t, servePlain(t).URL)
	tests := []struct {
		name            string
		webhook, health int
		wantErr         []string
	}{
		{name: "both picked", webhook: 0, health: 0},
		{name: "webhook port taken", webhook: busy, health: 0, wantErr: []string{fmt.Sprintf("the webhook port %d is in use", busy), "DEMO_PORT=", "-port"}},
		{name: "health port taken", webhook: 0, health: busy, wantErr: []string{fmt.Sprintf("the health port %d is in use", busy), "DEMO_HEALTH_PORT=", "-health-port"}},
		{name: "the same port twice", webhook: 40000, health: 40000, wantErr: []string{"-port and -health-port are both 40000"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := resolvePorts(tt.webhook, tt.health)
			if len(tt.wantErr) > 0 {
				require.Error(t, err)
				for _, w := range tt.wantErr {
					assert.Contains(t, err.Error(), w)
				}
				return
			}
			require.NoError(t, err)
			assert.NotZero(t, p.webhook)
			assert.NotZero(t, p.health)
			assert.NotEqual(t, p.webhook, p.health)
			assert.NotEqual(t, busy, p.webhook)
			assert.NotEqual(t, busy, p.health)
		})
	}
}

func TestParseFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantURL string
		wantErr string
	}{
		{name: "a running server by default", args: nil, wantURL: "https://localhost:9443/mutate-shoots"},
		{name: "a running server elsewhere", args: []string{"-url", "https://localhost:19443/mutate-shoots"}, wantURL: "https://localhost:19443/mutate-shoots"},
		{name: "its own server", args: []string{"-server", "bin/webhook serve", "-port", "19443"}},
		{name: "own server and url", args: []string{"-server", "bin/webhook serve", "-url", "https://localhost:9443/"}, wantErr: "-url is for a running server"},
		{name: "own server and readyz", args: []string{"-server", "bin/webhook serve", "-readyz", "http://localhost:8081/readyz"}, wantErr: "-readyz is for a running server"},
		{name: "port without server", args: []string{"-port", "19443"}, wantErr: "-port is for the server the demo starts"},
		{name: "health port without server", args: []string{"-health-port", "18081"}, wantErr: "-health-port is for the server the demo starts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parseFlags(tt.args, &bytes.Buffer{})
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantURL, o.url)
		})
	}
}

// TestRunBesideForeignServers runs the demo end to end while other servers
// hold ports: another checkout's seedwarden (same CA name, other key) and a
// plain HTTP server. Pointed at them, or told to start on their ports, it
// must say so; left to pick its ports, it must start its own server and get
// the examples placed.
func TestRunBesideForeignServers(t *testing.T) {
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	webhook := filepath.Join(t.TempDir(), "webhook")
	build := exec.Command("go", "build", "-o", webhook, "./cmd/webhook")
	build.Dir = root
	out, err := build.CombinedOutput()
	require.NoError(t, err, string(out))

	certs := t.TempDir()
	require.NoError(t, certgen.Generate(certs, certgen.DefaultHosts, time.Now()))
	another, err := certgen.NewAuthority(devCAName, time.Now())
	require.NoError(t, err)
	foreignTLS := serveTLS(t, another)
	foreignPlain := servePlain(t)
	t.Chdir(root) // the example files the demo sends by default

	own := func(webhookPort, healthPort int) options {
		return options{
			caFile: filepath.Join(certs, certgen.CAFile), wait: time.Minute,
			serverCmd: webhook + " serve --landscape examples/landscape.yaml", config: "examples/config-dev.yaml",
			serverLog: filepath.Join(t.TempDir(), "server.log"), port: webhookPort, healthPort: healthPort,
		}
	}
	running := own(0, 0)
	running.serverCmd, running.url = "", foreignTLS.URL+webhookPath

	tests := []struct {
		name    string
		opts    options
		wantErr []string
		wantOut []string
	}{
		{name: "pointed at another seedwarden", opts: running, wantErr: []string{"something else answers on " + foreignTLS.Listener.Addr().String(), devCAName}},
		{name: "webhook port held by another seedwarden", opts: own(portOf(t, foreignTLS.URL), 0), wantErr: []string{fmt.Sprintf("the webhook port %d is in use", portOf(t, foreignTLS.URL))}},
		{name: "health port held by an HTTP server", opts: own(0, portOf(t, foreignPlain.URL)), wantErr: []string{fmt.Sprintf("the health port %d is in use", portOf(t, foreignPlain.URL))}},
		{name: "free ports", opts: own(0, 0), wantOut: []string{"Started the server", "seed:", "warnings:", "Stopped the server"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout bytes.Buffer
			err := run(context.Background(), tt.opts, &stdout)
			if len(tt.wantErr) > 0 {
				require.Error(t, err)
				for _, w := range tt.wantErr {
					assert.Contains(t, err.Error(), w)
				}
				assert.NotContains(t, stdout.String(), "Started the server")
				return
			}
			require.NoError(t, err, stdout.String())
			for _, w := range tt.wantOut {
				assert.Contains(t, stdout.String(), w)
			}
			assert.NotContains(t, stdout.String(), foreignTLS.Listener.Addr().String())
		})
	}
}
