// Package testenv finds the kube-apiserver and etcd binaries that tests run
// through controller-runtime's envtest: KUBEBUILDER_ASSETS, else where
// hack/e2e-tools.sh builds them ($SEEDWARDEN_TOOLS/bin or
// <repo>/.cache/e2e-tools/bin). `make test` always builds them first, so
// tests that need them only skip in the fast `make unit` loop.
package testenv

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Assets returns the directory holding kube-apiserver and etcd, or "".
func Assets() string {
	if d := os.Getenv("KUBEBUILDER_ASSETS"); d != "" {
		return d
	}
	tools := os.Getenv("SEEDWARDEN_TOOLS")
	if tools == "" {
		root := repoRoot()
		if root == "" {
			return ""
		}
		tools = filepath.Join(root, ".cache", "e2e-tools")
	}
	bin, err := filepath.Abs(filepath.Join(tools, "bin"))
	if err != nil {
		return ""
	}
	for _, b := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(bin, b)); err != nil {
			return ""
		}
	}
	return bin
}

// RequireAssets returns Assets or skips the test, saying how to get them.
func RequireAssets(t testing.TB) string {
	t.Helper()
	d := Assets()
	if d == "" {
		t.Skip("no kube-apiserver/etcd: run `make test` (or hack/e2e-tools.sh), or set KUBEBUILDER_ASSETS")
	}
	return d
}

// repoRoot walks up from the working directory (a package directory under
// `go test`) to the directory holding go.mod.
func repoRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// Start starts kube-apiserver and etcd through envtest with the CRDs of the
// given directories installed, and stops them when the test ends. It skips
// in -short mode and when the binaries are missing. The timeouts are
// generous because `make test` runs many packages at once.
func Start(t testing.TB, crdDirs ...string) (*envtest.Environment, *rest.Config) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts kube-apiserver")
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:        crdDirs,
		ErrorIfCRDPathMissing:    len(crdDirs) > 0,
		BinaryAssetsDirectory:    RequireAssets(t),
		ControlPlaneStartTimeout: 2 * time.Minute,
		ControlPlaneStopTimeout:  time.Minute,
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting kube-apiserver and etcd: %v", err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stopping kube-apiserver and etcd: %v", err)
		}
	})
	return env, cfg
}

// Starter is a controller-runtime manager (manager.Manager's Start).
type Starter interface {
	Start(ctx context.Context) error
}

// StartManager starts mgr until the test ends, then stops it and fails the
// test if it does not stop cleanly within 30 s.
func StartManager(ctx context.Context, t *testing.T, mgr Starter) {
	t.Helper()
	mgrCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mgrCtx) }()
	t.Cleanup(func() {
		stop()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("manager: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("manager did not stop")
		}
	})
}
