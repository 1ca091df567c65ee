package install

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Installed in the documented order, the kustomize base and the chart (both
// value sets) come up with the real cert-manager: every Certificate and
// Issuer Ready; the serving certificate has exactly the Service's names and
// is what the webhook serves there, verified against the caBundle; the
// cainjector put the CA into every webhook configuration; and a Shoot
// created through kube-apiserver, which reaches the webhook by the Service's
// name through its cluster egress, is placed.
func TestInstall(t *testing.T) {
	need(t)
	for _, rendering := range []string{renderingBase, renderingDefault, renderingOptions} {
		t.Run(rendering, func(t *testing.T) {
			e := newEnv(t)
			in := e.install(t, rendering, readRendering(t, rendering))
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			e.checkInstalled(ctx, t, in)
		})
	}
}

// checkInstalled asserts what TestInstall says of an installation.
func (e *env) checkInstalled(ctx context.Context, t *testing.T, in *installation) {
	t.Helper()
	sec, err := e.servingSecret(ctx, in)
	require.NoError(t, err)
	issued := certificates(sec["tls.crt"])
	require.NotEmpty(t, issued, "serving Secret %s has no certificate", in.pod.servingSecret)
	assert.ElementsMatch(t, append(in.serviceNames(), in.urlHosts()...), issued[0].DNSNames,
		"DNS names of the serving certificate against the Service's names (and the webhook URLs' hosts)")

	bundles, err := e.caBundles(ctx, in)
	require.NoError(t, err)
	require.NotEmpty(t, bundles)
	for name, ca := range bundles {
		assert.Equal(t, string(sec["ca.crt"]), string(ca), "caBundle of webhook %s against ca.crt of %s", name, in.pod.servingSecret)
	}

	for name, ca := range bundles {
		for _, host := range in.webhookHosts() {
			served, err := e.servedCertificateAt(in, host, ca)
			if assert.NoError(t, err, "TLS to %s verified with the caBundle of %s", host, name) {
				assert.Equal(t, issued[0].SerialNumber, served.SerialNumber, "the webhook serves the issued certificate")
			}
		}
	}

	before := e.proxy.served()
	seed, err := e.createShoot(ctx, "install-"+fmt.Sprint(time.Now().UnixNano()%1e6))
	require.NoError(t, err, "a Shoot created through the webhooks")
	calls := e.proxy.served() - before
	t.Logf("%s: the Shoot was placed on %s; its CREATE made %d connections to %v through the egress", in.rendering, seed, calls, in.webhookHosts())
	assert.Positive(t, calls, "the Shoot's CREATE reached no webhook through the egress proxy")
}
