package main

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seedwarden/seedwarden/internal/config"
	"github.com/seedwarden/seedwarden/internal/handlers"
	"github.com/seedwarden/seedwarden/internal/server"
)

// TestWebhookServerHardening talks to a running `webhook serve` (landscape
// mode: the same webhook server as against a cluster) as clients the API
// server never is: old TLS versions and weak suites, plain HTTP, a client
// that stalls. Each is refused or cut off, and the server keeps serving.
func TestWebhookServerHardening(t *testing.T) {
	certDir := devCertDir(t)
	port, healthPort := freePort(t), freePort(t)
	const readTimeout = 500 * time.Millisecond
	cfg := writeFile(t, "config.yaml", configHeader+fmt.Sprintf(`
server: {port: %d, certDir: %s, readTimeout: %s}
metrics: {bindAddress: "0"}
health: {bindAddress: "127.0.0.1:%d"}
`, port, certDir, readTimeout, healthPort))
	srv := startLandscape(t, cfg, healthPort)

	addr := fmt.Sprintf("127.0.0.1:%d", port)
	pool := devCAPool(t, certDir)
	client := devClient(t, certDir)
	url := fmt.Sprintf("https://localhost:%d%s", port, handlers.MutateShootsPath)
	stillServes := func(t *testing.T) {
		t.Helper()
		resp := admit(t, client, url, "../../examples/shoot.yaml")
		assert.True(t, resp.Allowed)
		assert.Contains(t, string(resp.Patch), `"aws-eu2"`)
	}
	handshake := func(c *tls.Config) (tls.ConnectionState, error) {
		c.RootCAs, c.ServerName = pool, "localhost"
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, c)
		if err != nil {
			return tls.ConnectionState{}, err
		}
		defer conn.Close()
		return conn.ConnectionState(), nil
	}

	t.Run("TLS versions and cipher suites", func(t *testing.T) {
		// TLS 1.0 and 1.1 are refused.
		_, err := handshake(&tls.Config{MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS11}) //nolint:gosec // probing the server's floor
		require.Error(t, err)
		assert.Contains(t, err.Error(), "protocol version")

		// TLS 1.2 without ECDHE or without AEAD is refused.
		for name, suites := range map[string][]uint16{
			"CBC":                 {tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA, tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA, tls.TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA},
			"RSA key exchange":    {tls.TLS_RSA_WITH_AES_128_GCM_SHA256, tls.TLS_RSA_WITH_AES_256_GCM_SHA384},
			"CBC with SHA-256":    {tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256, tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256},
			"3DES and RC4 (weak)": {tls.TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA, tls.TLS_ECDHE_ECDSA_WITH_RC4_128_SHA},
		} {
			_, err := handshake(&tls.Config{MaxVersion: tls.VersionTLS12, CipherSuites: suites}) //nolint:gosec // offering weak suites on purpose
			assert.Error(t, err, "TLS 1.2 with %s suites only was accepted", name)
		}

		// TLS 1.2 with the default suites gets one of the ECDHE AEAD suites.
		st, err := handshake(&tls.Config{MaxVersion: tls.VersionTLS12})
		require.NoError(t, err)
		assert.Equal(t, uint16(tls.VersionTLS12), st.Version)
		assert.True(t, slices.Contains(server.TLS12CipherSuites(), st.CipherSuite), "suite %s", tls.CipherSuiteName(st.CipherSuite))
		for _, id := range server.TLS12CipherSuites() {
			st, err := handshake(&tls.Config{MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{id}})
			if err == nil {
				assert.Equal(t, id, st.CipherSuite)
			} else {
				// The certificate is ECDSA: the RSA-authenticated suites cannot be used with it.
				assert.Contains(t, tls.CipherSuiteName(id), "_RSA_", "%s refused: %v", tls.CipherSuiteName(id), err)
			}
		}

		// A default client gets TLS 1.3, and HTTP/1.1 even when it offers h2.
		st, err = handshake(&tls.Config{NextProtos: []string{"h2", "http/1.1"}})
		require.NoError(t, err)
		assert.Equal(t, uint16(tls.VersionTLS13), st.Version)
		assert.Equal(t, "http/1.1", st.NegotiatedProtocol, "HTTP/2 must stay off")
		stillServes(t)
	})

	t.Run("plain HTTP to the TLS port", func(t *testing.T) {
		conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
		require.NoError(t, err)
		defer conn.Close()
		_, err = fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}", handlers.MutateShootsPath)
		require.NoError(t, err)
		require.NoError(t, conn.SetReadDeadline(time.Now().Add(5*time.Second)))
		got, err := io.ReadAll(conn) // the server answers and closes
		require.NoError(t, err)
		assert.Contains(t, string(got), "400 Bad Request")
		assert.Contains(t, string(got), "Client sent an HTTP request to an HTTPS server.")
		stillServes(t)
	})

	t.Run("a client that stalls after its headers", func(t *testing.T) {
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, &tls.Config{RootCAs: pool, ServerName: "localhost"})
		require.NoError(t, err)
		defer conn.Close()
		start := time.Now()
		_, err = fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 4096\r\n\r\n{\"apiVersion\":", handlers.MutateShootsPath)
		require.NoError(t, err)
		require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
		got, _ := io.ReadAll(conn) // until the server closes the connection
		took := time.Since(start)
		assert.GreaterOrEqual(t, took, readTimeout-100*time.Millisecond, "cut off before server.readTimeout")
		assert.Less(t, took, readTimeout+2*time.Second, "not cut off within server.readTimeout")
		assert.NotContains(t, string(got), `"allowed":true`)
		assert.Contains(t, string(got), "Connection: close", "the connection is not kept for the rest of the body")
		t.Logf("stalled client cut off after %s; it got: %.200q", took.Round(time.Millisecond), got)
		stillServes(t)
	})

	t.Run("unknown path", func(t *testing.T) {
		resp, err := client.Post(fmt.Sprintf("https://localhost:%d/nope", port), "application/json", nil)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, 404, resp.StatusCode)
	})

	srv.stopAndWait(t, 30*time.Second)
}

// Settings that need an API server are refused with --landscape, before
// anything starts: exit code 2 and every problem named.
func TestServeLandscapeRefusesClusterSettings(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		want       []string
	}{
		{"capacity coordination apiserver", "capacity: {coordination: apiserver}\n",
			[]string{`capacity.coordination: "apiserver" reserves through the API server, which --landscape does not have; use "local"`}},
		{"secure metrics", "metrics: {bindAddress: ':8443', secure: true}\n",
			[]string{"metrics.secure: true authenticates and authorizes scrapers through the API server, which --landscape does not have"}},
		{"both", "capacity: {coordination: apiserver}\nmetrics: {bindAddress: ':8443', secure: true}\n",
			[]string{"capacity.coordination:", "metrics.secure:"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := writeFile(t, "config.yaml", configHeader+tc.yaml)
			code, _, errOut := runCmd(t, "serve", "--config", cfg, "--landscape", "../../examples/landscape.yaml")
			assert.Equal(t, exitUsage, code)
			for _, w := range tc.want {
				assert.Contains(t, errOut, w)
			}
		})
	}
	// Secure metrics that are switched off, or coordination without the
	// capacity webhook, need nothing.
	cfg := configHeader + "metrics: {bindAddress: '0', secure: true}\ncapacity: {enabled: false, coordination: apiserver}\n"
	c, err := config.Parse([]byte(cfg))
	require.NoError(t, err)
	assert.NoError(t, checkLandscapeConfig(c))
}

// The reservation namespace: configured, else the pod's; without either,
// coordination apiserver cannot start (exit code 2, the field named).
func TestReservationNamespace(t *testing.T) {
	parse := func(yaml string) *config.Config {
		c, err := config.Parse([]byte(configHeader + yaml))
		require.NoError(t, err)
		return c
	}
	pod := func(ns string) func() string { return func() string { return ns } }

	ns, err := reservationNamespace(parse(""), pod("seedwarden"), logr.Discard())
	require.NoError(t, err)
	assert.Empty(t, ns, "local coordination reserves nothing through the API server")
	ns, err = reservationNamespace(parse("capacity: {coordination: apiserver, reservationNamespace: capacity}"), pod("seedwarden"), logr.Discard())
	require.NoError(t, err)
	assert.Equal(t, "capacity", ns)
	ns, err = reservationNamespace(parse("capacity: {coordination: apiserver}"), pod("seedwarden"), logr.Discard())
	require.NoError(t, err)
	assert.Equal(t, "seedwarden", ns)
	ns, err = reservationNamespace(parse("capacity: {enabled: false, coordination: apiserver}"), pod(""), logr.Discard())
	require.NoError(t, err)
	assert.Empty(t, ns, "no capacity webhook, nothing to reserve")
	_, err = reservationNamespace(parse("capacity: {coordination: apiserver}"), pod(""), logr.Discard())
	require.Error(t, err)
	assert.Equal(t, "capacity.reservationNamespace: required with coordination apiserver when $POD_NAMESPACE is not set and the pod's namespace is unknown", err.Error())
	_, err = reservationNamespace(parse("capacity: {coordination: apiserver}"), nil, logr.Discard())
	require.Error(t, err)
	ns, err = reservationNamespace(parse("capacity: {coordination: apiserver}"), pod(" seedwarden\n"), logr.Discard())
	require.NoError(t, err)
	assert.Equal(t, "seedwarden", ns)
	_, err = reservationNamespace(parse("capacity: {coordination: apiserver}"), pod("Bad"), logr.Discard())
	require.ErrorContains(t, err, `capacity.reservationNamespace: the pod's namespace "Bad" is not valid`)

	t.Setenv(config.PodNamespaceEnv, "from-env")
	assert.Equal(t, "from-env", podNamespace())

	// The capacity webhook gets no reserver at all (not a typed nil) for local.
	r, err := newClusterReserver(parse(""), nil, nil, "", nil, nil, logr.Discard())
	require.NoError(t, err)
	assert.True(t, r == nil, "newClusterReserver returned %#v for local coordination", r)

	// Through the command line: refused before any API server is contacted.
	t.Setenv("POD_NAMESPACE", "")
	cfg := writeFile(t, "config.yaml", configHeader+"capacity: {coordination: apiserver}\nbinding: {enabled: false}\n")
	code, _, errOut := runCmd(t, "serve", "--config", cfg, "--kubeconfig", filepath.Join(t.TempDir(), "none"))
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "invalid configuration: capacity.reservationNamespace: required")
}

// TestBadInput sends what the API server never sends to every path of a
// running server and checks each answer: docs/security.md's table of bad input
// ("Security and robustness") is this test. Answers that controller-runtime
// writes for a body it cannot decode come as HTTP 200 with an
// AdmissionReview whose response has code 400 and no uid (the API server
// would treat one as a failed call and apply the failure policy).
func TestBadInput(t *testing.T) {
	certDir := devCertDir(t)
	port, healthPort := freePort(t), freePort(t)
	cfg := writeFile(t, "config.yaml", configHeader+fmt.Sprintf(`
server: {port: %d, certDir: %s, maxRequestBytes: 8192}
metrics: {bindAddress: "0"}
health: {bindAddress: "127.0.0.1:%d"}
resourceSize: {limits: [{apiGroups: ["*"], apiVersions: ["*"], resources: ["*"], size: 4Ki}]}
`, port, certDir, healthPort))
	srv := startLandscape(t, cfg, healthPort)
	client := devClient(t, certDir)
	base := fmt.Sprintf("https://localhost:%d", port)

	shoot := string(yamlToJSON(t, "../../examples/shoot.yaml"))
	request := func(kind, resource, op, object string) string {
		group, version := "core.gardener.cloud", "v1beta1"
		if kind != "Shoot" {
			group, version = "", "v1"
		}
		return fmt.Sprintf(`{"uid":"bad-1","kind":{"group":%q,"version":%q,"kind":%q},"resource":{"group":%q,"version":%q,"resource":%q},`+
			`"namespace":"garden-dev","name":"webshop","operation":%q,"userInfo":{"username":"jane"}%s}`, group, version, kind, group, version, resource, op, object)
	}
	review := func(req string) string {
		return `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":` + req + `}`
	}
	shootReview := func(object string) string { return review(request("Shoot", "shoots", "CREATE", `,"object":`+object)) }
	replaceOnce := func(s, old, new string) string {
		t.Helper()
		require.Contains(t, s, old)
		return strings.Replace(s, old, new, 1)
	}
	badCIDR := replaceOnce(shoot, `"nodes":"10.250.0.0/16"`, `"nodes":"10.250.0.0/33"`)
	badSelector := replaceOnce(shoot, `"spec":{`, `"spec":{"seedSelector":{"matchExpressions":[{"key":"a","operator":"Bogus","values":["x"]}]},`)
	configMap := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"garden-dev"}}`
	shootPaths := []string{handlers.MutateShootsPath, handlers.WebhookBindingPath, handlers.WebhookCapacityPath, handlers.WebhookSeedPath}
	allPaths := append(slices.Clone(shootPaths), handlers.WebhookResourceSizePath, handlers.WebhookKubeconfigSecretPath, handlers.WebhookNamespaceDeletionPath)

	type want struct {
		status  int    // HTTP status
		allowed bool   // response.allowed
		code    int32  // response.status.code
		message string // in response.status.message (or the body, for non-200)
		warning string // in a warning
		// noUID: the answer is not about the request (there was none to
		// read); the API server would count it as a failed call and apply
		// the failure policy. Otherwise an answer with allowed false is an
		// ordinary denial with the request's uid.
		noUID bool
	}
	for _, tc := range []struct {
		name  string
		paths []string
		body  string
		want  want
	}{
		{"malformed JSON", allPaths, `{"apiVersion":`, want{200, false, 400, "couldn't get version/kind; json parse error: unexpected end of JSON input", "", true}},
		{"not JSON", allPaths, `hello`, want{200, false, 400, "couldn't get version/kind; json parse error", "", true}},
		{"empty body", allPaths, ``, want{200, false, 400, "request body is empty", "", true}},
		{"no request", append(slices.Clone(shootPaths), handlers.WebhookKubeconfigSecretPath, handlers.WebhookNamespaceDeletionPath),
			`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`, want{200, false, 400, "check the webhook configuration", "", true}},
		{"no request (size: nothing to measure)", []string{handlers.WebhookResourceSizePath},
			`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`, want{200, true, 200, "sizes are checked on create and update only", "", true}},
		{"no object", shootPaths,
			review(request("Shoot", "shoots", "CREATE", "")), want{200, false, 400, "admission request carries no object", "", false}},
		{"no object (secret)", []string{handlers.WebhookKubeconfigSecretPath},
			review(request("Secret", "secrets", "CREATE", "")), want{200, false, 400, "admission request carries no object", "", false}},
		{"no object (size)", []string{handlers.WebhookResourceSizePath},
			review(request("Secret", "secrets", "CREATE", "")), want{200, false, 400, "cannot measure the object: object: empty", "", false}},
		{"object of another kind", shootPaths, shootReview(configMap), want{200, false, 400, `object has kind "ConfigMap", expected "Shoot"`, "", false}},
		{"request for another kind", []string{handlers.WebhookKubeconfigSecretPath, handlers.WebhookNamespaceDeletionPath},
			review(request("ConfigMap", "configmaps", "CREATE", `,"object":`+configMap)), want{200, false, 400, "check the webhook configuration", "", false}},
		{"invalid CIDR: no seed fits", []string{handlers.MutateShootsPath}, shootReview(badCIDR),
			want{200, true, 200, "seedwarden: no seed fits", "shoot node network 10.250.0.0/33 intersects", false}},
		{"invalid label selector: no seed fits", []string{handlers.MutateShootsPath}, shootReview(badSelector),
			want{200, true, 200, "seedwarden: no seed fits", `spec.seedSelector: "Bogus" is not a valid label selector operator`, false}},
		{"invalid CIDR, no seed chosen", []string{handlers.WebhookBindingPath, handlers.WebhookCapacityPath}, shootReview(badCIDR), want{200, true, 200, "", "", false}},
		{"body over server.maxRequestBytes", allPaths, shootReview(replaceOnce(shoot, `"spec":{`, `"spec":{"x":"`+strings.Repeat("y", 9000)+`",`)),
			want{413, false, 0, "exceeds the limit of 8192 bytes (server.maxRequestBytes)", "", false}},
	} {
		for _, path := range tc.paths {
			t.Run(tc.name+" "+path, func(t *testing.T) {
				resp, err := client.Post(base+path, "application/json", strings.NewReader(tc.body))
				require.NoError(t, err)
				defer resp.Body.Close()
				b, err := io.ReadAll(resp.Body)
				require.NoError(t, err)
				require.Equal(t, tc.want.status, resp.StatusCode, "%s", b)
				if resp.StatusCode != 200 {
					assert.Contains(t, string(b), tc.want.message)
					return
				}
				var out admissionv1.AdmissionReview
				require.NoError(t, json.Unmarshal(b, &out), "%s", b)
				require.NotNil(t, out.Response, "%s", b)
				r := out.Response
				assert.Equal(t, tc.want.allowed, r.Allowed, "%s", b)
				require.NotNil(t, r.Result, "%s", b)
				assert.Equal(t, tc.want.code, r.Result.Code, "%s", b)
				assert.Contains(t, r.Result.Message, tc.want.message)
				if tc.want.warning != "" {
					require.Len(t, r.Warnings, 1)
					assert.Contains(t, r.Warnings[0], tc.want.warning)
				}
				// At most the schedulerName claim: no seed set or announced.
				assert.NotContains(t, string(r.Patch), "seedName", "bad input placed a Shoot")
				assert.NotContains(t, string(r.Patch), "seedwarden.io/seed", "bad input placed a Shoot")
				if tc.want.noUID {
					assert.Empty(t, r.UID)
				} else {
					assert.Equal(t, types.UID("bad-1"), r.UID)
				}
			})
		}
	}

	// A body over the limit without Content-Length: refused while reading,
	// never reading more than the limit (and one byte).
	pr, pw := io.Pipe()
	go func() {
		_, _ = io.WriteString(pw, shootReview(replaceOnce(shoot, `"spec":{`, `"spec":{"x":"`+strings.Repeat("y", 9000)+`",`)))
		pw.Close()
	}()
	resp, err := client.Post(base+handlers.MutateShootsPath, "application/json", pr)
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
	assert.Contains(t, string(b), "request body exceeds the limit of 8192 bytes (server.maxRequestBytes)")

	// A review other than admission.k8s.io/v1 AdmissionReview is refused on
	// every path (the registrations accept v1 only).
	for _, path := range shootPaths {
		for _, tm := range [][2]string{{"admission.k8s.io/v2", "AdmissionReview"}, {"admission.k8s.io/v1", "Foo"}, {"admission.k8s.io/v1beta1", "AdmissionReview"}} {
			body := fmt.Sprintf(`{"apiVersion":%q,"kind":%q,"request":%s}`, tm[0], tm[1], request("Shoot", "shoots", "CREATE", `,"object":`+shoot))
			resp, err := client.Post(base+path, "application/json", strings.NewReader(body))
			require.NoError(t, err)
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			assert.Equal(t, http.StatusOK, resp.StatusCode)
			assert.Contains(t, string(b), `"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1"`, "%s %v: answered in v1", path, tm)
			var rv admissionv1.AdmissionReview
			require.NoError(t, json.Unmarshal(b, &rv), "%s %v", path, tm)
			require.NotNil(t, rv.Response)
			assert.False(t, rv.Response.Allowed, "%s %v", path, tm)
			require.NotNil(t, rv.Response.Result)
			assert.Equal(t, int32(http.StatusBadRequest), rv.Response.Result.Code)
			assert.Equal(t, fmt.Sprintf(`seedwarden: unsupported AdmissionReview apiVersion %q, kind %q: this webhook accepts admission.k8s.io/v1 AdmissionReview only (admissionReviewVersions: [v1])`, tm[0], tm[1]),
				rv.Response.Result.Message, "%s %v", path, tm)
		}
	}

	// And it still places Shoots.
	r := admit(t, client, base+handlers.MutateShootsPath, "../../examples/shoot.yaml")
	assert.True(t, r.Allowed)
	assert.Contains(t, string(r.Patch), `"aws-eu2"`)
	srv.stopAndWait(t, 30*time.Second)
	assert.NotContains(t, srv.stderr.String(), "panic")
}
