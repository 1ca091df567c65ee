package install

import (
	"bytes"
	"context"
	"crypto/x509"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// renew asks cert-manager to re-issue Certificate namespace/name now, as
// `cmctl renew` does: the condition Issuing=True (reason ManuallyTriggered)
// in its status. cert-manager's trigger controller sets the same condition
// when a renewal is due (pkg/controller/certificates/trigger), and its
// issuing controller issues whenever it is set.
func (e *env) renew(ctx context.Context, t *testing.T, namespace, name string) {
	t.Helper()
	crt, err := get(ctx, e.c, "cert-manager.io/v1", "Certificate", namespace, name)
	require.NoError(t, err)
	conds, _, _ := unstructured.NestedSlice(crt.Object, "status", "conditions")
	conds = append(conds, map[string]any{
		"type": "Issuing", "status": "True", "reason": "ManuallyTriggered",
		"message": "Certificate re-issuance manually triggered", "observedGeneration": crt.GetGeneration(),
		"lastTransitionTime": time.Now().UTC().Format(time.RFC3339),
	})
	require.NoError(t, unstructured.SetNestedSlice(crt.Object, conds, "status", "conditions"))
	require.NoError(t, e.c.Status().Update(ctx, crt), "renew %s/%s", namespace, name)
}

// secretData is the data of Secret namespace/name.
func (e *env) secretData(ctx context.Context, namespace, name string) (map[string][]byte, error) {
	s, err := e.cs.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return s.Data, nil
}

// leafOf is the first certificate of tls.crt in data.
func leafOf(t *testing.T, data map[string][]byte) *x509.Certificate {
	t.Helper()
	certs := certificates(data["tls.crt"])
	require.NotEmpty(t, certs, "tls.crt holds no certificate")
	return certs[0]
}

// waitServed waits until the webhook serves the certificate want, as the
// API server reaches it.
func (e *env) waitServed(t *testing.T, in *installation, caBundle []byte, want *x509.Certificate, timeout time.Duration) {
	t.Helper()
	eventually(t, timeout, 100*time.Millisecond, func() error {
		got, err := e.servedCertificate(in, caBundle)
		if err != nil {
			return err
		}
		if got.SerialNumber.Cmp(want.SerialNumber) != 0 {
			return fmt.Errorf("serves serial %s, want %s", got.SerialNumber, want.SerialNumber)
		}
		return nil
	}, "the renewed certificate served")
}

// servedWithin bounds how long after cert-manager wrote a renewed Secret the
// webhook serves it: the played kubelet's sync (volumeSyncPeriod) and
// controller-runtime's certificate watcher (a file watch, and a poll every
// 10 s).
const servedWithin = 15 * time.Second

// The serving certificate renewed under load (5 Shoots/s through the
// webhooks): cert-manager issues a new leaf under the same CA, so caBundle
// does not change; the webhook serves it within seconds of the Secret's
// update, no call fails, and the process is not restarted.
func TestLeafRenewalUnderLoad(t *testing.T) {
	need(t)
	e := newEnv(t)
	in := e.install(t, renderingBase, readRendering(t, renderingBase))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	before, err := e.secretData(ctx, in.namespace, in.pod.servingSecret)
	require.NoError(t, err)
	oldLeaf := leafOf(t, before)
	bundles, err := e.caBundles(ctx, in)
	require.NoError(t, err)
	pid := in.pod.proc.Pid()

	load := startShootLoad(e)
	time.Sleep(2 * time.Second)
	triggered := time.Now()
	e.renew(ctx, t, in.namespace, in.servingCertificate(t))
	var after map[string][]byte
	eventually(t, certReadyTimeout, 100*time.Millisecond, func() error {
		after, err = e.secretData(ctx, in.namespace, in.pod.servingSecret)
		if err != nil {
			return err
		}
		if bytes.Equal(after["tls.crt"], before["tls.crt"]) {
			return fmt.Errorf("Secret %s not renewed yet", in.pod.servingSecret)
		}
		return nil
	}, "the serving Secret renewed")
	newLeaf := leafOf(t, after)
	issued := time.Since(triggered)
	e.waitServed(t, in, after["ca.crt"], newLeaf, servedWithin)
	t.Logf("renewed: serial %s -> %s; the Secret updated %s and the new certificate served %s after the trigger",
		oldLeaf.SerialNumber, newLeaf.SerialNumber, issued.Round(time.Millisecond), time.Since(triggered).Round(time.Millisecond))
	time.Sleep(3 * time.Second)
	load.finish(t)

	assert.Equal(t, string(before["ca.crt"]), string(after["ca.crt"]), "a leaf renewal keeps the CA")
	bundlesAfter, err := e.caBundles(ctx, in)
	require.NoError(t, err)
	assert.Equal(t, bundles, bundlesAfter, "caBundle changed with a leaf renewal")
	assert.False(t, in.pod.proc.Exited(), "seedwarden exited")
	assert.Equal(t, pid, in.pod.proc.Pid(), "seedwarden was restarted")
}

// servingCertificate is the name of the Certificate whose Secret is the
// serving Secret.
func (in *installation) servingCertificate(t *testing.T) string {
	t.Helper()
	for _, crt := range selectObjects(in.objs, ofKind("Certificate")) {
		if s, _, _ := unstructured.NestedString(crt.Object, "spec", "secretName"); s == in.pod.servingSecret {
			return crt.GetName()
		}
	}
	t.Fatalf("no Certificate writes Secret %s", in.pod.servingSecret)
	return ""
}
