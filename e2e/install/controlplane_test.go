package install

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/seedwarden/seedwarden/e2e/proc"
	"github.com/seedwarden/seedwarden/hack/devcerts/certgen"
)

// The control plane of one test: etcd and kube-apiserver (envtest's binaries,
// hack/e2e-tools.sh) started here rather than by envtest, so that a test can
// restart kube-apiserver with other flags over the same etcd, serving
// certificate and port, as an operator does to give it its webhook client
// certificate (docs/install.md, Client authentication).

// adminToken is the bearer token of the control plane's admin
// (system:masters), from --token-auth-file.
const adminToken = "seedwarden-install-e2e-admin"

// startTimeout bounds etcd's and kube-apiserver's start.
const startTimeout = 90 * time.Second

type controlPlane struct {
	dir        string // certificates, flags' files, logs
	etcd       *proc.Process
	etcdURL    string
	apiServer  *proc.Process
	port       int
	caPEM      []byte // trusts the serving certificate
	egress     string // the CONNECT proxy's socket, the cluster egress
	admission  string // --admission-control-config-file ("" until set)
	admin      *rest.Config
	kubeconfig string // the admin's, for cert-manager's programs
}

// startControlPlane starts etcd and kube-apiserver, whose cluster egress
// (webhook calls to Services) goes through the CONNECT proxy at the unix
// socket egress; both are stopped when t ends.
func startControlPlane(t *testing.T, egress string) *controlPlane {
	t.Helper()
	cp := &controlPlane{dir: keptDir(t, "control-plane"), egress: egress}
	t.Cleanup(cp.stop)
	cp.startEtcd(t)
	cp.writeFiles(t)
	cp.startAPIServer(t)
	return cp
}

func (cp *controlPlane) startEtcd(t *testing.T) {
	t.Helper()
	client, peer := freePort(t), freePort(t)
	cp.etcdURL = fmt.Sprintf("http://127.0.0.1:%d", client)
	p, err := proc.Start(proc.Options{Name: "etcd", Path: filepath.Join(tools.assets, "etcd"), Log: filepath.Join(cp.dir, "etcd.log"),
		Args: []string{"--data-dir", filepath.Join(cp.dir, "etcd"), "--listen-client-urls", cp.etcdURL, "--advertise-client-urls", cp.etcdURL,
			"--listen-peer-urls", fmt.Sprintf("http://127.0.0.1:%d", peer), "--unsafe-no-fsync"}})
	must(t, err)
	cp.etcd = p
	must(t, p.WaitFor(context.Background(), startTimeout, 100*time.Millisecond, func() error { return httpOK(probeClient, cp.etcdURL+"/health") }))
}

// writeFiles writes what kube-apiserver's flags name: its serving
// certificate, the service-account key, the admin's token, the egress
// configuration, and the admin's kubeconfig.
func (cp *controlPlane) writeFiles(t *testing.T) {
	t.Helper()
	cp.port = freePort(t)
	ca, err := certgen.NewAuthority("install-e2e-apiserver-ca", time.Now())
	must(t, err)
	serving, err := ca.IssueServing([]string{"127.0.0.1", "localhost"}, time.Now())
	must(t, err)
	cp.caPEM = ca.CertPEM
	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	must(t, err)
	files := map[string][]byte{
		"serving.crt": serving.CertPEM, "serving.key": serving.KeyPEM,
		"sa.key":      pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(saKey)}),
		"tokens":      []byte(adminToken + ",admin,admin,system:masters\n"),
		"egress.yaml": fmt.Appendf(nil, egressSelectorConfig, cp.egress),
	}
	for name, data := range files {
		must(t, os.WriteFile(filepath.Join(cp.dir, name), data, 0o600))
	}
	cp.admin = &rest.Config{Host: fmt.Sprintf("https://127.0.0.1:%d", cp.port), BearerToken: adminToken,
		TLSClientConfig: rest.TLSClientConfig{CAData: cp.caPEM}, QPS: 200, Burst: 400}
	cp.kubeconfig = filepath.Join(cp.dir, "admin.kubeconfig")
	must(t, writeKubeconfig(cp.kubeconfig, cp.admin.Host, cp.caPEM, adminToken))
}

// egressSelectorConfig sends the cluster egress (webhook calls to Services,
// among others) and the control-plane egress (webhook calls by URL, as a
// virtual garden registers them) through an HTTP CONNECT proxy on a unix
// socket; etcd's traffic goes direct.
const egressSelectorConfig = `apiVersion: apiserver.k8s.io/v1beta1
kind: EgressSelectorConfiguration
egressSelections:
- name: cluster
  connection:
    proxyProtocol: HTTPConnect
    transport:
      uds:
        udsName: %[1]s
- name: controlplane
  connection:
    proxyProtocol: HTTPConnect
    transport:
      uds:
        udsName: %[1]s
`

func (cp *controlPlane) apiServerArgs() []string {
	f := func(name string) string { return filepath.Join(cp.dir, name) }
	args := []string{
		"--etcd-servers=" + cp.etcdURL,
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", cp.port),
		"--tls-cert-file=" + f("serving.crt"), "--tls-private-key-file=" + f("serving.key"),
		"--token-auth-file=" + f("tokens"), "--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc", "--service-account-key-file=" + f("sa.key"),
		"--service-account-signing-key-file=" + f("sa.key"), "--service-cluster-ip-range=10.0.0.0/24",
		// No controller-manager creates the tokens this plugin wants.
		"--disable-admission-plugins=ServiceAccount",
		"--egress-selector-config-file=" + f("egress.yaml"),
	}
	if cp.admission != "" {
		args = append(args, "--admission-control-config-file="+cp.admission)
	}
	return args
}

func (cp *controlPlane) startAPIServer(t *testing.T) {
	t.Helper()
	p, err := proc.Start(proc.Options{Name: "kube-apiserver", Path: filepath.Join(tools.assets, "kube-apiserver"),
		Args: cp.apiServerArgs(), Log: filepath.Join(cp.dir, "kube-apiserver.log")})
	must(t, err)
	cp.apiServer = p
	probe := rest.CopyConfig(cp.admin)
	probe.Timeout = 2 * time.Second
	hc, err := rest.HTTPClientFor(probe)
	must(t, err)
	must(t, p.WaitFor(context.Background(), startTimeout, 200*time.Millisecond, func() error { return httpOK(hc, cp.admin.Host+"/readyz") }))
}

// restartAPIServer stops kube-apiserver and starts it again with the current
// flags (a new --admission-control-config-file), on the same etcd and port.
func (cp *controlPlane) restartAPIServer(t *testing.T) {
	t.Helper()
	// kube-apiserver 1.36 here does not end on SIGTERM while clients watch
	// (it stops its workers and then waits); what is restarted is its
	// configuration, not its shutdown under test, so it is killed after a
	// grace.
	_, took, err := cp.apiServer.Stop(apiServerStopGrace)
	if err != nil {
		t.Logf("restart: %v", err)
	}
	start := time.Now()
	cp.startAPIServer(t)
	t.Logf("kube-apiserver restarted: stopped in %s, ready in %s", took.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
}

// apiServerStopGrace is how long kube-apiserver gets to end on SIGTERM.
const apiServerStopGrace = 2 * time.Second

func (cp *controlPlane) stop() {
	for _, p := range []*proc.Process{cp.apiServer, cp.etcd} {
		if p != nil {
			_, _, _ = p.Stop(apiServerStopGrace)
		}
	}
}

// writeKubeconfig writes a kubeconfig for server with a bearer token.
func writeKubeconfig(path, server string, caPEM []byte, token string) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["install-e2e"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
	kc.AuthInfos["user"] = &clientcmdapi.AuthInfo{Token: token}
	kc.Contexts["install-e2e"] = &clientcmdapi.Context{Cluster: "install-e2e", AuthInfo: "user"}
	kc.CurrentContext = "install-e2e"
	return clientcmd.WriteToFile(*kc, path)
}

var probeClient = &http.Client{Timeout: 2 * time.Second}

// httpOK GETs url and wants 200.
func httpOK(c *http.Client, url string) error {
	resp, err := c.Get(url)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}
