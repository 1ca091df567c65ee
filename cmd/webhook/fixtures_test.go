package main

// Fixtures shared by the tests of package main: servers started in-process,
// their files (configuration, certificates, placement key, kubeconfig), and
// clients that talk to them like the API server and Prometheus would.

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
	"sync"
	"testing"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/seedwarden/seedwarden/hack/devcerts/certgen"
	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/landscape"
)

// Files and processes.

// configHeader starts every test configuration file.
const configHeader = "apiVersion: config.seedwarden.io/v1alpha1\nkind: WebhookConfiguration\n"

// testPlacementKey is the base64 placement key the servers under test share.
const testPlacementKey = "c2VlZHdhcmRlbi10ZXN0LWtleS0wMTIzNDU2Nzg5YWJjZGVm"

// syncBuffer is a bytes.Buffer safe for the server's concurrent log writes.
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

// runCmd runs the command line in-process and returns exit code, stdout, stderr.
func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr syncBuffer
	code := run(context.Background(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// writeFile writes content to name in a new temp dir and returns its path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
}

// placementKeyFile writes testPlacementKey to a temp file and returns its path.
func placementKeyFile(t *testing.T) string {
	t.Helper()
	return writeFile(t, "placement.key", testPlacementKey+"\n")
}

// devCertDir generates the dev CA and serving certificate into a new temp dir and returns it.
func devCertDir(t *testing.T) string {
	t.Helper()
	certDir := t.TempDir()
	require.NoError(t, certgen.Generate(certDir, certgen.DefaultHosts, time.Now()))
	return certDir
}

// freePort returns a local TCP port that was free a moment ago and that no
// earlier call returned: the kernel may hand a closed port out again, and a
// server given the same port for two listeners fails to start.
func freePort(t *testing.T) int {
	t.Helper()
	handedOutMu.Lock()
	defer handedOutMu.Unlock()
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if !handedOut[port] {
			handedOut[port] = true
			return port
		}
	}
	t.Fatal("no free port that was not handed out before")
	return 0
}

// handedOut are the ports freePort has returned in this test binary.
var (
	handedOutMu sync.Mutex
	handedOut   = map[int]bool{}
)

// Servers.

// webhookServer is a `webhook serve` running in-process.
type webhookServer struct {
	stop   context.CancelFunc // stop cancels the server's context
	done   chan int           // done receives run's exit code
	stderr *syncBuffer        // stderr is the server's log
}

// startServe runs `webhook serve args...` in the background until ctx ends or
// stop is called, and waits up to timeout for /readyz on healthPort.
func startServe(ctx context.Context, t *testing.T, healthPort int, timeout time.Duration, args ...string) *webhookServer {
	t.Helper()
	ctx, stop := context.WithCancel(ctx)
	t.Cleanup(stop)
	s := &webhookServer{stop: stop, done: make(chan int, 1), stderr: &syncBuffer{}}
	go func() {
		s.done <- run(ctx, append([]string{"serve"}, args...), io.Discard, s.stderr)
	}()
	waitReady(t, fmt.Sprintf("http://127.0.0.1:%d/readyz", healthPort), timeout, s.done, s.stderr)
	return s
}

// startLandscape serves examples/landscape.yaml with the configuration in cfg
// and waits up to 20s for readiness.
func startLandscape(t *testing.T, cfg string, healthPort int) *webhookServer {
	t.Helper()
	return startServe(context.Background(), t, healthPort, 20*time.Second, "--config", cfg, "--landscape", "../../examples/landscape.yaml")
}

// startCluster serves the cluster of kubeconfig with the configuration in cfg
// and waits up to a minute for readiness.
func startCluster(ctx context.Context, t *testing.T, cfg, kubeconfig string, healthPort int) *webhookServer {
	t.Helper()
	return startServe(ctx, t, healthPort, time.Minute, "--config", cfg, "--kubeconfig", kubeconfig)
}

// stopAndWait stops the server and asserts that it exits with exitOK within timeout.
func (s *webhookServer) stopAndWait(t *testing.T, timeout time.Duration) {
	t.Helper()
	s.stop()
	select {
	case code := <-s.done:
		assert.Equal(t, exitOK, code, s.stderr.String())
	case <-time.After(timeout):
		t.Fatal("server did not stop")
	}
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

// A cluster (envtest).

// createLandscape creates the namespaces, then examples/landscape.yaml's objects with their status.
func createLandscape(ctx context.Context, t *testing.T, c client.Client, namespaces ...string) {
	t.Helper()
	for _, ns := range namespaces {
		require.NoError(t, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	}
	objs, err := landscape.ReadFile("../../examples/landscape.yaml", nil)
	require.NoError(t, err)
	for _, o := range objs {
		createWithStatus(ctx, t, c, o)
	}
}

// createWithStatus creates o and then writes its status, which a create drops.
func createWithStatus(ctx context.Context, t *testing.T, c client.Client, o client.Object) {
	t.Helper()
	want := o.DeepCopyObject().(client.Object)
	require.NoError(t, c.Create(ctx, o), "%s %s", o.GetObjectKind().GroupVersionKind().Kind, o.GetName())
	switch w := want.(type) {
	case *api.Seed:
		o.(*api.Seed).Status = w.Status
	case *api.Shoot:
		o.(*api.Shoot).Status = w.Status
	default:
		return
	}
	require.NoError(t, c.Status().Update(ctx, o), "status of %s", o.GetName())
}

// adminKubeconfig adds the system:masters user "seedwarden" to env and writes its kubeconfig to a temp file.
func adminKubeconfig(t *testing.T, env *envtest.Environment) string {
	t.Helper()
	user, err := env.AddUser(envtest.User{Name: "seedwarden", Groups: []string{"system:masters"}}, nil)
	require.NoError(t, err)
	kubeconfig, err := user.KubeConfig()
	require.NoError(t, err)
	return writeFile(t, "kubeconfig", string(kubeconfig))
}

// Clients.

// devCAPool returns a pool holding the dev CA certificate in certDir.
func devCAPool(t *testing.T, certDir string) *x509.CertPool {
	t.Helper()
	caPEM, err := os.ReadFile(filepath.Join(certDir, certgen.CAFile))
	require.NoError(t, err)
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(caPEM))
	return pool
}

// devClient returns an HTTPS client (10s timeout) that trusts the dev CA in certDir.
func devClient(t *testing.T, certDir string) *http.Client {
	t.Helper()
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: devCAPool(t, certDir)}}}
}

// get GETs url and returns the status code.
func get(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

// body GETs url and returns the body.
func body(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}

// Objects.

// yamlToJSON reads the YAML file and returns it as JSON.
func yamlToJSON(t *testing.T, file string) []byte {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	obj, err := yaml.YAMLToJSON(data)
	require.NoError(t, err)
	return obj
}

// applyJSONPatch applies the JSON patch to object.
func applyJSONPatch(t *testing.T, object, patch []byte) []byte {
	t.Helper()
	p, err := jsonpatch.DecodePatch(patch)
	require.NoError(t, err)
	out, err := p.Apply(object)
	require.NoError(t, err)
	return out
}

// setSeed returns the Shoot object with spec.seedName set to seed.
func setSeed(t *testing.T, object []byte, seed string) []byte {
	t.Helper()
	return applyJSONPatch(t, object, []byte(`[{"op":"add","path":"/spec/seedName","value":"`+seed+`"}]`))
}

// ptrTo returns a pointer to a copy of v.
func ptrTo[T any](v T) *T { return &v }

// AdmissionReviews.

// admit sends the Shoot in file as a CREATE AdmissionReview.
func admit(t *testing.T, client *http.Client, url, file string) *admissionv1.AdmissionResponse {
	t.Helper()
	return exchangeReview(t, client, url, &admissionv1.AdmissionRequest{
		UID:       types.UID("uid-" + filepath.Base(file)),
		Kind:      metav1.GroupVersionKind{Group: "core.gardener.cloud", Version: "v1beta1", Kind: "Shoot"},
		Resource:  metav1.GroupVersionResource{Group: "core.gardener.cloud", Version: "v1beta1", Resource: "shoots"},
		Namespace: "garden-dev",
		Operation: admissionv1.Create,
		Object:    runtime.RawExtension{Raw: yamlToJSON(t, file)},
	})
}

// send posts a Shoot AdmissionReview (oldObject may be nil).
func send(t *testing.T, client *http.Client, url, uid string, op admissionv1.Operation, subResource string, object, oldObject []byte, user authenticationv1.UserInfo) *admissionv1.AdmissionResponse {
	t.Helper()
	req := &admissionv1.AdmissionRequest{
		UID:         types.UID(uid),
		Kind:        metav1.GroupVersionKind{Group: "core.gardener.cloud", Version: "v1beta1", Kind: "Shoot"},
		Resource:    metav1.GroupVersionResource{Group: "core.gardener.cloud", Version: "v1beta1", Resource: "shoots"},
		SubResource: subResource,
		Name:        "webshop",
		Namespace:   "garden-dev",
		Operation:   op,
		UserInfo:    user,
		Object:      runtime.RawExtension{Raw: object},
	}
	if oldObject != nil {
		req.OldObject = runtime.RawExtension{Raw: oldObject}
	}
	return postReview(t, client, url, req)
}

// sendResource posts a CREATE of a cluster-scoped core.gardener.cloud object.
func sendResource(t *testing.T, client *http.Client, url, uid, resource, kind string, object []byte, user authenticationv1.UserInfo) *admissionv1.AdmissionResponse {
	t.Helper()
	return postReview(t, client, url, &admissionv1.AdmissionRequest{
		UID:       types.UID(uid),
		Kind:      metav1.GroupVersionKind{Group: "core.gardener.cloud", Version: "v1beta1", Kind: kind},
		Resource:  metav1.GroupVersionResource{Group: "core.gardener.cloud", Version: "v1beta1", Resource: resource},
		Operation: admissionv1.Create,
		UserInfo:  user,
		Object:    runtime.RawExtension{Raw: object},
	})
}

// sendSecret posts a CREATE of the Secret garden-dev/kubeconfig.
func sendSecret(t *testing.T, client *http.Client, url string, object []byte, user authenticationv1.UserInfo) *admissionv1.AdmissionResponse {
	t.Helper()
	return postReview(t, client, url, &admissionv1.AdmissionRequest{
		UID:       types.UID("secret"),
		Kind:      metav1.GroupVersionKind{Version: "v1", Kind: "Secret"},
		Resource:  metav1.GroupVersionResource{Version: "v1", Resource: "secrets"},
		Name:      "kubeconfig",
		Namespace: "garden-dev",
		Operation: admissionv1.Create,
		UserInfo:  user,
		Object:    runtime.RawExtension{Raw: object},
	})
}

// sendNamespaceDelete posts a namespace DELETE AdmissionReview.
func sendNamespaceDelete(t *testing.T, client *http.Client, url, ns string, user authenticationv1.UserInfo) *admissionv1.AdmissionResponse {
	t.Helper()
	old := []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"` + ns + `"}}`)
	return postReview(t, client, url, &admissionv1.AdmissionRequest{
		UID:       types.UID("ns-" + ns),
		Kind:      metav1.GroupVersionKind{Version: "v1", Kind: "Namespace"},
		Resource:  metav1.GroupVersionResource{Version: "v1", Resource: "namespaces"},
		Name:      ns,
		Operation: admissionv1.Delete,
		UserInfo:  user,
		OldObject: runtime.RawExtension{Raw: old},
	})
}

// postReview posts req like exchangeReview and requires a status with every denial.
func postReview(t *testing.T, client *http.Client, url string, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	t.Helper()
	resp := exchangeReview(t, client, url, req)
	if !resp.Allowed {
		require.NotNil(t, resp.Result)
	}
	return resp
}

// exchangeReview posts req in an admission.k8s.io/v1 AdmissionReview and
// returns the response, requiring HTTP 200 and req's uid.
func exchangeReview(t *testing.T, client *http.Client, url string, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	t.Helper()
	b, err := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request:  req,
	})
	require.NoError(t, err)
	resp, err := client.Post(url, "application/json", bytes.NewReader(b))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var out admissionv1.AdmissionReview
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	require.NotNil(t, out.Response)
	require.Equal(t, req.UID, out.Response.UID)
	return out.Response
}
