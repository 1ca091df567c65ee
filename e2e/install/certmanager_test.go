package install

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/e2e/proc"
)

// cert-manager's controller and cainjector, the programs themselves
// (hack/cert-manager-bins.sh), run against the test's kube-apiserver as the
// admin. Its webhook does not run: it only validates and defaults
// cert-manager's own objects, which are the shipped ones here.
type certManager struct {
	controller, cainjector *proc.Process
	// The metrics endpoints (http://127.0.0.1:PORT/metrics), where
	// certmanager_certificate_* are exported.
	controllerMetrics, cainjectorMetrics string
}

// startCertManager installs cert-manager's CRDs and starts its controller and
// cainjector (no leader election: one of each); both stop when t ends.
func startCertManager(t *testing.T, e *env) *certManager {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	crds := readDir(t, tools.crds)
	must(t, apply(ctx, e.c, crds))
	for _, crd := range crds {
		waitEstablished(t, e.c, crd.GetName())
	}
	cm := &certManager{}
	start := func(name string, port int, extra ...string) *proc.Process {
		p, err := proc.Start(proc.Options{Name: name, Path: filepath.Join(tools.certManager, name), Log: filepath.Join(e.dir, name+".log"),
			// The cainjector reads KUBECONFIG, not only its flag.
			Env:  []string{"KUBECONFIG=" + e.cp.kubeconfig},
			Args: append([]string{"--kubeconfig", e.cp.kubeconfig, "--leader-elect=false", fmt.Sprintf("--metrics-listen-address=127.0.0.1:%d", port), "--v=2"}, extra...)})
		must(t, err)
		t.Cleanup(func() { _, _, _ = p.Stop(15 * time.Second) })
		return p
	}
	cport, iport := freePort(t), freePort(t)
	// Its health port too is a free one: the default (0.0.0.0:9403) is taken
	// by a second env's controller (tests or packages running at once).
	cm.controller = start("cert-manager-controller", cport, fmt.Sprintf("--internal-healthz-listen-address=127.0.0.1:%d", freePort(t)))
	cm.cainjector = start("cert-manager-cainjector", iport)
	cm.controllerMetrics = fmt.Sprintf("http://127.0.0.1:%d/metrics", cport)
	cm.cainjectorMetrics = fmt.Sprintf("http://127.0.0.1:%d/metrics", iport)
	for _, p := range []struct {
		proc *proc.Process
		url  string
	}{{cm.controller, cm.controllerMetrics}, {cm.cainjector, cm.cainjectorMetrics}} {
		must(t, p.proc.WaitFor(ctx, time.Minute, 200*time.Millisecond, func() error { return httpOK(probeClient, p.url) }))
	}
	return cm
}

// waitEstablished waits until the CRD name is established.
func waitEstablished(t *testing.T, c client.Client, name string) {
	t.Helper()
	eventually(t, 30*time.Second, 100*time.Millisecond, func() error {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(context.Background(), client.ObjectKey{Name: name}, crd); err != nil {
			return err
		}
		for _, cond := range crd.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return nil
			}
		}
		return fmt.Errorf("CRD %s not established", name)
	}, "CRD established")
}
