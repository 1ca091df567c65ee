package server

import (
	"bytes"
	"context"
	"crypto/tls"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/seedwarden/seedwarden/hack/devcerts/certgen"
)

// syncBuffer is a log destination written by the servers' goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// captureStdLog sends the standard library's log, where net/http writes
// every failed TLS handshake, to a buffer for the test's life.
func captureStdLog(t *testing.T) *syncBuffer {
	t.Helper()
	buf := &syncBuffer{}
	out, flags := log.Writer(), log.Flags()
	log.SetOutput(buf)
	t.Cleanup(func() { log.SetOutput(out); log.SetFlags(flags) })
	return buf
}

func freeLocalPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	return port
}

// probedWebhook is a started NewWebhook, with client authentication on when
// clientCA is set; rejected collects the refusals' reasons.
type probedWebhook struct {
	srv      webhook.Server
	port     int
	serverCA *certgen.Authority
	rejected *[]string
	mu       *sync.Mutex
	// notAfter is the served certificate's, as the probe reported it, and
	// want the serving certificate's.
	notAfter, want *time.Time
}

func startProbedWebhook(t *testing.T, clientCA *certgen.Authority) probedWebhook {
	t.Helper()
	now := time.Now()
	serverCA, err := certgen.NewAuthority("server CA", now)
	require.NoError(t, err)
	serving, err := serverCA.IssueServing([]string{"seedwarden.seedwarden.svc"}, now)
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, certgen.WriteServing(dir, serverCA, serving))
	w := probedWebhook{port: freeLocalPort(t), serverCA: serverCA, rejected: &[]string{}, mu: &sync.Mutex{}, notAfter: &time.Time{}, want: &time.Time{}}
	leaf, err := serving.TLS()
	require.NoError(t, err)
	*w.want = leaf.Leaf.NotAfter
	o := WebhookOptions{Port: w.port, CertDir: dir, CertName: certgen.CertFile, KeyName: certgen.KeyFile,
		Limits: Limits{MaxRequestBytes: 1 << 20, ReadTimeout: 5 * time.Second, WriteTimeout: 5 * time.Second},
		ServedCertificate: func(notAfter time.Time) {
			w.mu.Lock()
			defer w.mu.Unlock()
			*w.notAfter = notAfter
		}}
	if clientCA != nil {
		caFile := filepath.Join(dir, "client-ca.crt")
		require.NoError(t, os.WriteFile(caFile, clientCA.CertPEM, 0o600))
		v, err := NewClientVerifier(ClientAuth{CAFile: caFile, Log: logr.Discard(), Rejected: func(reason string) {
			w.mu.Lock()
			defer w.mu.Unlock()
			*w.rejected = append(*w.rejected, reason)
		}})
		require.NoError(t, err)
		o.ClientAuth = v
	}
	w.srv, err = NewWebhook(o, nil)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- w.srv.Start(ctx) }()
	t.Cleanup(func() { cancel(); <-errc })
	// Waited for with the probe: a bare dial would be a handshake error.
	require.Eventually(t, func() bool {
		return w.srv.StartedChecker()(httptest.NewRequest(http.MethodGet, "/readyz", nil)) == nil
	}, 10*time.Second, 20*time.Millisecond, "webhook server did not start")
	return w
}

func (w probedWebhook) rejections() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), *w.rejected...)
}

// The regression of issue 37: with client authentication on, 100 readiness
// probes pass, none counts as a client refused (reason missing), and no TLS
// handshake error is logged; a client without a certificate is still
// refused and counted (the test can see a rejection), and a client that
// copies the probe's certificate without its key does not get through.
func TestSelfProbeIsNotAClientRejection(t *testing.T) {
	logged := captureStdLog(t)
	clientCA, err := certgen.NewAuthority("client CA", time.Now())
	require.NoError(t, err)
	w := startProbedWebhook(t, clientCA)

	check := w.srv.StartedChecker()
	for i := range 100 {
		require.NoError(t, check(httptest.NewRequest(http.MethodGet, "/readyz", nil)), "probe %d", i)
	}
	assert.Empty(t, w.rejections(), "readiness probes counted as refused clients")
	assert.NotContains(t, logged.String(), "TLS handshake error")

	// Someone else, without a certificate: refused, counted, logged.
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true,
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // a test client
	_, err = hc.Get("https://127.0.0.1:" + strconv.Itoa(w.port) + selfProbePath)
	require.Error(t, err)
	require.Eventually(t, func() bool { return len(w.rejections()) == 1 }, 5*time.Second, 10*time.Millisecond)
	assert.Equal(t, []string{ClientCertMissing}, w.rejections())
	assert.Eventually(t, func() bool { return strings.Contains(logged.String(), "TLS handshake error") }, 5*time.Second, 10*time.Millisecond)

	// The probe's certificate with another key: the handshake's proof of
	// the key fails, so it is not the probe.
	probe := w.srv.(probedServer).probe
	other, err := selfProbeCertificate(time.Now())
	require.NoError(t, err)
	forged := tls.Certificate{Certificate: [][]byte{probe.der}, PrivateKey: other.PrivateKey}
	hc.Transport.(*http.Transport).TLSClientConfig.Certificates = []tls.Certificate{forged}
	_, err = hc.Get("https://127.0.0.1:" + strconv.Itoa(w.port) + selfProbePath)
	require.Error(t, err)
}

// The probe passes only when the webhook port answers it: not before the
// server listens, not when something else answers the port, and also
// without client authentication.
func TestSelfProbe(t *testing.T) {
	req := httptest.NewRequest(http.MethodGet, "/readyz", nil)

	t.Run("nothing listens", func(t *testing.T) {
		p, err := NewSelfProbe(freeLocalPort(t))
		require.NoError(t, err)
		err = p.Check(req)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "webhook server is not reachable")
	})
	t.Run("another server on the port", func(t *testing.T) {
		other := httptest.NewTLSServer(http.NotFoundHandler())
		defer other.Close()
		p, err := NewSelfProbe(other.Listener.Addr().(*net.TCPAddr).Port)
		require.NoError(t, err)
		err = p.Check(req)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "404 Not Found, not 204 No Content")
	})
	t.Run("without client authentication", func(t *testing.T) {
		w := startProbedWebhook(t, nil)
		require.NoError(t, w.srv.StartedChecker()(req))
	})
	t.Run("reports the certificate served", func(t *testing.T) {
		w := startProbedWebhook(t, nil)
		require.NoError(t, w.srv.StartedChecker()(req))
		w.mu.Lock()
		defer w.mu.Unlock()
		require.False(t, w.want.IsZero())
		assert.True(t, w.notAfter.Equal(*w.want), "served notAfter %s, serving certificate's %s", w.notAfter, w.want)
	})
}
