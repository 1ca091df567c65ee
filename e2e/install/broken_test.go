package install

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The install's checks catch the two mistakes that break it without any
// object being refused: the variants below are the base with one of them
// made, and each test asserts how it shows.

// injectCAFrom is cert-manager's annotation that names the Certificate
// whose CA the cainjector puts into a webhook configuration.
const injectCAFrom = "cert-manager.io/inject-ca-from"

// brokenWait is how long the broken variants are watched for the
// cainjector to (not) mend them.
const brokenWait = 10 * time.Second

// A serving Certificate without the Service's name: cert-manager issues it,
// the cainjector injects its CA, the replica is ready, and yet every call of
// kube-apiserver fails the handshake ("x509: certificate is valid for ...,
// not seedwarden.seedwarden.svc"): the placing webhook fails open (the Shoot
// gets no seed), the fail-closed ones refuse.
func TestBrokenServingSANFailsCalls(t *testing.T) {
	need(t)
	e := newEnv(t)
	objs := readRendering(t, renderingBase)
	for _, crt := range selectObjects(objs, ofKind("Certificate")) {
		if names, _, _ := unstructured.NestedStringSlice(crt.Object, "spec", "dnsNames"); len(names) > 0 {
			require.NoError(t, unstructured.SetNestedStringSlice(crt.Object, []string{"seedwarden.wrong.svc"}, "spec", "dnsNames"))
		}
	}
	in := e.install(t, renderingBase, objs)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	bundles, err := e.caBundles(ctx, in)
	require.NoError(t, err)
	for name, ca := range bundles {
		_, err := e.servedCertificate(in, ca)
		assert.ErrorContains(t, err, "x509: certificate is valid for seedwarden.wrong.svc, not "+in.serviceHost(), "webhook %s", name)
	}
	_, err = e.createShoot(ctx, "broken-san")
	assert.ErrorContains(t, err, "created without a seed chosen", "the placing webhook fails open")
	e.assertSeededShootRefused(ctx, t, "x509: certificate is valid for seedwarden.wrong.svc")
}

// Webhook configurations without the inject-ca-from annotation: the
// cainjector leaves caBundle empty, kube-apiserver verifies the webhook
// against the system's roots, and every call fails ("x509: certificate
// signed by unknown authority").
func TestBrokenInjectAnnotationLeavesCABundleEmpty(t *testing.T) {
	need(t)
	e := newEnv(t)
	objs := readRendering(t, renderingBase)
	for _, o := range selectObjects(objs, isWebhookConfiguration) {
		ann := o.GetAnnotations()
		require.Contains(t, ann, injectCAFrom, "%s %s", o.GetKind(), o.GetName())
		delete(ann, injectCAFrom)
		o.SetAnnotations(ann)
	}
	in := e.installUnchecked(t, renderingBase, objs)
	time.Sleep(brokenWait)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	bundles, err := e.caBundles(ctx, in)
	require.NoError(t, err)
	require.NotEmpty(t, bundles)
	for name, ca := range bundles {
		assert.Empty(t, ca, "caBundle of %s %s after the install", name, brokenWait)
	}
	assert.Error(t, e.caInjected(ctx, in), "the install's CA check")
	e.assertSeededShootRefused(ctx, t, "x509: certificate signed by unknown authority")
}

// assertSeededShootRefused asserts that a dry-run CREATE of a Shoot with a
// seed (the fail-closed binding webhook's case) is refused with want in the
// error.
func (e *env) assertSeededShootRefused(ctx context.Context, t *testing.T, want string) {
	t.Helper()
	u := shootObject("broken-seeded")
	require.NoError(t, unstructured.SetNestedField(u.Object, "aws-eu2", "spec", "seedName"))
	err := e.c.Create(ctx, u, client.DryRunAll)
	require.Error(t, err, "a Shoot with a seed was admitted")
	assert.True(t, strings.Contains(err.Error(), want), "refused for another reason: %v", err)
}
