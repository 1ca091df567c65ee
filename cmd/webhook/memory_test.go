package main

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seedwarden/seedwarden/internal/handlers"
	"github.com/seedwarden/seedwarden/internal/objsize"
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
	conn := stallRequest(t, port, certDir, handlers.WebhookKubeconfigSecretPath, 3_000_000)
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

// stallRequest sends the headers of a review of n bytes to path and its
// first bytes, then nothing, holding n bytes of the budget until the
// connection is closed or the server's read timeout ends it.
func stallRequest(t *testing.T, port int, certDir, path string, n int) *tls.Conn {
	t.Helper()
	conn, err := tls.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port), &tls.Config{RootCAs: devCAPool(t, certDir), ServerName: "localhost"})
	require.NoError(t, err)
	_, err = fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{\"apiVersion\":", path, n)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// The size webhook's answers do not depend on the budget: with its share
// for large requests held by two stalled connections (a client without
// client authentication could do that, or a burst of large reviews), 12
// concurrent reviews of 1.2 MB Shoots against an 8 KiB limit are each
// denied with their uid, and another tenant's 200 KB ConfigMap, under its
// 1 MiB limit, is allowed, where before they all got 429 (the Shoot size
// webhook fails open on it, the ConfigMap one closed). A large review on
// another path still gets 429: the budget is held.
func TestServeSizeReviewsGetVerdictsWhileTheBudgetIsHeld(t *testing.T) {
	certDir := devCertDir(t)
	port, metricsPort, healthPort := freePort(t), freePort(t), freePort(t)
	cfg := writeFile(t, "config.yaml", configHeader+fmt.Sprintf(`
server: {port: %d, certDir: %s, maxRequestBytes: 3145728, maxRequestBytesInFlight: 4194304, requestQueueTimeout: 300ms}
metrics: {bindAddress: "127.0.0.1:%d"}
health: {bindAddress: "127.0.0.1:%d"}
resourceSize:
  limits:
  - {apiGroups: [core.gardener.cloud], apiVersions: ["*"], resources: [shoots], size: 8Ki}
  - {apiGroups: [""], apiVersions: [v1], resources: [configmaps], size: 1Mi}
`, port, certDir, metricsPort, healthPort))
	srv := startLandscape(t, cfg, healthPort)
	defer srv.stopAndWait(t, 30*time.Second)
	metricsURL := fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort)

	stallRequest(t, port, certDir, handlers.WebhookKubeconfigSecretPath, 1_500_000)
	stallRequest(t, port, certDir, handlers.WebhookNamespaceDeletionPath, 1_500_000)
	require.Eventually(t, func() bool {
		return strings.Contains(body(t, metricsURL), "seedwarden_webhook_request_bytes_in_flight 3e+06\n")
	}, 10*time.Second, 20*time.Millisecond)

	client := devClient(t, certDir)
	url := fmt.Sprintf("https://localhost:%d%s", port, handlers.WebhookResourceSizePath)
	shoot := sizedShootJSON(t, 1_200_000)
	size, err := objsize.Measure(shoot)
	require.NoError(t, err)
	const reviews = 12
	answers := make(chan *admissionv1.AdmissionResponse, reviews)
	var wg sync.WaitGroup
	for i := range reviews {
		wg.Go(func() {
			answers <- postReviewConcurrently(t, client, url, &admissionv1.AdmissionRequest{
				UID:       types.UID(fmt.Sprintf("big-%d", i)),
				Kind:      metav1.GroupVersionKind{Group: "core.gardener.cloud", Version: "v1beta1", Kind: "Shoot"},
				Resource:  metav1.GroupVersionResource{Group: "core.gardener.cloud", Version: "v1beta1", Resource: "shoots"},
				Name:      fmt.Sprintf("big-%d", i),
				Namespace: "garden-dev",
				Operation: admissionv1.Create,
				UserInfo:  authenticationv1.UserInfo{Username: "tenant"},
				Object:    runtime.RawExtension{Raw: shoot},
			})
		})
	}
	configMap := fmt.Appendf(nil, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"settings","namespace":"garden-other"},"data":{"blob":%q}}`, strings.Repeat("c", 200_000))
	cm := postReviewConcurrently(t, client, url, &admissionv1.AdmissionRequest{
		UID:       "cm-200k",
		Kind:      metav1.GroupVersionKind{Version: "v1", Kind: "ConfigMap"},
		Resource:  metav1.GroupVersionResource{Version: "v1", Resource: "configmaps"},
		Name:      "settings",
		Namespace: "garden-other",
		Operation: admissionv1.Create,
		UserInfo:  authenticationv1.UserInfo{Username: "other-tenant"},
		Object:    runtime.RawExtension{Raw: configMap},
	})
	wg.Wait()
	close(answers)

	if assert.NotNil(t, cm) {
		assert.True(t, cm.Allowed, "the 200 KB ConfigMap: %v", cm.Result)
	}
	denied := 0
	for a := range answers {
		if assert.NotNil(t, a) && assert.False(t, a.Allowed, "review %s", a.UID) {
			assert.Equal(t, int32(http.StatusForbidden), a.Result.Code)
			assert.Contains(t, a.Result.Message, fmt.Sprintf("resource size %d bytes exceeds the limit of 8Ki (8192 bytes)", size))
			denied++
		}
	}
	assert.Equal(t, reviews, denied)

	resp, err := client.Post(fmt.Sprintf("https://localhost:%d%s", port, handlers.WebhookKubeconfigSecretPath), "application/json", bytes.NewReader(bytes.Repeat([]byte(" "), 200<<10)))
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode, "the budget is held")
}

// postReviewConcurrently posts a review and returns its response, nil (and a failed
// assertion) unless it is an HTTP 200 review answering req's uid. Safe in
// goroutines.
func postReviewConcurrently(t *testing.T, client *http.Client, url string, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	b, err := json.Marshal(admissionv1.AdmissionReview{TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"}, Request: req})
	if !assert.NoError(t, err) {
		return nil
	}
	resp, err := client.Post(url, "application/json", bytes.NewReader(b))
	if !assert.NoError(t, err) {
		return nil
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	if !assert.NoError(t, err) || !assert.Equal(t, http.StatusOK, resp.StatusCode, "review %s: %s", req.UID, answer) {
		return nil
	}
	var out admissionv1.AdmissionReview
	if !assert.NoError(t, json.Unmarshal(answer, &out)) || !assert.NotNil(t, out.Response) || !assert.Equal(t, req.UID, out.Response.UID) {
		return nil
	}
	return out.Response
}

// sizedShootJSON is the example Shoot padded with an annotation to about n
// bytes.
func sizedShootJSON(t *testing.T, n int) []byte {
	t.Helper()
	var shoot map[string]any
	require.NoError(t, json.Unmarshal(yamlToJSON(t, "../../examples/shoot.yaml"), &shoot))
	meta := shoot["metadata"].(map[string]any)
	meta["annotations"] = map[string]any{"pad": strings.Repeat("p", n)}
	b, err := json.Marshal(shoot)
	require.NoError(t, err)
	return b
}
