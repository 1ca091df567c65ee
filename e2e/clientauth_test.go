package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seedwarden/seedwarden/hack/devcerts/certgen"
)

// Client authentication, so that only the API server can call the webhooks
// (a forged review could otherwise hold seed places): the suite's
// kube-apiserver presents a client certificate to every webhook
// (AdmissionConfiguration with a kubeConfigFile, as docs/security.md tells
// operators to set it up), and every webhook process of the suite accepts
// only that certificate (server.clientAuth in webhookConfig). All other
// tests therefore run with client authentication on.

// apiserverClientName is the common name of kube-apiserver's client
// certificate, the one server.clientAuth.allowedNames admits.
const apiserverClientName = "kube-apiserver"

// Files of the suite's work directory.
func clientCAFile(work string) string     { return filepath.Join(work, "client-ca.crt") }
func placementKeyFile(work string) string { return filepath.Join(work, "placement.key") }

// admissionConfigFile is the AdmissionConfiguration that makes the API
// servers present the client certificate to webhooks.
func admissionConfigFile(work string) string { return filepath.Join(work, "admission-config.yaml") }

// setupClientAuth makes the client CA and kube-apiserver's certificate, and
// the admission configuration that makes kube-apiserver (and on the
// gardener target gardener-apiserver, which calls the Shoot webhooks)
// present it to webhooks; the API servers read it when they start.
func (st *suite) setupClientAuth() error {
	now := time.Now()
	var err error
	if st.clientCA, err = certgen.NewAuthority("seedwarden e2e webhook client CA", now); err != nil {
		return err
	}
	pair, err := st.clientCA.IssueClient(apiserverClientName, now)
	if err != nil {
		return err
	}
	cert, err := pair.TLS()
	if err != nil {
		return err
	}
	st.clientCerts = []tls.Certificate{cert}
	files := map[string][]byte{
		clientCAFile(st.work): st.clientCA.CertPEM,
		filepath.Join(st.work, "apiserver-webhook-client.crt"): pair.CertPEM,
		filepath.Join(st.work, "apiserver-webhook-client.key"): pair.KeyPEM,
		filepath.Join(st.work, "apiserver-webhook-kubeconfig"): fmt.Appendf(nil, webhookClientKubeconfig,
			filepath.Join(st.work, "apiserver-webhook-client.crt"), filepath.Join(st.work, "apiserver-webhook-client.key")),
		admissionConfigFile(st.work): fmt.Appendf(nil, admissionConfiguration,
			filepath.Join(st.work, "apiserver-webhook-kubeconfig"), filepath.Join(st.work, "apiserver-webhook-kubeconfig")),
	}
	for path, data := range files {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// webhookClientKubeconfig gives kube-apiserver its certificate for every
// webhook ("*": any host). Arguments: certificate and key files.
const webhookClientKubeconfig = `apiVersion: v1
kind: Config
users:
- name: "*"
  user:
    client-certificate: %s
    client-key: %s
`

// admissionConfiguration points both webhook admission plugins at that
// kubeconfig. Arguments: the kubeconfig, twice.
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

// TestForgedReviewsRefusedByClientAuthentication is the forged-review attack
// against the real setup: a pod that reaches the webhook port
// sends mutating reviews for Shoots of a real Project's namespace (not dry
// run), without a certificate, with one of another CA carrying the API
// server's name, and with one of the right CA carrying another name. Every
// one is refused at the handshake, counted, and reserves nothing; the API
// server's own calls keep working (every other test of the suite).
func TestForgedReviewsRefusedByClientAuthentication(t *testing.T) {
	st := need(t)
	st.logOnFailure(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	now := time.Now()
	otherCA, err := certgen.NewAuthority("attacker CA", now)
	require.NoError(t, err)
	forgedName, err := otherCA.IssueClient(apiserverClientName, now)
	require.NoError(t, err)
	wrongName, err := st.clientCA.IssueClient("system:serviceaccount:garden-dev:default", now)
	require.NoError(t, err)
	attackers := map[string]*certgen.Pair{"missing": nil, "untrusted": &forgedName, "name_not_allowed": &wrongName}

	body := forgedMutation(t)
	before := st.seedwardenCounts(t)
	for reason, cert := range attackers {
		hc, err := st.tlsClient(st.caBundle)
		require.NoError(t, err)
		tr := hc.Transport.(*http.Transport)
		tr.TLSClientConfig.Certificates = nil
		if cert != nil {
			c, err := cert.TLS()
			require.NoError(t, err)
			tr.TLSClientConfig.Certificates = []tls.Certificate{c}
		}
		for range 20 {
			resp, err := hc.Post("https://"+st.webhookAddr()+"/mutate-shoots", "application/json", bytes.NewReader(body))
			if err == nil {
				resp.Body.Close()
			}
			require.Error(t, err, "%s: a forged review got an answer (%v)", reason, resp)
		}
	}
	after := st.seedwardenCounts(t)
	for reason := range attackers {
		key := "seedwarden_webhook_client_rejections_total/" + reason
		assert.GreaterOrEqual(t, after[key]-before[key], 20.0, key)
	}
	// Nothing was decided, so no seed holds a phantom reservation.
	for key, v := range after {
		if !strings.HasPrefix(key, "seedwarden_webhook_client_rejections_total/") {
			assert.Equal(t, before[key], v, "%s moved: a forged review was decided", key)
		}
	}

	// The API server, presenting its certificate, is still served.
	sh := newShoot(t.Name(), awsShoot("eu-central-1", "eu-central-1a"))
	require.NoError(t, st.c.Create(ctx, sh, dryRunAll))
	assert.NotEmpty(t, admittedSeed(sh), "the API server's own call was refused")
}

// forgedMutation is an AdmissionReview for a Shoot CREATE in the project
// namespace, as an attacker would write it: not a dry run.
func forgedMutation(t *testing.T) []byte {
	t.Helper()
	req := shootCreate(t, "forged", newShoot(t.Name(), withName("e2e-forged"), awsShoot("eu-central-1", "eu-central-1a")))
	req.DryRun = nil
	body, err := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request:  req,
	})
	require.NoError(t, err)
	return body
}

// seedwardenCounts are the webhook's seedwarden_ series that the attack
// could move, keyed by name and the one label that tells them apart.
func (st *suite) seedwardenCounts(t *testing.T) map[string]float64 {
	t.Helper()
	samples, err := scrape(st.metricsURL())
	require.NoError(t, err)
	out := map[string]float64{}
	for _, smp := range samples {
		switch smp.name {
		case "seedwarden_webhook_client_rejections_total":
			out[smp.name+"/"+smp.labels["reason"]] = smp.value
		case "seedwarden_seed_charged_shoots":
			out[smp.name+"/"+smp.labels["seed"]] = smp.value
		case "seedwarden_scheduling_decisions_total":
			out[smp.name+"/"+smp.labels["result"]] += smp.value
		}
	}
	return out
}

// TestReadinessProbesAreNotClientRejections is issue 37's regression: with
// client authentication on, /readyz's webhook check calls the webhook port
// with its own certificate (server.SelfProbe), so 100 probes leave
// seedwarden_webhook_client_rejections_total unchanged and log no TLS
// handshake error. Before, each probe dialled without a certificate and
// counted as reason "missing".
func TestReadinessProbesAreNotClientRejections(t *testing.T) {
	st := need(t)
	st.logOnFailure(t)
	var offset int64
	if fi, err := os.Stat(st.logPath); err == nil {
		offset = fi.Size()
	}
	before := st.seedwardenCounts(t)
	for i := range 100 {
		code, body := httpStatus(st.healthURL("/readyz?verbose"))
		require.Equal(t, http.StatusOK, code, "probe %d: %s", i, body)
		require.Contains(t, body, "[+]webhook ok", "probe %d", i)
	}
	after := st.seedwardenCounts(t)
	for _, reason := range []string{"missing", "untrusted", "name_not_allowed"} {
		key := "seedwarden_webhook_client_rejections_total/" + reason
		assert.Equal(t, before[key], after[key], "%s moved across 100 readiness probes", key)
	}
	lines, err := readLines(st.logPath, offset)
	require.NoError(t, err)
	for _, l := range lines {
		assert.NotContains(t, l, "TLS handshake error", "logged during the probes")
	}
}
