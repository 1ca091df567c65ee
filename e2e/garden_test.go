package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/seedwarden/seedwarden/e2e/proc"
)

// The gardener target: instead of envtest's kube-apiserver serving the
// Shoot and Seed CRDs of e2e/crds, the suite starts a real garden, the
// command hack/gardener/cmd/garden (etcd, kube-apiserver and Gardener's own
// gardener-apiserver with its default admission plugins, ShootValidator
// included), and loads a landscape real Gardener accepts.

// GardenEnv selects the garden: "crd" (the default) or "gardener".
const GardenEnv = "SEEDWARDEN_E2E_GARDEN"

// GardenBinEnv overrides the garden binary (default
// .cache/gardener/bin/garden, which hack/gardener-bins.sh builds).
const GardenBinEnv = "SEEDWARDEN_E2E_GARDEN_BIN"

const (
	targetCRD      = "crd"
	targetGardener = "gardener"
)

// gardenTarget is GardenEnv's value for this run.
var gardenTarget = targetCRD

// onGardener says whether the suite runs on a real gardener-apiserver.
func onGardener() bool { return gardenTarget == targetGardener }

func gardenTargetFromEnv() (string, error) {
	switch v := os.Getenv(GardenEnv); v {
	case "", targetCRD:
		return targetCRD, nil
	case targetGardener:
		return targetGardener, nil
	default:
		return "", fmt.Errorf("%s=%q: want %q or %q", GardenEnv, v, targetCRD, targetGardener)
	}
}

// startAPIServer starts the target's API server: envtest's kube-apiserver
// serving e2e/crds (presenting the webhook client certificate), or the
// garden. It returns the admin's rest config.
func (st *suite) startAPIServer(assets string) (*rest.Config, error) {
	if onGardener() {
		cfg, err := st.startGarden(assets)
		if err != nil {
			return nil, fmt.Errorf("starting the garden: %w", err)
		}
		return cfg, nil
	}
	st.env = &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(st.root, "e2e", "crds")},
		ErrorIfCRDPathMissing: true,
		BinaryAssetsDirectory: assets,
	}
	st.env.ControlPlane.GetAPIServer().Configure().
		Set("admission-control-config-file", admissionConfigFile(st.work))
	cfg, err := st.env.Start()
	if err != nil {
		st.env = nil
		return nil, fmt.Errorf("starting kube-apiserver and etcd from %s: %w", assets, err)
	}
	return cfg, nil
}

// gardenerPrerequisites are the objects real Gardener needs before the
// landscape of examples/landscape.yaml: ControllerRegistrations for every
// extension type the landscape uses, the Secrets its Seeds refer to, and
// the CredentialsBinding of the project's Shoots.
const gardenerPrerequisites = "e2e/testdata/gardener/prerequisites.yaml"

// garden is the running garden process.
type garden struct {
	proc *proc.Process
	out  string // its stdout and stderr: "ready", gardener-apiserver's log
	// children are etcd and kube-apiserver, read once the garden is ready:
	// envtest starts each in a process group of its own, so only they can
	// be signalled should the garden die without stopping them.
	children []int
	// pprofAddr serves gardener-apiserver's CPU profiles (net/http/pprof of
	// the garden process) when BenchProfilesEnv is set; else "".
	pprofAddr string
}

// gardenStartTimeout bounds the garden's start (etcd, kube-apiserver,
// gardener-apiserver and its APIServices available).
const gardenStartTimeout = 3 * time.Minute

// gardenReadyLine starts the line the garden prints once it serves.
const gardenReadyLine = "ready "

// startGarden starts the garden with kube-apiserver and gardener-apiserver
// presenting the suite's client certificate to webhooks (the admission
// configuration setupClientAuth wrote: gardener-apiserver calls the Shoot
// webhooks itself), and returns the admin's rest config.
func (st *suite) startGarden(assets string) (*rest.Config, error) {
	bin := os.Getenv(GardenBinEnv)
	if bin == "" {
		bin = filepath.Join(st.root, ".cache", "gardener", "bin", "garden")
	}
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("the garden binary (bash hack/gardener-bins.sh builds it): %w", err)
	}
	kubeconfig := st.gardenKubeconfig()
	admission := admissionConfigFile(st.work)
	g := &garden{out: filepath.Join(st.work, "garden.out")}
	env := []string{"KUBEBUILDER_ASSETS=" + assets}
	addr, err := gardenPprofAddr()
	if err != nil {
		return nil, err
	}
	if addr != "" {
		g.pprofAddr = addr
		env = append(env, gardenPprofEnv+"="+addr)
	}
	// If this test binary dies without its teardown, the garden gets
	// SIGTERM and stops etcd and kube-apiserver itself.
	p, err := proc.Start(proc.Options{Name: "garden", Path: bin, Log: g.out, DeathSignal: syscall.SIGTERM,
		Env: env,
		Args: []string{"-kubeconfig", kubeconfig,
			"-kube-apiserver-arg", "admission-control-config-file=" + admission,
			"-gardener-apiserver-arg", "--admission-control-config-file=" + admission,
			"-user", st.gardenerSchedulerUserFlag()}})
	if err != nil {
		return nil, err
	}
	g.proc = p
	st.garden = g
	err = p.WaitFor(context.Background(), gardenStartTimeout, 200*time.Millisecond, func() error {
		if p.LogHas(gardenReadyLine) {
			return nil
		}
		return errors.New("no line " + strings.TrimSpace(gardenReadyLine) + " yet")
	})
	if err != nil {
		return nil, fmt.Errorf("the garden: %w", err)
	}
	g.children = childPIDs(p.Pid())
	return clientcmd.BuildConfigFromFlags("", kubeconfig)
}

// stop ends the garden: SIGTERM (it stops gardener-apiserver,
// kube-apiserver and etcd); after a minute SIGKILL to it and to the process
// groups of etcd and kube-apiserver.
func (g *garden) stop() error {
	if g == nil || g.proc == nil {
		return nil
	}
	if _, _, err := g.proc.Stop(time.Minute); err != nil {
		for _, pid := range g.children {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		}
		return fmt.Errorf("the garden: %w", err)
	}
	return nil
}

// childPIDs lists the child processes of pid (of all its threads), from
// /proc.
func childPIDs(pid int) []int {
	files, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	var out []int
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, field := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(field); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// tail is the last n lines of a file, for error messages.
func tail(path string, n int) string {
	lines, err := readLines(path, 0)
	if err != nil {
		return err.Error()
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// loadGardenerLandscape creates the namespaces, the prerequisites and
// examples/landscape.yaml as they are written (unstructured: every field
// real Gardener validates is kept), statuses through the status
// subresource.
func (st *suite) loadGardenerLandscape(ctx context.Context) error {
	if err := st.createNamespaces(ctx); err != nil {
		return err
	}
	n := 0
	for _, rel := range []string{gardenerPrerequisites, "examples/landscape.yaml"} {
		objs, err := readManifestObjects(filepath.Join(st.root, rel))
		if err != nil {
			return err
		}
		for _, o := range objs {
			if o.GetKind() == "Shoot" {
				completeForGardener(o)
			}
			if err := createUnstructuredWithStatus(ctx, st.c, o); err != nil {
				return fmt.Errorf("%s: %w", rel, err)
			}
		}
		n += len(objs)
	}
	logf("gardener landscape loaded: %d objects from %s and examples/landscape.yaml", n, gardenerPrerequisites)
	return nil
}

// createNamespaces creates the suite's namespaces; the project namespace is
// labelled as Gardener's project controller labels it (the resource-size
// webhook selects namespaces by it).
func (st *suite) createNamespaces(ctx context.Context) error {
	for _, ns := range []string{gardenNamespace, projectNamespace, seedwardenNamespace} {
		obj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
		if ns == projectNamespace {
			obj.Labels = map[string]string{"gardener.cloud/role": "project", "project.gardener.cloud/name": "dev"}
		}
		if err := st.c.Create(ctx, obj); err != nil {
			return fmt.Errorf("namespace %s: %w", ns, err)
		}
	}
	return nil
}

// createUnstructuredWithStatus creates o, then writes its status (which a
// create drops) through the status subresource.
func createUnstructuredWithStatus(ctx context.Context, c client.Client, o *unstructured.Unstructured) error {
	status, hasStatus := o.Object["status"]
	if err := c.Create(ctx, o); err != nil {
		return fmt.Errorf("creating %s %s: %w", o.GetKind(), o.GetName(), err)
	}
	if !hasStatus {
		return nil
	}
	o.Object["status"] = status
	if err := c.Status().Update(ctx, o); err != nil {
		return fmt.Errorf("status of %s %s: %w", o.GetKind(), o.GetName(), err)
	}
	return nil
}

// machineTypes are the machine types of the CloudProfiles of
// examples/landscape.yaml, by profile (provider type).
var machineTypes = map[string]string{"aws": "m5.large", "gcp": "n2-standard-4"}

// completeForGardener fills in what gardener-apiserver requires of a Shoot
// and the existing Shoots of examples/landscape.yaml leave out (they show
// only the fields placement reads): the CredentialsBinding named like the
// provider type, the Kubernetes version, networking, and each worker's
// machine type and size.
func completeForGardener(u *unstructured.Unstructured) {
	provider, _, _ := unstructured.NestedString(u.Object, "spec", "provider", "type")
	setDefault(u, provider, "spec", "credentialsBindingName")
	setDefault(u, "1.33.4", "spec", "kubernetes", "version")
	if _, ok, _ := unstructured.NestedMap(u.Object, "spec", "networking"); !ok {
		must(unstructured.SetNestedMap(u.Object, map[string]any{
			"type": "calico", "nodes": "10.250.0.0/16", "ipFamilies": []any{"IPv4"},
		}, "spec", "networking"))
	}
	workers, _, _ := unstructured.NestedSlice(u.Object, "spec", "provider", "workers")
	for _, w := range workers {
		w := w.(map[string]any)
		if _, ok := w["machine"]; !ok {
			w["machine"] = map[string]any{"type": machineTypes[provider]}
		}
		if _, ok := w["minimum"]; !ok {
			w["minimum"], w["maximum"] = int64(1), int64(3)
		}
	}
	if len(workers) > 0 {
		must(unstructured.SetNestedSlice(u.Object, workers, "spec", "provider", "workers"))
	}
}

func setDefault(u *unstructured.Unstructured, value string, path ...string) {
	if v, _, _ := unstructured.NestedString(u.Object, path...); v == "" && value != "" {
		must(unstructured.SetNestedField(u.Object, value, path...))
	}
}
