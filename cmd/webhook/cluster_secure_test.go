package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/certwatch"
	"github.com/seedwarden/seedwarden/internal/config"
	"github.com/seedwarden/seedwarden/internal/handlers"
	"github.com/seedwarden/seedwarden/internal/metrics"
	"github.com/seedwarden/seedwarden/internal/seedreserve"
	"github.com/seedwarden/seedwarden/internal/testenv"
)

// TestServeClusterProduction runs `webhook serve --kubeconfig` with what
// deploy/manifests configures beyond the basics, against a real
// kube-apiserver:
//
//   - metrics.secure: /metrics over HTTPS, 401 without a token or with one
//     the API server refuses, 403 for a token without the permission, 200
//     for one with it; TLS 1.2 at least, no plain HTTP;
//   - certificate: the cert-manager Certificate's readiness and expiry on
//     /metrics;
//   - capacity.coordination apiserver (namespace from POD_NAMESPACE): a
//     placement reserves in the seed's ConfigMap, a dry run does not, a full
//     seed is refused.
func TestServeClusterProduction(t *testing.T) {
	env, restCfg := testenv.Start(t, "../../e2e/crds", "../../internal/certwatch/testdata/crds")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	scheme := cache.NewScheme()
	require.NoError(t, certwatch.AddToScheme(scheme))
	c, err := client.New(restCfg, client.Options{Scheme: scheme})
	require.NoError(t, err)
	cs, err := kubernetes.NewForConfig(restCfg)
	require.NoError(t, err)
	createLandscape(ctx, t, c, "garden", "garden-dev", "seedwarden")

	notAfter := createReadyCertificate(ctx, t, c)

	// Scrapers: "reader" may GET /metrics, "nobody" may not.
	require.NoError(t, c.Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "metrics-reader"},
		Rules:      []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}},
	}))
	require.NoError(t, c.Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "metrics-reader"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "metrics-reader"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "seedwarden", Name: "reader"}},
	}))
	token := func(sa string) string {
		t.Helper()
		require.NoError(t, c.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "seedwarden", Name: sa}}))
		tr, err := cs.CoreV1().ServiceAccounts("seedwarden").CreateToken(ctx, sa, &authenticationv1.TokenRequest{
			Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptrTo(int64(3600))},
		}, metav1.CreateOptions{})
		require.NoError(t, err)
		return tr.Status.Token
	}
	readerToken, nobodyToken := token("reader"), token("nobody")

	kubeconfigPath := adminKubeconfig(t, env)
	certDir := devCertDir(t)
	port, metricsPort, healthPort := freePort(t), freePort(t), freePort(t)
	keyFile := placementKeyFile(t)
	cfg := writeFile(t, "config.yaml", configHeader+fmt.Sprintf(`
server: {port: %d, certDir: %s}
metrics: {bindAddress: "127.0.0.1:%d", secure: true}
health: {bindAddress: "127.0.0.1:%d"}
placement: {keyFile: %s, mode: patch}
certificate: {namespace: seedwarden, name: seedwarden-webhook}
capacity: {coordination: apiserver}
pendingShoots: {enabled: false}
`, port, certDir, metricsPort, healthPort, keyFile))
	t.Setenv(config.PodNamespaceEnv, "seedwarden")
	srv := startCluster(ctx, t, cfg, kubeconfigPath, healthPort)

	// Metrics: HTTPS with the serving certificate, tokens checked.
	pool := devCAPool(t, certDir)
	metricsURL := fmt.Sprintf("https://localhost:%d/metrics", metricsPort)
	hc := devClient(t, certDir)
	scrape := func(token string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, metricsURL, nil)
		require.NoError(t, err)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := hc.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(b)
	}
	code, _ := scrape("")
	assert.Equal(t, http.StatusUnauthorized, code, "no token")
	// A token the API server rejects: 401 (controller-runtime's own filter
	// answers 500, see server.MetricsAuthFilter).
	code, msg := scrape("not-a-token")
	assert.Equal(t, http.StatusUnauthorized, code, "a token the API server does not know: %s", msg)
	code, msg = scrape(nobodyToken)
	assert.Equal(t, http.StatusForbidden, code, "a token without get on /metrics: %s", msg)
	code, scraped := scrape(readerToken)
	require.Equal(t, http.StatusOK, code, scraped)
	assert.Contains(t, scraped, "seedwarden_seed_charged_shoots")

	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/scraped", metricsPort))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "plain HTTP to the HTTPS scraped port")
	_, err = tls.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", metricsPort), &tls.Config{
		MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS11, InsecureSkipVerify: true, //nolint:gosec // probing the server's floor
	})
	require.Error(t, err, "TLS 1.1 to the scraped port")
	conn, err := tls.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", metricsPort), &tls.Config{RootCAs: pool, ServerName: "localhost", NextProtos: []string{"h2", "http/1.1"}})
	require.NoError(t, err)
	assert.Equal(t, "http/1.1", conn.ConnectionState().NegotiatedProtocol, "HTTP/2 must stay off on the scraped port too")
	conn.Close()

	// The Certificate's state, from the watcher.
	require.Eventually(t, func() bool {
		_, m := scrape(readerToken)
		return strings.Contains(m, `seedwarden_certificate_ready{certificate="seedwarden-webhook",certificate_namespace="seedwarden"} 1`) &&
			strings.Contains(m, fmt.Sprintf(`seedwarden_certificate_expiry_timestamp_seconds{certificate="seedwarden-webhook",certificate_namespace="seedwarden"} %g`, float64(notAfter.Unix())))
	}, 20*time.Second, 100*time.Millisecond, "certificate scraped")

	// Capacity across replicas: the reservation goes to the API server.
	tc := devClient(t, certDir)
	capacityURL := fmt.Sprintf("https://localhost:%d%s", port, handlers.WebhookCapacityPath)
	admin := authenticationv1.UserInfo{Username: "admin", Groups: []string{"system:masters", "system:authenticated"}}
	shoot := yamlToJSON(t, "../../examples/shoot.yaml")
	configMap := func(seed string) (*corev1.ConfigMap, error) {
		cm := &corev1.ConfigMap{}
		return cm, c.Get(ctx, types.NamespacedName{Namespace: "seedwarden", Name: seedreserve.ConfigMapName(seed)}, cm)
	}

	dry := postReview(t, tc, capacityURL, &admissionv1.AdmissionRequest{
		UID:       "dry",
		Kind:      metav1.GroupVersionKind{Group: "core.gardener.cloud", Version: "v1beta1", Kind: "Shoot"},
		Resource:  metav1.GroupVersionResource{Group: "core.gardener.cloud", Version: "v1beta1", Resource: "shoots"},
		Name:      "webshop",
		Namespace: "garden-dev",
		Operation: admissionv1.Create,
		UserInfo:  admin,
		DryRun:    ptrTo(true),
		Object:    runtime.RawExtension{Raw: setSeed(t, shoot, "aws-eu1")},
	})
	assert.True(t, dry.Allowed, "%+v", dry.Result)
	_, err = configMap("aws-eu1")
	assert.True(t, client.IgnoreNotFound(err) == nil && err != nil, "a dry run reserved something: %v", err)

	r := send(t, tc, capacityURL, "manual", admissionv1.Create, "", setSeed(t, shoot, "aws-eu1"), nil, admin)
	assert.True(t, r.Allowed, "%+v", r.Result)
	cm, err := configMap("aws-eu1")
	require.NoError(t, err, "the placement reserved no place through the API server")
	assert.Contains(t, cm.Data, "garden-dev.webshop")

	r = send(t, tc, capacityURL, "full", admissionv1.Create, "", setSeed(t, shoot, "gcp-us1"), nil, admin)
	assert.False(t, r.Allowed)
	assert.Contains(t, r.Result.Message, `seed "gcp-us1" is full`)

	_, scraped = scrape(readerToken)
	assert.Contains(t, scraped, metrics.ReservationDurationName+`_count{operation="reserve",result="ok"} 1`)
	assert.Contains(t, scraped, metrics.ReservationDurationName+`_count{operation="reserve",result="full"} 1`)
	assert.Contains(t, scraped, metrics.ReservationDurationName+`_count{operation="check",result="ok"} 1`)

	srv.stopAndWait(t, gracefulShutdownTimeout+10*time.Second)
	log := srv.stderr.String()
	assert.Contains(t, log, "Seed capacity is reserved across replicas through the API server")
	assert.NotContains(t, log, readerToken, "a token was logged")
}
