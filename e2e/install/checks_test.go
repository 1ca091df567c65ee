package install

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/seedwarden/seedwarden/internal/placementtoken"
)

// What the tests check of an installation, as the API server sees it.

// serviceHost is the host the API server calls the webhook Service at, and
// the names the Service is known by in the cluster (cluster domain
// cluster.local).
func (in *installation) serviceHost() string {
	svc := selectObjects(in.objs, ofKind("Service"))[0]
	return svc.GetName() + "." + svc.GetNamespace() + ".svc"
}

func (in *installation) serviceNames() []string {
	return []string{in.serviceHost(), in.serviceHost() + ".cluster.local"}
}

// urlHosts are the hosts of webhooks registered by URL (a virtual garden's
// registrations), without the port.
func (in *installation) urlHosts() []string {
	seen := map[string]bool{}
	var out []string
	for _, cfg := range selectObjects(in.objs, isWebhookConfiguration) {
		hooks, _, _ := unstructured.NestedSlice(cfg.Object, "webhooks")
		for _, h := range hooks {
			m, _ := h.(map[string]any)
			raw, _, _ := unstructured.NestedString(m, "clientConfig", "url")
			if u, err := url.Parse(raw); err == nil && raw != "" && !seen[u.Hostname()] {
				seen[u.Hostname()] = true
				out = append(out, u.Hostname())
			}
		}
	}
	return out
}

// webhookHosts are the hosts kube-apiserver calls the webhooks at: the
// Service's, or the URLs'.
func (in *installation) webhookHosts() []string {
	if hosts := in.urlHosts(); len(hosts) > 0 {
		return hosts
	}
	return []string{in.serviceHost()}
}

// webhookConfigurations are the installation's webhook configurations as
// the API server holds them now.
func (e *env) webhookConfigurations(ctx context.Context, in *installation) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, o := range selectObjects(in.objs, isWebhookConfiguration) {
		got, err := get(ctx, e.c, o.GetAPIVersion(), o.GetKind(), "", o.GetName())
		if err != nil {
			return nil, err
		}
		out = append(out, got)
	}
	return out, nil
}

// caBundles are the caBundle of every webhook of every webhook
// configuration, by "<configuration>/<webhook>".
func (e *env) caBundles(ctx context.Context, in *installation) (map[string][]byte, error) {
	cfgs, err := e.webhookConfigurations(ctx, in)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, cfg := range cfgs {
		hooks, _, _ := unstructured.NestedSlice(cfg.Object, "webhooks")
		for _, h := range hooks {
			m, _ := h.(map[string]any)
			b64, _, _ := unstructured.NestedString(m, "clientConfig", "caBundle")
			var ca []byte
			if b64 != "" {
				if ca, err = base64.StdEncoding.DecodeString(b64); err != nil {
					return nil, fmt.Errorf("%s/%s: caBundle: %w", cfg.GetName(), m["name"], err)
				}
			}
			out[fmt.Sprintf("%s/%v", cfg.GetName(), m["name"])] = ca
		}
	}
	return out, nil
}

// servingSecret is the serving Secret's data (tls.crt, tls.key, ca.crt).
func (e *env) servingSecret(ctx context.Context, in *installation) (map[string][]byte, error) {
	s, err := e.cs.CoreV1().Secrets(in.namespace).Get(ctx, in.pod.servingSecret, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return s.Data, nil
}

// caInjected says whether every webhook's caBundle is the serving Secret's
// ca.crt.
func (e *env) caInjected(ctx context.Context, in *installation) error {
	sec, err := e.servingSecret(ctx, in)
	if err != nil {
		return err
	}
	bundles, err := e.caBundles(ctx, in)
	if err != nil {
		return err
	}
	for name, ca := range bundles {
		if !bytes.Equal(ca, sec["ca.crt"]) {
			return fmt.Errorf("webhook %s: caBundle (%d bytes, %d certificates) is not ca.crt of Secret %s (%d certificates)",
				name, len(ca), len(certificates(ca)), in.pod.servingSecret, len(certificates(sec["ca.crt"])))
		}
	}
	return nil
}

// certificates parses every CERTIFICATE block of pemData.
func certificates(pemData []byte) []*x509.Certificate {
	var out []*x509.Certificate
	for {
		var b *pem.Block
		b, pemData = pem.Decode(pemData)
		if b == nil {
			return out
		}
		if c, err := x509.ParseCertificate(b.Bytes); err == nil {
			out = append(out, c)
		}
	}
}

// servedCertificate is the leaf the webhook serves at the Service's host,
// reached as kube-apiserver reaches it (a CONNECT through the egress proxy,
// TLS with the Service host as server name, verified against caBundle, the
// API server's client certificate when the install has one).
func (e *env) servedCertificate(in *installation, caBundle []byte) (*x509.Certificate, error) {
	return e.servedCertificateAt(in, in.webhookHosts()[0], caBundle)
}

// servedCertificateAt is servedCertificate at host (port 443).
func (e *env) servedCertificateAt(in *installation, host string, caBundle []byte) (*x509.Certificate, error) {
	conn, err := net.DialTimeout("unix", e.proxy.socket(), 2*time.Second)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	target := host + ":443"
	fmt.Fprintf(conn, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("CONNECT %s: %s", target, resp.Status)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caBundle)
	cfg := &tls.Config{ServerName: host, RootCAs: pool, MinVersion: tls.VersionTLS12}
	if in.clientCert != nil {
		cfg.Certificates = []tls.Certificate{*in.clientCert}
	}
	tc := tls.Client(conn, cfg)
	if err := tc.Handshake(); err != nil {
		return nil, err
	}
	return tc.ConnectionState().PeerCertificates[0], nil
}

// createShoot creates a Shoot without a seed in the project's namespace,
// through the webhooks; it returns the seed they chose (annotated in
// placement mode binding, spec.seedName in mode patch) or the API server's
// error.
func (e *env) createShoot(ctx context.Context, name string) (string, error) {
	u := shootObject(name)
	if err := e.c.Create(ctx, u); err != nil {
		return "", err
	}
	if seed := u.GetAnnotations()[placementtoken.SeedAnnotation]; seed != "" {
		return seed, nil
	}
	seed, _, _ := unstructured.NestedString(u.Object, "spec", "seedName")
	if seed == "" {
		return "", fmt.Errorf("shoot %s was created without a seed chosen", name)
	}
	return seed, nil
}

// shootObject is a Shoot without a seed in the project's namespace that the
// example landscape has room for.
func shootObject(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
		"metadata": map[string]any{"name": name, "namespace": projectNamespace},
		"spec": map[string]any{
			"purpose": "evaluation", "region": "eu-central-1",
			"cloudProfile": map[string]any{"kind": "CloudProfile", "name": "aws"},
			"kubernetes":   map[string]any{"version": "1.33.4"},
			"networking":   map[string]any{"type": "calico", "nodes": "10.250.0.0/16", "ipFamilies": []any{"IPv4"}},
			"provider": map[string]any{"type": "aws", "workers": []any{map[string]any{
				"name": "worker", "machine": map[string]any{"type": "m5.large"}, "minimum": int64(1), "maximum": int64(3),
				"zones": []any{"eu-central-1a"}}}},
		},
	}}
}
