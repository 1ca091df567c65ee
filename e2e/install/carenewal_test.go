package install

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// caCertificate is the name of the base's CA Certificate, and of its Secret.
const caCertificate = "seedwarden-ca"

// leafKeptFor is how long the CA renewal test watches the serving
// certificate stay as it was after the CA renewed.
const leafKeptFor = 10 * time.Second

// What a CA renewal does with the real programs, under load (5 Shoots/s),
// and the documented way to stop trusting the old CA
// (docs/troubleshooting.md, Certificate rotation):
//
//  1. The CA renews (cmctl renew seedwarden-ca): the serving certificate is
//     not re-issued and caBundle does not change; nothing fails.
//  2. The serving certificate renews (its schedule, or cmctl renew
//     seedwarden-webhook): signed by the new CA, its Secret's ca.crt the new
//     CA; the cainjector merges that into caBundle (cert-manager's
//     CAInjectorMerging, on by default), which then holds the old and the
//     new CA; nothing fails, and the old CA is still trusted (it leaves the
//     bundle only when it expires).
//  3. Replacing every caBundle with the serving Secret's ca.crt (one JSON
//     patch per webhook configuration) leaves the new CA only: a certificate
//     of the old CA no longer verifies, the cainjector leaves it so, nothing
//     fails.
func TestCARenewal(t *testing.T) {
	need(t)
	e := newEnv(t)
	in := e.install(t, renderingBase, readRendering(t, renderingBase))
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	oldCA, err := e.secretData(ctx, in.namespace, caCertificate)
	require.NoError(t, err)
	servingBefore, err := e.secretData(ctx, in.namespace, in.pod.servingSecret)
	require.NoError(t, err)
	bundlesBefore, err := e.caBundles(ctx, in)
	require.NoError(t, err)
	oldCALeaf := signedBy(t, oldCA, in.serviceHost())

	load := startShootLoad(e)
	defer func() { load.finish(t) }()
	time.Sleep(2 * time.Second)

	// 1. The CA.
	e.renew(ctx, t, in.namespace, caCertificate)
	newCA := e.waitSecretChanged(t, in.namespace, caCertificate, oldCA)
	time.Sleep(leafKeptFor)
	serving, err := e.secretData(ctx, in.namespace, in.pod.servingSecret)
	require.NoError(t, err)
	assert.Equal(t, string(servingBefore["tls.crt"]), string(serving["tls.crt"]), "the CA's renewal re-issued the serving certificate")
	bundles, err := e.caBundles(ctx, in)
	require.NoError(t, err)
	assert.Equal(t, bundlesBefore, bundles, "the CA's renewal changed caBundle")
	t.Logf("1. CA renewed: serving certificate and caBundle unchanged %s later; %d calls failed so far", leafKeptFor, load.failed.Load())

	// 2. The serving certificate, under the new CA.
	e.renew(ctx, t, in.namespace, in.servingCertificate(t))
	serving = e.waitSecretChanged(t, in.namespace, in.pod.servingSecret, servingBefore)
	assert.Equal(t, string(newCA["ca.crt"]), string(serving["ca.crt"]), "ca.crt of the re-issued serving certificate")
	both := append(append([]byte{}, oldCA["ca.crt"]...), newCA["ca.crt"]...)
	eventually(t, caInjectTimeout, 100*time.Millisecond, func() error { return e.bundlesHold(ctx, in, both) }, "caBundle with the old and the new CA")
	e.waitServed(t, in, newCA["ca.crt"], leafOf(t, serving), servedWithin)
	e.assertTrusted(ctx, t, in, oldCALeaf, true)
	t.Logf("2. serving certificate re-issued by the new CA: caBundle holds both CAs, the old one still trusted; %d calls failed so far", load.failed.Load())

	// 3. The documented step: every caBundle replaced by the new CA.
	require.NoError(t, e.replaceCABundles(ctx, in, serving["ca.crt"]))
	require.NoError(t, e.bundlesHold(ctx, in, newCA["ca.crt"]))
	time.Sleep(5 * time.Second) // the cainjector sees the change and leaves it
	require.NoError(t, e.bundlesHold(ctx, in, newCA["ca.crt"]), "after the cainjector's next look")
	e.assertTrusted(ctx, t, in, oldCALeaf, false)
	e.waitServed(t, in, newCA["ca.crt"], leafOf(t, serving), servedWithin)
	t.Logf("3. caBundle replaced by the new CA only: the old CA is no longer trusted; %d calls failed", load.failed.Load())
}

// waitSecretChanged waits until Secret namespace/name's tls.crt differs
// from before's, and returns its data.
func (e *env) waitSecretChanged(t *testing.T, namespace, name string, before map[string][]byte) map[string][]byte {
	t.Helper()
	var after map[string][]byte
	eventually(t, certReadyTimeout, 100*time.Millisecond, func() error {
		var err error
		if after, err = e.secretData(context.Background(), namespace, name); err != nil {
			return err
		}
		if bytes.Equal(after["tls.crt"], before["tls.crt"]) {
			return fmt.Errorf("Secret %s/%s not renewed yet", namespace, name)
		}
		return nil
	}, "Secret "+name+" renewed")
	return after
}

// bundlesHold says whether every caBundle holds exactly the certificates of
// want (in any order).
func (e *env) bundlesHold(ctx context.Context, in *installation, want []byte) error {
	bundles, err := e.caBundles(ctx, in)
	if err != nil {
		return err
	}
	wantSet := rawSet(certificates(want))
	for name, b := range bundles {
		if got := rawSet(certificates(b)); !equalSets(got, wantSet) {
			return fmt.Errorf("webhook %s: caBundle holds %d certificates, want the %d given", name, len(got), len(wantSet))
		}
	}
	return nil
}

func rawSet(certs []*x509.Certificate) map[string]bool {
	out := map[string]bool{}
	for _, c := range certs {
		out[string(c.Raw)] = true
	}
	return out
}

func equalSets(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

// seedwardenWebhookConfigurations is the label selector
// docs/troubleshooting.md lists the webhook configurations with.
const seedwardenWebhookConfigurations = "app.kubernetes.io/part-of=seedwarden,app.kubernetes.io/component=webhook-configuration"

// replaceCABundles does what docs/troubleshooting.md says to stop trusting
// an old CA: for every webhook configuration its selector lists, one JSON
// patch that replaces each webhook's caBundle with ca.
func (e *env) replaceCABundles(ctx context.Context, in *installation, ca []byte) error {
	sel, err := labels.Parse(seedwardenWebhookConfigurations)
	if err != nil {
		return err
	}
	var cfgs []unstructured.Unstructured
	for _, kind := range []string{"ValidatingWebhookConfigurationList", "MutatingWebhookConfigurationList"} {
		list := &unstructured.UnstructuredList{}
		list.SetAPIVersion("admissionregistration.k8s.io/v1")
		list.SetKind(kind)
		if err := e.c.List(ctx, list, client.MatchingLabelsSelector{Selector: sel}); err != nil {
			return err
		}
		cfgs = append(cfgs, list.Items...)
	}
	if want := len(selectObjects(in.objs, isWebhookConfiguration)); len(cfgs) != want {
		return fmt.Errorf("the selector %q lists %d webhook configurations, the install has %d", seedwardenWebhookConfigurations, len(cfgs), want)
	}
	for i := range cfgs {
		cfg := &cfgs[i]
		hooks, _, _ := unstructured.NestedSlice(cfg.Object, "webhooks")
		var ops []map[string]any
		for i := range hooks {
			ops = append(ops, map[string]any{"op": "replace", "path": fmt.Sprintf("/webhooks/%d/clientConfig/caBundle", i), "value": base64.StdEncoding.EncodeToString(ca)})
		}
		patch, err := json.Marshal(ops)
		if err != nil {
			return err
		}
		if err := e.c.Patch(ctx, cfg, client.RawPatch(types.JSONPatchType, patch)); err != nil {
			return fmt.Errorf("%s %s: %w", cfg.GetKind(), cfg.GetName(), err)
		}
	}
	return nil
}

// assertTrusted asserts whether leaf (for the Service's host) verifies
// against every caBundle.
func (e *env) assertTrusted(ctx context.Context, t *testing.T, in *installation, leaf *x509.Certificate, want bool) {
	t.Helper()
	bundles, err := e.caBundles(ctx, in)
	require.NoError(t, err)
	for name, b := range bundles {
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(b)
		_, err := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: in.serviceHost()})
		if want {
			assert.NoError(t, err, "a certificate of the old CA against caBundle of %s", name)
		} else {
			assert.Error(t, err, "a certificate of the old CA against caBundle of %s", name)
		}
	}
}

// signedBy is a serving certificate for host signed by the CA of a
// cert-manager CA Secret (tls.crt, tls.key): what anyone holding that CA's
// key could present.
func signedBy(t *testing.T, caSecret map[string][]byte, host string) *x509.Certificate {
	t.Helper()
	pair, err := tls.X509KeyPair(caSecret["tls.crt"], caSecret["tls.key"])
	require.NoError(t, err)
	caCert, err := x509.ParseCertificate(pair.Certificate[0])
	require.NoError(t, err)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: host},
		DNSNames: []string{host}, NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, pair.PrivateKey.(crypto.Signer))
	require.NoError(t, err)
	leaf, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	return leaf
}
