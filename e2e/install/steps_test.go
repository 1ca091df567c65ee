package install

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/seedwarden/seedwarden/hack/devcerts/certgen"
)

// The install of docs/install.md, step by step, on an env.

// Renderings of hack/chartcheck's cmd/render: the kustomize base, the chart
// with default values, and the chart with every option on (an existing
// ClusterIssuer among them).
const (
	renderingBase    = "kustomize.yaml"
	renderingDefault = "helm-default.yaml"
	renderingOptions = "helm-options.yaml"
)

// certReadyTimeout bounds the wait for cert-manager to issue every
// Certificate of an install (18 s measured when this was written).
const certReadyTimeout = 2 * time.Minute

// caInjectTimeout bounds the wait for the cainjector to fill in caBundle.
const caInjectTimeout = time.Minute

// installation is seedwarden installed on an env.
type installation struct {
	rendering string
	namespace string
	objs      []*unstructured.Unstructured
	pod       *pod
	// clientCert is kube-apiserver's webhook client certificate (nil:
	// client authentication is off).
	clientCert *tls.Certificate
	registered time.Time // when the webhook configurations were applied
}

// readRendering reads one of the renderings.
func readRendering(t *testing.T, name string) []*unstructured.Unstructured {
	t.Helper()
	return readObjects(t, filepath.Join(tools.renderings, name))
}

// installUnchecked installs objs (a rendering, maybe edited by the test) in
// the order docs/install.md gives: the namespace and the placement key,
// everything but the webhook configurations, the Certificates Ready, the
// replica ready, the API server's webhook client certificate, then the
// webhook configurations.
func (e *env) installUnchecked(t *testing.T, rendering string, objs []*unstructured.Unstructured) *installation {
	t.Helper()
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	in := &installation{rendering: rendering, objs: objs, namespace: selectObjects(objs, ofKind("Deployment"))[0].GetNamespace()}
	e.existingIssuers(ctx, t, objs)

	// Step 3: the namespace (deploy/manifests/namespace.yaml) and the key.
	must(t, apply(ctx, e.c, readObjects(t, filepath.Join(tools.root, "deploy", "manifests", "namespace.yaml"))))
	key := make([]byte, 32)
	_, err := rand.Read(key)
	must(t, err)
	must(t, e.c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: in.namespace, Name: "seedwarden-placement-key"},
		StringData: map[string]string{"key": base64.StdEncoding.EncodeToString(key)}}))

	// Step 4: all but the webhook configurations; the Certificates Ready.
	must(t, apply(ctx, e.c, selectObjects(objs, func(o *unstructured.Unstructured) bool { return !isWebhookConfiguration(o) })))
	e.waitCertificatesReady(t, objs)
	t.Logf("%s: every Certificate Ready %s after the apply", rendering, time.Since(start).Round(time.Millisecond))

	// The replica (rollout status), then the API server's client certificate.
	in.pod = startPod(t, e, in)
	in.clientCert = e.giveAPIServerClientCert(ctx, t, in)

	// The webhook configurations, and the CA in each.
	must(t, apply(ctx, e.c, selectObjects(objs, isWebhookConfiguration)))
	in.registered = time.Now()
	return in
}

// install is installUnchecked and the wait for the cainjector to have put
// the serving Secret's ca.crt into every caBundle.
func (e *env) install(t *testing.T, rendering string, objs []*unstructured.Unstructured) *installation {
	t.Helper()
	start := time.Now()
	in := e.installUnchecked(t, rendering, objs)
	eventually(t, caInjectTimeout, 200*time.Millisecond, func() error { return e.caInjected(context.Background(), in) }, "caBundle injected")
	t.Logf("%s: installed in %s; CA injected %s after the webhook configurations", rendering, time.Since(start).Round(time.Millisecond), time.Since(in.registered).Round(time.Millisecond))
	return in
}

// existingIssuers creates the issuers the rendering's Certificates name but
// does not ship (the chart's certManager.issuer): a CA issuer of that name,
// its CA from certgen, as a garden that has one would.
func (e *env) existingIssuers(ctx context.Context, t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	shipped := map[string]bool{}
	for _, o := range objs {
		if o.GetKind() == "Issuer" || o.GetKind() == "ClusterIssuer" {
			shipped[o.GetKind()+"/"+o.GetName()] = true
		}
	}
	for _, crt := range selectObjects(objs, ofKind("Certificate")) {
		kind, _, _ := unstructured.NestedString(crt.Object, "spec", "issuerRef", "kind")
		name, _, _ := unstructured.NestedString(crt.Object, "spec", "issuerRef", "name")
		if shipped[kind+"/"+name] {
			continue
		}
		shipped[kind+"/"+name] = true
		// A ClusterIssuer's CA Secret is in cert-manager's cluster resource
		// namespace (kube-system by default).
		ns := "kube-system"
		if kind == "Issuer" {
			ns = crt.GetNamespace()
		}
		ca, err := certgen.NewAuthority(name, time.Now())
		must(t, err)
		pair, err := ca.CAPair()
		must(t, err)
		must(t, e.c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Type: corev1.SecretTypeTLS,
			Data: map[string][]byte{"tls.crt": pair.CertPEM, "tls.key": pair.KeyPEM}}))
		issuer := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "cert-manager.io/v1", "kind": kind,
			"metadata": map[string]any{"name": name}, "spec": map[string]any{"ca": map[string]any{"secretName": name}}}}
		if kind == "Issuer" {
			issuer.SetNamespace(ns)
		}
		must(t, apply(ctx, e.c, []*unstructured.Unstructured{issuer}))
	}
}

// waitCertificatesReady waits until every Certificate and Issuer of objs is
// Ready.
func (e *env) waitCertificatesReady(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	ctx := context.Background()
	for _, o := range objs {
		if o.GetKind() != "Certificate" && o.GetKind() != "Issuer" && o.GetKind() != "ClusterIssuer" {
			continue
		}
		eventually(t, certReadyTimeout, 200*time.Millisecond, func() error {
			got, err := get(ctx, e.c, o.GetAPIVersion(), o.GetKind(), o.GetNamespace(), o.GetName())
			if err != nil {
				return err
			}
			if status, msg := condition(got, "Ready"); status != "True" {
				return fmt.Errorf("%s %s/%s: Ready=%q: %s", o.GetKind(), o.GetNamespace(), o.GetName(), status, msg)
			}
			return nil
		}, o.GetKind()+" Ready")
	}
}

// apiServerClientName is the common name of kube-apiserver's webhook client
// certificate in the base and the chart (server.clientAuth.allowedNames).
const apiServerClientName = "kube-apiserver"

// giveAPIServerClientCert does what docs/install.md's Client authentication
// asks before the webhooks are registered, when the install has it on: a
// kubeconfig with kube-apiserver's client certificate for the webhook's
// Service host, an AdmissionConfiguration naming it, and kube-apiserver
// restarted with it.
func (e *env) giveAPIServerClientCert(ctx context.Context, t *testing.T, in *installation) *tls.Certificate {
	t.Helper()
	var secretName, namespace string
	for _, crt := range selectObjects(in.objs, ofKind("Certificate")) {
		if cn, _, _ := unstructured.NestedString(crt.Object, "spec", "commonName"); cn == apiServerClientName {
			secretName, _, _ = unstructured.NestedString(crt.Object, "spec", "secretName")
			namespace = crt.GetNamespace()
		}
	}
	if secretName == "" {
		return nil // client authentication off
	}
	s, err := e.cs.CoreV1().Secrets(namespace).Get(ctx, secretName, metav1.GetOptions{})
	must(t, err)
	kc := clientcmdapi.NewConfig()
	for _, host := range in.webhookHosts() {
		kc.AuthInfos[host] = &clientcmdapi.AuthInfo{ClientCertificateData: s.Data["tls.crt"], ClientKeyData: s.Data["tls.key"]}
	}
	path := filepath.Join(e.dir, "webhook-client.kubeconfig")
	must(t, clientcmd.WriteToFile(*kc, path))
	admission := filepath.Join(e.dir, "admission.yaml")
	must(t, os.WriteFile(admission, fmt.Appendf(nil, admissionConfiguration, path, path), 0o600))
	e.cp.admission = admission
	e.cp.restartAPIServer(t)
	cert, err := tls.X509KeyPair(s.Data["tls.crt"], s.Data["tls.key"])
	must(t, err)
	return &cert
}

// admissionConfiguration points both webhook admission plugins at the
// kubeconfig (twice).
const admissionConfiguration = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: ValidatingAdmissionWebhook
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: WebhookAdmissionConfiguration
    kubeConfigFile: %s
- name: MutatingAdmissionWebhook
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: WebhookAdmissionConfiguration
    kubeConfigFile: %s
`
