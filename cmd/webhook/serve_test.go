package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/seedwarden/seedwarden/hack/devcerts/certgen"
)

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestServeLandscape runs `webhook serve --landscape` in-process and talks to
// it like the API server and Prometheus would.
func TestServeLandscape(t *testing.T) {
	certDir := t.TempDir()
	require.NoError(t, certgen.Generate(certDir, certgen.DefaultHosts, time.Now()))
	port, metricsPort, healthPort := freePort(t), freePort(t), freePort(t)
	cfg := writeFile(t, "config.yaml", configHeader+fmt.Sprintf(`
server:
  port: %d
  certDir: %s
  maxRequestBytes: 65536
metrics: {bindAddress: "127.0.0.1:%d"}
health: {bindAddress: "127.0.0.1:%d"}
log: {level: debug, format: json}
`, port, certDir, metricsPort, healthPort))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--config", cfg, "--landscape", "../../examples/landscape.yaml"}, io.Discard, &stderr)
	}()

	health := fmt.Sprintf("http://127.0.0.1:%d", healthPort)
	waitReady(t, health+"/readyz", 20*time.Second, done, &stderr)
	assert.Equal(t, http.StatusOK, get(t, health+"/healthz"))
	assert.Equal(t, http.StatusOK, get(t, health+"/readyz/webhook"))

	client := tlsClient(t, filepath.Join(certDir, certgen.CAFile))
	url := fmt.Sprintf("https://localhost:%d%s", port, MutateShootsPath)

	resp := admit(t, client, url, "../../examples/shoot.yaml")
	assert.True(t, resp.Allowed)
	assert.Contains(t, string(resp.Patch), `{"op":"add","path":"/spec/seedName","value":"aws-eu2"}`)

	resp = admit(t, client, url, "../../examples/shoot-unschedulable.yaml")
	assert.True(t, resp.Allowed)
	assert.Empty(t, resp.Patch)
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
	assert.Contains(t, metrics, `seedwarden_scheduling_decisions_total{result="scheduled",strategy="MinimalDistance"} `)
	assert.Contains(t, metrics, `seedwarden_scheduling_decisions_total{result="unschedulable",strategy="MinimalDistance"} `)
	assert.Contains(t, metrics, `seedwarden_seed_usage{seed="aws-eu2"} 3`)
	assert.Contains(t, metrics, `seedwarden_seed_allocatable{seed="gcp-us1"} 3`)
	assert.Contains(t, metrics, `controller_runtime_webhook_requests_total{code="200",webhook="/mutate-shoots"}`)

	// The server refuses TLS below 1.2 (the client here would allow 1.0).
	_, err = tls.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port), &tls.Config{
		MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS11, InsecureSkipVerify: true, //nolint:gosec // probing the server's floor
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "protocol version")

	cancel()
	select {
	case code := <-done:
		assert.Equal(t, exitOK, code, stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatal("server did not stop")
	}
	// JSON logs, as configured.
	first, _, _ := strings.Cut(stderr.String(), "\n")
	assert.True(t, json.Valid([]byte(first)), first)
}

// waitReady polls readyz until it answers 200; it fails the test when the
// server exits or time runs out, showing the server's log and /readyz.
func waitReady(t *testing.T, readyz string, timeout time.Duration, done <-chan int, log *syncBuffer) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	last := "no answer"
	for time.Now().Before(deadline) {
		select {
		case code := <-done:
			t.Fatalf("server exited with %d:\n%s", code, log.String())
		default:
		}
		if resp, err := http.Get(readyz + "?verbose"); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
			last = resp.Status + "\n" + string(b)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("not ready after %s: %s\nserver log:\n%s", timeout, last, log.String())
}

func TestServeLandscapeWithoutCertsFails(t *testing.T) {
	cfg := writeFile(t, "config.yaml", configHeader+fmt.Sprintf(`
server: {port: %d, certDir: %s}
metrics: {bindAddress: "0"}
health: {bindAddress: "0"}
`, freePort(t), filepath.Join(t.TempDir(), "none")))
	var stderr syncBuffer
	code := run(context.Background(), []string{"serve", "--config", cfg, "--landscape", "../../examples/landscape.yaml"}, io.Discard, &stderr)
	assert.Equal(t, exitError, code)
	assert.Contains(t, stderr.String(), "webhook server (certificates from")
}

func tlsClient(t *testing.T, caFile string) *http.Client {
	t.Helper()
	caPEM, err := os.ReadFile(caFile)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(caPEM))
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
}

// admit sends the Shoot in file as a CREATE AdmissionReview.
func admit(t *testing.T, client *http.Client, url, file string) *admissionv1.AdmissionResponse {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	obj, err := yaml.YAMLToJSON(data)
	require.NoError(t, err)
	shoots := metav1.GroupVersionResource{Group: "core.gardener.cloud", Version: "v1beta1", Resource: "shoots"}
	uid := types.UID("uid-" + filepath.Base(file))
	review := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{
			UID:       uid,
			Kind:      metav1.GroupVersionKind{Group: "core.gardener.cloud", Version: "v1beta1", Kind: "Shoot"},
			Resource:  shoots,
			Namespace: "garden-dev",
			Operation: admissionv1.Create,
			Object:    runtime.RawExtension{Raw: obj},
		},
	}
	body, err := json.Marshal(review)
	require.NoError(t, err)
	resp, err := client.Post(url, "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var out admissionv1.AdmissionReview
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	require.NotNil(t, out.Response)
	require.Equal(t, uid, out.Response.UID)
	return out.Response
}

func get(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

func body(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}
