package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/seedwarden/seedwarden/hack/devcerts/certgen"
	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/cache"
)

// envtestAssets finds kube-apiserver and etcd: KUBEBUILDER_ASSETS, else where
// hack/e2e-tools.sh builds them.
func envtestAssets() string {
	if d := os.Getenv("KUBEBUILDER_ASSETS"); d != "" {
		return d
	}
	d := os.Getenv("SEEDWARDEN_TOOLS")
	if d == "" {
		d = "../../.cache/e2e-tools"
	}
	bin, _ := filepath.Abs(filepath.Join(d, "bin"))
	for _, b := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(bin, b)); err != nil {
			return ""
		}
	}
	return bin
}

// TestServeCluster runs `webhook serve --kubeconfig` against a real
// kube-apiserver serving the Gardener CRDs: informers fill the Store, /readyz
// turns ready, and the webhook places a Shoot from what it watched.
func TestServeCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts kube-apiserver")
	}
	assets := envtestAssets()
	if assets == "" {
		t.Skip("no kube-apiserver/etcd: set KUBEBUILDER_ASSETS or run hack/e2e-tools.sh")
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{"../../e2e/crds"},
		ErrorIfCRDPathMissing: true,
		BinaryAssetsDirectory: assets,
	}
	restCfg, err := env.Start()
	require.NoError(t, err)
	defer func() { assert.NoError(t, env.Stop()) }()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := client.New(restCfg, client.Options{Scheme: cache.NewScheme()})
	require.NoError(t, err)
	for _, ns := range []string{"garden", "garden-dev"} {
		require.NoError(t, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	}
	data, err := os.ReadFile("../../examples/landscape.yaml")
	require.NoError(t, err)
	objs, err := cache.DecodeObjects(data)
	require.NoError(t, err)
	for _, o := range objs {
		createWithStatus(ctx, t, c, o)
	}

	user, err := env.AddUser(envtest.User{Name: "seedwarden", Groups: []string{"system:masters"}}, nil)
	require.NoError(t, err)
	kubeconfig, err := user.KubeConfig()
	require.NoError(t, err)
	kubeconfigPath := writeFile(t, "kubeconfig", string(kubeconfig))

	certDir := t.TempDir()
	require.NoError(t, certgen.Generate(certDir, certgen.DefaultHosts, time.Now()))
	port, metricsPort, healthPort := freePort(t), freePort(t), freePort(t)
	cfg := writeFile(t, "config.yaml", configHeader+fmt.Sprintf(`
server: {port: %d, certDir: %s}
metrics: {bindAddress: "127.0.0.1:%d"}
health: {bindAddress: "127.0.0.1:%d"}
`, port, certDir, metricsPort, healthPort))

	serveCtx, stop := context.WithCancel(ctx)
	defer stop()
	var stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(serveCtx, []string{"serve", "--config", cfg, "--kubeconfig", kubeconfigPath}, io.Discard, &stderr)
	}()
	readyz := fmt.Sprintf("http://127.0.0.1:%d/readyz", healthPort)
	waitReady(t, readyz, time.Minute, done, &stderr)
	assert.Equal(t, http.StatusOK, get(t, readyz+"/informers"))

	client := tlsClient(t, filepath.Join(certDir, certgen.CAFile))
	url := fmt.Sprintf("https://localhost:%d%s", port, MutateShootsPath)
	resp := admit(t, client, url, "../../examples/shoot.yaml")
	assert.True(t, resp.Allowed, "%+v", resp.Result)
	assert.Contains(t, string(resp.Patch), `{"op":"add","path":"/spec/seedName","value":"aws-eu2"}`)
	assert.Contains(t, body(t, fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort)), `seedwarden_seed_usage{seed="aws-eu1"} 4`)

	stop()
	select {
	case code := <-done:
		assert.Equal(t, exitOK, code, stderr.String())
	case <-time.After(gracefulShutdownTimeout + 10*time.Second):
		t.Fatal("server did not stop")
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
