package install

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// EnableEnv must be "1" for the package to run, as for ./e2e (`make e2e`).
const EnableEnv = "SEEDWARDEN_E2E"

// Where the programs come from; each unset one is built or looked up by its
// script (once per machine; a warm call returns at once).
const (
	// CertManagerBinEnv: the folder with cert-manager-controller and
	// cert-manager-cainjector (hack/cert-manager-bins.sh).
	CertManagerBinEnv = "SEEDWARDEN_E2E_CERT_MANAGER_BIN"
	// CertManagerCRDsEnv: cert-manager's CRDs (hack/cert-manager-bins.sh --crds).
	CertManagerCRDsEnv = "SEEDWARDEN_E2E_CERT_MANAGER_CRDS"
)

// tools is what TestMain found or built once for every test.
var tools struct {
	root        string // repository root
	work        string // seedwarden's binary, the renderings
	assets      string // kube-apiserver and etcd (KUBEBUILDER_ASSETS)
	certManager string // cert-manager-controller, cert-manager-cainjector
	crds        string // cert-manager's CRDs
	webhook     string // seedwarden's binary
	renderings  string // kustomize.yaml, helm-default.yaml, helm-options.yaml
}

// skipReason is set when the package does not run.
var skipReason string

func TestMain(m *testing.M) {
	if os.Getenv(EnableEnv) != "1" {
		skipReason = "install e2e: set " + EnableEnv + "=1 to run it (make e2e)"
		os.Exit(m.Run())
	}
	ctrllog.SetLogger(logr.Discard())
	start := time.Now()
	if err := setup(); err != nil {
		fmt.Fprintf(os.Stderr, "install e2e: setup failed after %s: %v\n", time.Since(start).Round(time.Millisecond), err)
		os.Exit(1)
	}
	fmt.Printf("install e2e: setup done in %s (work %s)\n", time.Since(start).Round(time.Millisecond), tools.work)
	code := m.Run()
	if code == 0 {
		os.RemoveAll(tools.work)
	}
	os.Exit(code)
}

// need skips t unless the package runs.
func need(t *testing.T) {
	t.Helper()
	if skipReason != "" {
		t.Skip(skipReason)
	}
}

// setup finds the tools and builds seedwarden and the renderings, the slow
// parts side by side.
func setup() error {
	var err error
	if tools.root, err = filepath.Abs("../.."); err != nil {
		return err
	}
	if tools.work, err = os.MkdirTemp("", "seedwarden-install-e2e-"); err != nil {
		return err
	}
	tools.webhook = filepath.Join(tools.work, "webhook")
	tools.renderings = filepath.Join(tools.work, "renderings")
	steps := []func() error{
		func() (err error) {
			tools.assets, err = fromEnvOrScript("KUBEBUILDER_ASSETS", "hack/e2e-tools.sh")
			return
		},
		func() (err error) {
			tools.certManager, err = fromEnvOrScript(CertManagerBinEnv, "hack/cert-manager-bins.sh")
			return
		},
		func() (err error) {
			tools.crds, err = fromEnvOrScript(CertManagerCRDsEnv, "hack/cert-manager-bins.sh", "--crds")
			return
		},
		func() error { return run(tools.root, goTool(), "build", "-o", tools.webhook, "./cmd/webhook") },
		func() error {
			return run(filepath.Join(tools.root, "hack", "chartcheck"), goTool(), "run", "./cmd/render", "-out", tools.renderings)
		},
	}
	errs := make([]error, len(steps))
	var wg sync.WaitGroup
	for i, step := range steps {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = step() }()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// fromEnvOrScript is the folder $name names, else the last line the script
// prints.
func fromEnvOrScript(name, script string, args ...string) (string, error) {
	if d := os.Getenv(name); d != "" {
		return d, nil
	}
	cmd := exec.Command("bash", append([]string{filepath.Join(tools.root, script)}, args...)...)
	cmd.Dir = tools.root
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s is not set and %s failed: %w", name, script, err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return strings.TrimSpace(lines[len(lines)-1]), nil
}

func run(dir, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s (in %s): %v\n%s", name, strings.Join(args, " "), dir, err, out)
	}
	return nil
}

// goTool is the go command that runs this test.
func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go") //nolint:staticcheck // a fallback only
}

// freePort is a port on 127.0.0.1 nothing listens on now, and that no
// earlier call of this run returned (the kernel may hand a closed one out
// again).
func freePort(t *testing.T) int {
	t.Helper()
	handedOutMu.Lock()
	defer handedOutMu.Unlock()
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		must(t, err)
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

var (
	handedOutMu sync.Mutex
	handedOut   = map[int]bool{}
)

// must fails t at once on err (setup steps, where nothing after makes sense).
func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
