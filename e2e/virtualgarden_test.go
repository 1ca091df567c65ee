package e2e

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// virtualGardenHooks are the webhook configurations of a virtual-garden
// rendering (the kustomize base with every Component, the virtual-garden one
// last; the chart with its virtualGarden values).
type virtualGardenHooks struct {
	mutating   []admissionregistrationv1.MutatingWebhookConfiguration
	validating []admissionregistrationv1.ValidatingWebhookConfiguration
}

// gardener-operator's virtual garden, as docs/install.md sets it up: seedwarden
// runs outside the cluster whose API serves Shoots (here a process beside the
// API server, as it runs in the runtime cluster), with a kubeconfig that
// authenticates as the ServiceAccount seedwarden/seedwarden by token (the
// content of the Secret seedwarden-virtual-garden-kubeconfig; envtest runs
// no token controller, so the token comes from a TokenRequest instead of a
// token Secret), and the API server reaches it only by the URLs that the
// deploy/virtual-garden Component renders (hack/chartcheck, with the
// process's address as webhookHost), and that the chart renders with its
// virtualGarden values. Through each set of registrations, replacing
// the suite's for the test, a Shoot is placed, and the process counts the
// call: nothing but the URL leads there.
func TestVirtualGardenURLRegistration(t *testing.T) {
	st := need(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	kubeconfig := st.serviceAccountKubeconfig(ctx, t)
	ca, err := newReplicaCA()
	require.NoError(t, err)
	r := st.startReplicaWith(t, "virtual-garden", ca, replicaOptions{kubeconfig: kubeconfig})
	require.NoError(t, waitReplicaReady(r, time.Minute))

	dir := renderInstalls(ctx, t, st, "-webhook-host", r.webhookAddr())
	for _, name := range []string{"kustomize-components.yaml", "helm-virtual-garden.yaml"} {
		t.Run(name, func(t *testing.T) {
			hooks := virtualGardenRegistrations(t, readObjects(t, filepath.Join(dir, name)), r.webhookAddr(), ca.CertPEM, st.skipped)
			st.registerForTest(ctx, t, hooks)
			st.placeThroughReplica(ctx, t, r)
		})
	}
}

// placeThroughReplica places a dry-run and a real Shoot through the
// registrations in place and checks that r answered the placement calls.
func (st *suite) placeThroughReplica(ctx context.Context, t *testing.T, r *replica) {
	t.Helper()
	before, err := scrape(r.metricsURL())
	require.NoError(t, err)
	probe := func() *unstructured.Unstructured {
		return newShoot(t.Name(), awsShoot("eu-central-1", "eu-central-1a"))
	}
	require.NoError(t, st.dryRunUntil(ctx, 20*time.Second, eventuallyInterval, probe, onAnySeed),
		"no Shoot placed through the virtual-garden registrations")
	sh := newShoot(t.Name(), awsShoot("eu-central-1", "eu-central-1a"))
	require.NoError(t, st.c.Create(ctx, sh))
	t.Cleanup(func() { _ = st.c.Delete(context.Background(), sh) })
	seed := st.placedSeed(t, sh)
	after, err := scrape(r.metricsURL())
	require.NoError(t, err)
	onMutate := func(l map[string]string) bool { return l["webhook"] == "/mutate-shoots" && l["code"] == "200" }
	calls := counterSum(after, "controller_runtime_webhook_requests_total", onMutate) -
		counterSum(before, "controller_runtime_webhook_requests_total", onMutate)
	require.Positive(t, calls, "the process reached by URL answered no /mutate-shoots call")
	t.Logf("Shoot %s placed on %s through URL registrations at %s; that process answered %.0f placement calls",
		sh.GetName(), seed, r.webhookAddr(), calls)
}

// serviceAccountKubeconfig writes a kubeconfig for the shipped
// ServiceAccount seedwarden/seedwarden by token, straight to the API server.
func (st *suite) serviceAccountKubeconfig(ctx context.Context, t *testing.T) string {
	t.Helper()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "seedwarden", Namespace: seedwardenNamespace}}
	if err := st.c.Create(ctx, sa); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	tr, err := st.cs.CoreV1().ServiceAccounts(seedwardenNamespace).CreateToken(ctx, "seedwarden",
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(3600))}}, metav1.CreateOptions{})
	require.NoError(t, err, "TokenRequest for seedwarden/seedwarden")
	kc := clientcmdapi.NewConfig()
	kc.Clusters["virtual-garden"] = &clientcmdapi.Cluster{Server: st.admin.Host, CertificateAuthorityData: st.admin.CAData}
	kc.AuthInfos["seedwarden"] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	kc.Contexts["virtual-garden"] = &clientcmdapi.Context{Cluster: "virtual-garden", AuthInfo: "seedwarden"}
	kc.CurrentContext = "virtual-garden"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, clientcmd.WriteToFile(*kc, path))
	require.NoError(t, os.Chmod(path, 0o600))
	return path
}

// virtualGardenRegistrations takes the webhook configurations of a
// virtual-garden rendering: every webhook by URL at addr (none by Service),
// cert-manager's injection done by hand (bundle), the webhooks the server
// does not serve left out as in the suite's registration.
func virtualGardenRegistrations(t *testing.T, objs []*unstructured.Unstructured, addr string, bundle []byte, skipped map[string]string) virtualGardenHooks {
	t.Helper()
	byURL := func(name string, cc *admissionregistrationv1.WebhookClientConfig) bool {
		require.Nil(t, cc.Service, "webhook %s registered by Service", name)
		require.NotNil(t, cc.URL, "webhook %s without url", name)
		u, err := url.Parse(*cc.URL)
		require.NoError(t, err)
		require.Equal(t, addr, u.Host, "webhook %s", name)
		cc.CABundle = bundle
		_, skip := skipped[name]
		return !skip
	}
	var h virtualGardenHooks
	for _, o := range objs {
		switch o.GetKind() {
		case "MutatingWebhookConfiguration":
			var m admissionregistrationv1.MutatingWebhookConfiguration
			require.NoError(t, k8sruntime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &m))
			var keep []admissionregistrationv1.MutatingWebhook
			for _, w := range m.Webhooks {
				if byURL(w.Name, &w.ClientConfig) {
					keep = append(keep, w)
				}
			}
			m.Webhooks = keep
			h.mutating = append(h.mutating, m)
		case "ValidatingWebhookConfiguration":
			var v admissionregistrationv1.ValidatingWebhookConfiguration
			require.NoError(t, k8sruntime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &v))
			var keep []admissionregistrationv1.ValidatingWebhook
			for _, w := range v.Webhooks {
				if byURL(w.Name, &w.ClientConfig) {
					keep = append(keep, w)
				}
			}
			v.Webhooks = keep
			h.validating = append(h.validating, v)
		}
	}
	require.Len(t, h.mutating, 1)
	require.Len(t, h.validating, 2, "the base's and the resource-size Component's")
	return h
}

// registerForTest puts hooks in place of the suite's registrations (same
// names; others created) until t ends, then restores the suite's and waits
// until a dry run is placed through them again.
func (st *suite) registerForTest(ctx context.Context, t *testing.T, h virtualGardenHooks) {
	t.Helper()
	var savedM admissionregistrationv1.MutatingWebhookConfiguration
	var savedV admissionregistrationv1.ValidatingWebhookConfiguration
	require.NoError(t, st.c.Get(ctx, keyOf("", "seedwarden"), &savedM))
	require.NoError(t, st.c.Get(ctx, keyOf("", "seedwarden"), &savedV))
	var created []client.Object
	put := func(obj client.Object) {
		err := st.c.Create(ctx, obj)
		if apierrors.IsAlreadyExists(err) {
			cur := obj.DeepCopyObject().(client.Object)
			require.NoError(t, st.c.Get(ctx, keyOf("", obj.GetName()), cur))
			obj.SetResourceVersion(cur.GetResourceVersion())
			err = st.c.Update(ctx, obj)
		} else if err == nil {
			created = append(created, obj)
		}
		require.NoError(t, err, "register %s", obj.GetName())
	}
	t.Cleanup(func() {
		ctx := context.Background()
		for _, obj := range created {
			if err := st.c.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("delete %s: %v", obj.GetName(), err)
			}
		}
		for _, saved := range []client.Object{&savedM, &savedV} {
			cur := saved.DeepCopyObject().(client.Object)
			require.NoError(t, st.c.Get(ctx, keyOf("", saved.GetName()), cur))
			saved.SetResourceVersion(cur.GetResourceVersion())
			require.NoError(t, st.c.Update(ctx, saved), "restore %s", saved.GetName())
		}
		probe := func() *unstructured.Unstructured {
			return newShoot(t.Name(), awsShoot("eu-central-1", "eu-central-1a"))
		}
		require.NoError(t, st.dryRunUntil(ctx, 20*time.Second, eventuallyInterval, probe, onAnySeed),
			"the suite's webhook registration does not take effect again")
	})
	for i := range h.mutating {
		m := h.mutating[i]
		put(&m)
	}
	for i := range h.validating {
		v := h.validating[i]
		put(&v)
	}
}
