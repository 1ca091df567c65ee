package e2e

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/seedwarden/seedwarden/hack/devcerts/certgen"
	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/autoscalingapi"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/landscape"
	"github.com/seedwarden/seedwarden/internal/seedmanagement"
)

// EnableEnv must be "1" for the suite to run; `make e2e` sets it.
const EnableEnv = "SEEDWARDEN_E2E"

// DirectEnv = "1" makes the webhook talk to the API server directly instead
// of through the test's proxy (the restart test then cannot hold the
// webhook's initial lists back and checks less).
const DirectEnv = "SEEDWARDEN_E2E_DIRECT"

// PlacementEnv selects placement.mode of the webhooks under test: "binding"
// (the default, as in internal/config) or "patch". `make e2e` runs the suite
// once in each.
const PlacementEnv = "SEEDWARDEN_E2E_PLACEMENT"

// Namespaces the suite creates. projectNamespace belongs to Project "dev" of
// examples/landscape.yaml.
const (
	gardenNamespace     = "garden"
	projectNamespace    = "garden-dev"
	seedwardenNamespace = "seedwarden"
)

// testLabel marks every object a test creates, with the test's name.
const testLabel = "e2e.seedwarden.io/test"

// s is the running environment; nil when the suite is disabled.
var s *suite

// skipReason says why s is nil.
var skipReason string

// suite is everything TestMain sets up once.
type suite struct {
	root     string // repository root
	work     string // temporary directory: binary, config, certs, kubeconfig, logs
	keepWork bool   // keep work after the run (a failure, or SEEDWARDEN_E2E_KEEP=1)

	env    *envtest.Environment // the CRD target's API server
	garden *garden              // the gardener target's garden process
	admin  *rest.Config         // system:masters
	scheme *k8sruntime.Scheme
	c      client.Client // admin client
	cs     kubernetes.Interface

	proxy       *apiProxy    // between the webhook and the API server (nil with DirectEnv)
	webhookUser *rest.Config // the webhook's own user, as the shipped ServiceAccount

	// The certificate kube-apiserver presents to the webhooks (its
	// AdmissionConfiguration), which the suite's own direct calls present
	// too: server.clientAuth is on (clientauth_test.go).
	clientCA    *certgen.Authority
	clientCerts []tls.Certificate

	bin        string // webhook binary
	configPath string
	kubeconfig string
	certDir    string
	logPath    string // the webhook's stdout and stderr, across restarts
	ports      ports
	sizeLimit  *sizeLimitConfig // nil: no size limit configured (field unknown)

	procMu sync.Mutex
	proc   *webhookProcess

	// Webhook registration (registration_test.go).
	caBundle   []byte            // the CA bundle currently registered
	registered map[string]string // webhook name -> path, for webhooks registered
	skipped    map[string]string // webhook name -> path, not served (404)
}

type ports struct{ webhook, metrics, health int }

func TestMain(m *testing.M) {
	if os.Getenv(EnableEnv) != "1" {
		skipReason = "end-to-end suite: set " + EnableEnv + "=1 to run it (make e2e)"
		os.Exit(m.Run())
	}
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) (code int) {
	start := time.Now()
	// The suite's own controller-runtime clients: their log lines (API
	// warnings, which the tests collect themselves) are not wanted, and
	// without a logger controller-runtime complains after 30s.
	ctrllog.SetLogger(logr.Discard())
	st := &suite{}
	mode, err := placementModeFromEnv()
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 1
	}
	placementMode = mode
	if gardenTarget, err = gardenTargetFromEnv(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 1
	}
	logf("placement mode %q (%s), target %q (%s)", placementMode, PlacementEnv, gardenTarget, GardenEnv)
	var once sync.Once
	teardown := func() { once.Do(st.teardown) }
	defer teardown()

	// Ctrl-C or a CI runner's SIGTERM: stop the processes before dying.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-sigs
		fmt.Fprintf(os.Stderr, "e2e: %s: stopping the webhook, kube-apiserver and etcd\n", sig)
		teardown()
		os.Exit(130)
	}()

	if err := st.setup(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: setup failed after %s: %v\n", time.Since(start).Round(time.Millisecond), err)
		st.dumpLog(os.Stderr, 200)
		st.keepWork = true
		return 1
	}
	logf("setup done in %s", time.Since(start).Round(time.Millisecond))
	s = st
	code = m.Run()
	if code == 0 {
		// Every webhook process logged here ran as the shipped
		// ServiceAccount: a request its RBAC refused is a suite failure
		// even where no test noticed (an event not recorded, say).
		if lines := st.forbiddenRequests(); len(lines) > 0 {
			fmt.Fprintf(os.Stderr, "e2e: the shipped RBAC refused %d requests of the webhook:\n  %s\n", len(lines), strings.Join(lines, "\n  "))
			code = 1
		} else {
			logf("no request of the webhook was refused by the shipped RBAC")
		}
	}
	if code != 0 {
		// Failed tests have shown the webhook's log of their own time.
		fmt.Fprintf(os.Stderr, "e2e: the webhook's whole log: %s\n", st.logPath)
		st.keepWork = true
	}
	logf("suite done in %s", time.Since(start).Round(time.Millisecond))
	return code
}

// logf prints a progress line of the suite (not of a test).
func logf(format string, args ...any) {
	fmt.Printf("e2e: "+format+"\n", args...)
}

// need returns the suite or skips t when it is disabled, or when t is a
// test of the CRD target that the gardener target skips (gardenerSkips).
func need(t *testing.T) *suite {
	t.Helper()
	if s == nil {
		t.Skip(skipReason)
	}
	if onGardener() {
		if why, skip := gardenerSkips[t.Name()]; skip {
			t.Skipf("not on the gardener target: %s (e2e/README.md)", why)
		}
	}
	return s
}

func (st *suite) setup() error {
	var err error
	if st.root, err = filepath.Abs(".."); err != nil {
		return err
	}
	if st.work, err = os.MkdirTemp("", "seedwarden-e2e-"); err != nil {
		return err
	}
	st.logPath = filepath.Join(st.work, "webhook.log")
	st.bin = filepath.Join(st.work, "webhook")
	logf("work directory %s", st.work)

	assets, err := envtestAssets(st.root)
	if err != nil {
		return err
	}

	// The webhook binary builds while the control plane starts.
	built := make(chan error, 1)
	go func() {
		t0 := time.Now()
		cmd := exec.Command(goTool(), "build", "-o", st.bin, "./cmd/webhook")
		cmd.Dir = st.root
		out, err := cmd.CombinedOutput()
		if err != nil {
			built <- fmt.Errorf("go build ./cmd/webhook: %v\n%s", err, out)
			return
		}
		logf("webhook built in %s", time.Since(t0).Round(time.Millisecond))
		built <- nil
	}()

	t0 := time.Now()
	if err := st.setupClientAuth(); err != nil {
		<-built
		return err
	}
	cfg, err := st.startAPIServer(assets)
	if err != nil {
		<-built
		return err
	}
	logf("%s target started in %s (%s)", gardenTarget, time.Since(t0).Round(time.Millisecond), cfg.Host)
	// The load of the rotation test must not be throttled on the client side.
	cfg.QPS, cfg.Burst = 500, 1000
	st.admin = cfg
	st.scheme = cache.NewScheme()
	// The autoscaler's resource and its target, and the CRD of the first.
	utilruntime.Must(autoscalingapi.AddToScheme(st.scheme))
	utilruntime.Must(seedmanagement.AddToScheme(st.scheme))
	utilruntime.Must(apiextensionsv1.AddToScheme(st.scheme))
	if st.c, err = client.New(cfg, client.Options{Scheme: st.scheme}); err != nil {
		return err
	}
	if st.cs, err = kubernetes.NewForConfig(cfg); err != nil {
		return err
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if onGardener() {
		err = st.loadGardenerLandscape(ctx)
	} else {
		err = st.loadLandscape(ctx)
	}
	if err != nil {
		return err
	}
	if err := st.applyShippedRBAC(ctx); err != nil {
		return err
	}
	if err := st.installAutoscalerCRD(ctx); err != nil {
		return err
	}
	if err := st.installSeedDrainCRD(ctx); err != nil {
		return err
	}
	if err := st.installReportCRD(ctx); err != nil {
		return err
	}
	// Real Gardener has ShootValidator itself.
	if !onGardener() {
		if err := st.applyShootValidatorPolicy(ctx); err != nil {
			return err
		}
	}
	if err := st.writeKubeconfig(); err != nil {
		return err
	}
	if err := st.writeCertsAndConfig(); err != nil {
		return err
	}
	if err := <-built; err != nil {
		return err
	}
	t0 = time.Now()
	if err := st.startWebhook(); err != nil {
		return err
	}
	if err := st.waitReady(ctx, time.Minute); err != nil {
		return err
	}
	logf("webhook ready in %s", time.Since(t0).Round(time.Millisecond))
	return st.registerWebhooks(ctx)
}

// envtestAssets is KUBEBUILDER_ASSETS, else what hack/e2e-tools.sh builds
// (once per machine; it returns at once when the binaries are current).
func envtestAssets(root string) (string, error) {
	if d := os.Getenv("KUBEBUILDER_ASSETS"); d != "" {
		return d, nil
	}
	logf("KUBEBUILDER_ASSETS is not set: running hack/e2e-tools.sh (a first build takes minutes)")
	cmd := exec.Command("bash", filepath.Join(root, "hack", "e2e-tools.sh"))
	cmd.Dir = root
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("hack/e2e-tools.sh: %w", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return strings.TrimSpace(lines[len(lines)-1]), nil
}

// goTool is the go command that runs this test.
func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go") //nolint:staticcheck // a fallback only
}

// loadLandscape creates the namespaces and examples/landscape.yaml: CloudProfiles,
// Project, region config, Seeds (status through the status subresource) and
// existing Shoots.
func (st *suite) loadLandscape(ctx context.Context) error {
	if err := st.createNamespaces(ctx); err != nil {
		return err
	}
	objs, err := landscape.ReadFile(filepath.Join(st.root, "examples", "landscape.yaml"), nil)
	if err != nil {
		return err
	}
	for _, o := range objs {
		if err := createWithStatus(ctx, st.c, o); err != nil {
			return err
		}
	}
	logf("landscape loaded: %d objects from examples/landscape.yaml", len(objs))
	return nil
}

// createWithStatus creates o and then writes its status, which a create drops.
func createWithStatus(ctx context.Context, c client.Client, o client.Object) error {
	want := o.DeepCopyObject().(client.Object)
	if err := c.Create(ctx, o); err != nil {
		return fmt.Errorf("creating %T %s: %w", o, o.GetName(), err)
	}
	switch w := want.(type) {
	case *api.Seed:
		o.(*api.Seed).Status = w.Status
	case *api.Shoot:
		o.(*api.Shoot).Status = w.Status
	default:
		return nil
	}
	if err := c.Status().Update(ctx, o); err != nil {
		return fmt.Errorf("status of %T %s: %w", o, o.GetName(), err)
	}
	return nil
}

// writeKubeconfig gives the webhook its own user and a kubeconfig: through
// the proxy (plain HTTP on localhost; the proxy authenticates as that user),
// or straight to the API server with DirectEnv. The user (system:masters,
// as envtest can only make those) impersonates the shipped ServiceAccount,
// so the shipped RBAC is what the webhook may do (rbac_test.go).
func (st *suite) writeKubeconfig() error {
	if onGardener() {
		// The garden's admin user (system:masters) impersonates.
		st.webhookUser = asServiceAccount(st.admin)
	} else {
		user, err := st.env.AddUser(envtest.User{Name: "seedwarden", Groups: []string{"system:masters"}}, nil)
		if err != nil {
			return err
		}
		st.webhookUser = asServiceAccount(user.Config())
	}
	var err error
	st.kubeconfig = filepath.Join(st.work, "kubeconfig")
	if os.Getenv(DirectEnv) == "1" {
		return st.writeKubeconfigFile(st.kubeconfig, nil)
	}
	if st.proxy, err = startProxy(st.webhookUser); err != nil {
		return err
	}
	return st.writeKubeconfigFile(st.kubeconfig, st.proxy)
}

// writeKubeconfigFile writes a kubeconfig for the webhook's user: through
// proxy, or straight to the API server when proxy is nil.
func (st *suite) writeKubeconfigFile(path string, proxy *apiProxy) error {
	kc := clientcmdapi.NewConfig()
	if proxy == nil {
		kc.Clusters["e2e"] = &clientcmdapi.Cluster{
			Server:                   st.webhookUser.Host,
			CertificateAuthorityData: st.webhookUser.CAData,
		}
		kc.AuthInfos["seedwarden"] = &clientcmdapi.AuthInfo{
			ClientCertificateData: st.webhookUser.CertData,
			ClientKeyData:         st.webhookUser.KeyData,
			Impersonate:           st.webhookUser.Impersonate.UserName,
			ImpersonateGroups:     st.webhookUser.Impersonate.Groups,
		}
	} else {
		kc.Clusters["e2e"] = &clientcmdapi.Cluster{Server: proxy.URL()}
		kc.AuthInfos["seedwarden"] = &clientcmdapi.AuthInfo{}
	}
	kc.Contexts["e2e"] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: "seedwarden"}
	kc.CurrentContext = "e2e"
	return clientcmd.WriteToFile(*kc, path)
}

// writeCertsAndConfig makes the serving certificate (CA, cert, key in
// certDir) and the webhook's configuration file.
func (st *suite) writeCertsAndConfig() error {
	st.certDir = filepath.Join(st.work, "certs")
	if err := certgen.Generate(st.certDir, servingHosts, time.Now()); err != nil {
		return err
	}
	ca, err := os.ReadFile(filepath.Join(st.certDir, certgen.CAFile))
	if err != nil {
		return err
	}
	st.caBundle = ca
	for _, p := range []*int{&st.ports.webhook, &st.ports.metrics, &st.ports.health} {
		if *p, err = freePort(); err != nil {
			return err
		}
	}
	// The placement token's HMAC key, as the Secret seedwarden-placement-key
	// would hold it: base64 of 32 random bytes.
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return err
	}
	if err := os.WriteFile(placementKeyFile(st.work), []byte(base64.StdEncoding.EncodeToString(key)+"\n"), 0o600); err != nil {
		return err
	}
	cfg, size, err := webhookConfig(st.ports, st.certDir, st.work)
	if err != nil {
		return err
	}
	st.sizeLimit = size
	st.configPath = filepath.Join(st.work, "config.yaml")
	return os.WriteFile(st.configPath, []byte(cfg), 0o644)
}

// servingHosts are the SANs of the serving certificate: the API server calls
// https://127.0.0.1:<port>.
var servingHosts = []string{"127.0.0.1", "localhost"}

func (st *suite) teardown() {
	var errs []error
	st.procMu.Lock()
	if p := st.proc; p != nil {
		if err := p.Kill(); err != nil {
			errs = append(errs, err)
		}
	}
	st.procMu.Unlock()
	if st.proxy != nil {
		st.proxy.Close()
	}
	if st.env != nil {
		if err := st.env.Stop(); err != nil {
			errs = append(errs, fmt.Errorf("stopping kube-apiserver and etcd: %w", err))
		}
	}
	if err := st.garden.stop(); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: teardown: %v\n", err)
	}
	if st.work == "" {
		return
	}
	if st.keepWork || os.Getenv("SEEDWARDEN_E2E_KEEP") == "1" {
		fmt.Fprintf(os.Stderr, "e2e: kept %s (webhook.log, config.yaml, certs, kubeconfig)\n", st.work)
		return
	}
	_ = os.RemoveAll(st.work)
}
