package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"sigs.k8s.io/yaml"
)

// The webhook configurations of deploy/manifests, registered as they are
// except for clientConfig (a URL on localhost instead of the Service, and
// the test CA as caBundle), and the webhooks of the opt-in resource-size
// component, since the suite's configuration sets size limits (registered
// in the same ValidatingWebhookConfiguration, so that a test takes all of
// seedwarden's webhooks away and back at once).
const (
	mutatingManifest     = "deploy/manifests/webhook-mutating.yaml"
	validatingManifest   = "deploy/manifests/webhook-validating.yaml"
	resourceSizeManifest = "deploy/resource-size/webhook-resource-size.yaml"
)

// Webhook names of deploy/manifests that tests depend on.
const (
	webhookPlace = "place.shoots.seedwarden.io"
	// webhookAnnotations is the placing handler again, for UPDATEs that
	// touch seedwarden.io/* annotations.
	webhookAnnotations = "annotations.shoots.seedwarden.io"
	// webhookSeed is the binding and the capacity checks, in one
	// registration.
	webhookSeed = "seed.shoots.seedwarden.io"
	webhookSize = "size.seedwarden.io"
	// webhookShootSize is the resource-size webhook for Shoots, which
	// fails open.
	webhookShootSize = "size.shoots.seedwarden.io"
	// webhookKubeconfig and webhookNamespaces are the kubeconfig Secret and
	// namespace-deletion validators.
	webhookKubeconfig = "kubeconfig.secrets.seedwarden.io"
	webhookNamespaces = "namespaces.seedwarden.io"
	// webhookSeedAutoscaler guards SeedAutoscaler writes.
	webhookSeedAutoscaler = "seedautoscalers.autoscaling.seedwarden.io"
)

func readManifest(root, rel string, into any) error {
	data, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		return err
	}
	if err := yaml.UnmarshalStrict(data, into); err != nil {
		return fmt.Errorf("%s: %w", rel, err)
	}
	return nil
}

// registerWebhooks creates the MutatingWebhookConfiguration and
// ValidatingWebhookConfiguration of deploy/manifests (with the resource-size
// component's webhooks), pointed at the webhook process. A webhook whose path the server does not answer (404: not
// implemented yet) is left out, and said so, because a Fail-policy webhook
// that 404s would block every request it matches.
func (st *suite) registerWebhooks(ctx context.Context) error {
	var mwc admissionregistrationv1.MutatingWebhookConfiguration
	if err := readManifest(st.root, mutatingManifest, &mwc); err != nil {
		return err
	}
	var vwc, sizes admissionregistrationv1.ValidatingWebhookConfiguration
	if err := readManifest(st.root, validatingManifest, &vwc); err != nil {
		return err
	}
	if err := readManifest(st.root, resourceSizeManifest, &sizes); err != nil {
		return err
	}
	vwc.Webhooks = append(vwc.Webhooks, sizes.Webhooks...)
	st.registered, st.skipped = map[string]string{}, map[string]string{}
	served := func(name string, cc *admissionregistrationv1.WebhookClientConfig) (bool, error) {
		if cc.Service == nil || cc.Service.Path == nil {
			return false, fmt.Errorf("webhook %s: want clientConfig.service.path in deploy/manifests", name)
		}
		path := *cc.Service.Path
		ok, err := st.pathServed(path)
		if err != nil {
			return false, fmt.Errorf("webhook %s: probing %s: %w", name, path, err)
		}
		if !ok {
			st.skipped[name] = path
			return false, nil
		}
		st.registered[name] = path
		url := fmt.Sprintf("https://%s%s", st.webhookAddr(), path)
		cc.Service, cc.URL, cc.CABundle = nil, &url, st.caBundle
		return true, nil
	}
	var keepM []admissionregistrationv1.MutatingWebhook
	for _, wh := range mwc.Webhooks {
		ok, err := served(wh.Name, &wh.ClientConfig)
		if err != nil {
			return err
		}
		if ok {
			keepM = append(keepM, wh)
		}
	}
	var keepV []admissionregistrationv1.ValidatingWebhook
	for _, wh := range vwc.Webhooks {
		ok, err := served(wh.Name, &wh.ClientConfig)
		if err != nil {
			return err
		}
		if ok {
			keepV = append(keepV, wh)
		}
	}
	mwc.Webhooks, vwc.Webhooks = keepM, keepV
	if err := st.c.Create(ctx, &mwc); err != nil {
		return fmt.Errorf("creating MutatingWebhookConfiguration: %w", err)
	}
	if err := st.c.Create(ctx, &vwc); err != nil {
		return fmt.Errorf("creating ValidatingWebhookConfiguration: %w", err)
	}
	logf("webhooks registered: %s", describeWebhooks(st.registered))
	if len(st.skipped) > 0 {
		logf("webhooks NOT registered (their path answers 404; tests that need them skip): %s", describeWebhooks(st.skipped))
	}
	return st.waitWebhooksEffective(ctx)
}

func describeWebhooks(m map[string]string) string {
	var out []string
	for name, path := range m {
		out = append(out, name+" ("+path+")")
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// pathServed probes path with an empty POST: 404 means the server has no
// handler there; anything else (a handler's error about the empty body) means
// it has.
func (st *suite) pathServed(path string) (bool, error) {
	c, err := st.tlsClient(st.caBundle)
	if err != nil {
		return false, err
	}
	resp, err := c.Post("https://"+st.webhookAddr()+path, "application/json", bytes.NewReader(nil))
	if err != nil {
		return false, err
	}
	resp.Body.Close()
	return resp.StatusCode != http.StatusNotFound, nil
}

// tlsClient trusts caPEM and presents the certificate the API server
// presents (server.clientAuth is on in the suite).
func (st *suite) tlsClient(caPEM []byte) (*http.Client, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("no certificate in the CA bundle")
	}
	return &http.Client{
		Timeout:   5 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12, Certificates: st.clientCerts}},
	}, nil
}

// waitWebhooksEffective waits until the API server calls the webhooks: a
// dry-run Shoot CREATE comes back placed, and every registered Shoot webhook
// shows up in the API server's webhook request counter.
func (st *suite) waitWebhooksEffective(ctx context.Context) error {
	var shootHooks []string
	for name := range st.registered {
		// The probes are CREATEs; annotations.shoots.seedwarden.io takes
		// UPDATEs only, and the API server loads it with
		// place.shoots.seedwarden.io, in one configuration.
		if strings.Contains(name, "shoots") && name != webhookAnnotations {
			shootHooks = append(shootHooks, name)
		}
	}
	start := time.Now()
	err := poll(ctx, 30*time.Second, 100*time.Millisecond, func() error {
		sh := newShoot("registration-probe", awsShoot("eu-central-1", "eu-central-1a"))
		if err := st.c.Create(ctx, sh, dryRunAll); err != nil {
			return err
		}
		seed := admittedSeed(sh)
		if seed == "" {
			return fmt.Errorf("dry-run Shoot was not placed (mutating webhook not called yet)")
		}
		if bindingMode() {
			// Placement mode binding only announces the seed, and the
			// capacity webhook is only called for a CREATE that sets one.
			withSeed := newShoot("registration-probe", awsShoot("eu-central-1", "eu-central-1a"))
			if err := unstructured.SetNestedField(withSeed.Object, seed, "spec", "seedName"); err != nil {
				return err
			}
			if err := st.c.Create(ctx, withSeed, dryRunAll); err != nil {
				return err
			}
		}
		if onGardener() {
			// gardener-apiserver calls the Shoot webhooks; its metrics are
			// not reachable through kube-apiserver. The placed dry run
			// above shows the mutating one is called.
			return nil
		}
		samples, err := st.apiserverMetrics(ctx)
		if err != nil {
			return err
		}
		called := map[string]bool{}
		for _, smp := range samples {
			if smp.name == "apiserver_admission_webhook_request_total" {
				called[smp.labels["name"]] = true
			}
		}
		for _, n := range shootHooks {
			if !called[n] {
				return fmt.Errorf("webhook %s not called yet", n)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("webhooks not effective: %w", err)
	}
	logf("webhooks effective after %s", time.Since(start).Round(time.Millisecond))
	return nil
}

// setCABundle sets caBundle on every registered webhook: what cert-manager's
// cainjector writes (it merges a new CA in next to the old one), or an
// operator's replacement of the bundle.
func (st *suite) setCABundle(ctx context.Context, bundle []byte) error {
	var mwc admissionregistrationv1.MutatingWebhookConfiguration
	if err := st.c.Get(ctx, keyOf("", "seedwarden"), &mwc); err != nil {
		return err
	}
	for i := range mwc.Webhooks {
		mwc.Webhooks[i].ClientConfig.CABundle = bundle
	}
	if err := st.c.Update(ctx, &mwc); err != nil {
		return err
	}
	var vwc admissionregistrationv1.ValidatingWebhookConfiguration
	if err := st.c.Get(ctx, keyOf("", "seedwarden"), &vwc); err != nil {
		return err
	}
	for i := range vwc.Webhooks {
		vwc.Webhooks[i].ClientConfig.CABundle = bundle
	}
	if err := st.c.Update(ctx, &vwc); err != nil {
		return err
	}
	st.caBundle = slices.Clone(bundle)
	return nil
}
