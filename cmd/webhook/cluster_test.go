package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/handlers"
	"github.com/seedwarden/seedwarden/internal/testenv"
)

// TestServeCluster runs `webhook serve --kubeconfig` against a real
// kube-apiserver serving the Gardener CRDs: informers fill the Store, /readyz
// turns ready, and the webhook places a Shoot from what it watched.
func TestServeCluster(t *testing.T) {
	env, restCfg := testenv.Start(t, "../../e2e/crds")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := client.New(restCfg, client.Options{Scheme: cache.NewScheme()})
	require.NoError(t, err)
	createLandscape(ctx, t, c, "garden", "garden-dev")
	kubeconfigPath := adminKubeconfig(t, env)

	certDir := devCertDir(t)
	port, metricsPort, healthPort := freePort(t), freePort(t), freePort(t)
	keyFile := placementKeyFile(t)
	cfg := writeFile(t, "config.yaml", configHeader+fmt.Sprintf(`
server: {port: %d, certDir: %s}
metrics: {bindAddress: "127.0.0.1:%d"}
health: {bindAddress: "127.0.0.1:%d"}
placement: {keyFile: %s, mode: patch}
# No gardener-scheduler runs here: Shoots created without the webhook are ours.
schedulerName: default-scheduler
# The CRDs have no binding subresource. A minute of backoff: a binding
# within seconds can only come from the Seed event.
pendingShoots: {bindMode: update, backoffBase: 1m}
headroom: {interval: 1s, profiles: [{name: cluster-eu, shoot: %s}]}
`, port, certDir, metricsPort, healthPort, keyFile, yamlToJSON(t, "../../examples/shoot.yaml")))
	srv := startCluster(ctx, t, cfg, kubeconfigPath, healthPort)
	assert.Equal(t, http.StatusOK, get(t, fmt.Sprintf("http://127.0.0.1:%d/readyz/informers", healthPort)))

	client := devClient(t, certDir)
	url := fmt.Sprintf("https://localhost:%d%s", port, handlers.MutateShootsPath)
	resp := admit(t, client, url, "../../examples/shoot.yaml")
	assert.True(t, resp.Allowed, "%+v", resp.Result)
	assert.Contains(t, string(resp.Patch), `{"op":"add","path":"/spec/seedName","value":"aws-eu2"}`)
	assert.Contains(t, body(t, fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort)), `seedwarden_seed_charged_shoots{provider="aws",region="eu-central-1",seed="aws-eu1"} 4`)
	// The headroom runner runs in cluster mode too, once the informers have synced.
	assert.Eventually(t, func() bool {
		return regexp.MustCompile(`(?m)^seedwarden_headroom_shoots\{profile="cluster-eu"\} [1-9]`).MatchString(body(t, fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort)))
	}, 15*time.Second, 100*time.Millisecond, "no headroom exported")

	// The binding webhook asks this API server (RBAC) with SubjectAccessReviews.
	bindingURL := fmt.Sprintf("https://localhost:%d%s", port, handlers.WebhookBindingPath)
	jane := authenticationv1.UserInfo{Username: "jane.doe@example.com", Groups: []string{"system:authenticated"}}
	shoot := yamlToJSON(t, "../../examples/shoot.yaml")
	placed := applyJSONPatch(t, shoot, resp.Patch)
	r := send(t, client, bindingURL, "own", admissionv1.Create, "", placed, nil, jane)
	assert.True(t, r.Allowed, "own placement: %+v", r.Result)
	r = send(t, client, bindingURL, "manual", admissionv1.Create, "", setSeed(t, shoot, "aws-eu1"), nil, jane)
	assert.False(t, r.Allowed)
	assert.Contains(t, r.Result.Message, `user "jane.doe@example.com" may not set spec.seedName to "aws-eu1"`)
	admin := authenticationv1.UserInfo{Username: "admin", Groups: []string{"system:masters", "system:authenticated"}}
	r = send(t, client, bindingURL, "admin", admissionv1.Create, "", setSeed(t, shoot, "aws-eu1"), nil, admin)
	assert.True(t, r.Allowed, "%+v", r.Result)

	// Granting jane update on shoots/binding in garden-dev lets her bind (a
	// Shoot of another name: answers are cached per Shoot for a few seconds).
	require.NoError(t, c.Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: "garden-dev", Name: "shoot-binder"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"core.gardener.cloud"}, Resources: []string{"shoots/binding"}, Verbs: []string{"update"}}},
	}))
	require.NoError(t, c.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: "garden-dev", Name: "jane-binds"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "shoot-binder"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: "rbac.authorization.k8s.io", Name: "jane.doe@example.com"}},
	}))
	other := bytes.Replace(setSeed(t, shoot, "aws-eu1"), []byte(`"name":"webshop"`), []byte(`"name":"webshop-2"`), 1)
	require.Eventually(t, func() bool {
		return send(t, client, bindingURL, "granted", admissionv1.Create, "", other, nil, jane).Allowed
	}, 20*time.Second, 200*time.Millisecond, "RBAC grants binding")

	// Namespace deletion, decided from the synced cache.
	nsURL := fmt.Sprintf("https://localhost:%d%s", port, handlers.WebhookNamespaceDeletionPath)
	r = sendNamespaceDelete(t, client, nsURL, "garden-dev", admin)
	assert.False(t, r.Allowed)
	assert.Contains(t, r.Result.Message, `it belongs to project "dev", which is not being deleted`)
	assert.Contains(t, r.Result.Message, "Shoot(s)")
	r = sendNamespaceDelete(t, client, nsURL, "empty", admin)
	assert.True(t, r.Allowed, "%+v", r.Result)

	// The retry controller runs on the leader (this one) and binds a Shoot
	// that no seed could take once the full seed gets room.
	var lease coordinationv1.Lease
	require.Eventually(t, func() bool {
		return c.Get(ctx, types.NamespacedName{Namespace: "garden", Name: "seedwarden-pending-shoots"}, &lease) == nil &&
			lease.Spec.HolderIdentity != nil && *lease.Spec.HolderIdentity != ""
	}, 30*time.Second, 100*time.Millisecond, "leader Lease garden/seedwarden-pending-shoots")
	pendingShoot := &api.Shoot{
		ObjectMeta: metav1.ObjectMeta{Namespace: "garden-dev", Name: "pending"},
		Spec: api.ShootSpec{
			CloudProfile: &api.CloudProfileReference{Kind: api.KindCloudProfile, Name: "gcp"},
			Region:       "us-central1",
			Provider:     api.ShootProvider{Type: "gcp", Workers: []api.Worker{{Name: "worker", Zones: []string{"us-central1-a"}}}},
		},
	}
	require.NoError(t, c.Create(ctx, pendingShoot))
	require.Eventually(t, func() bool {
		var s api.Shoot
		require.NoError(t, c.Get(ctx, types.NamespacedName{Namespace: "garden-dev", Name: "pending"}, &s))
		op := s.Status.LastOperation
		return op != nil && op.Type == "Create" && op.State == "Pending" && strings.Contains(op.Description, "gcp-us1")
	}, 20*time.Second, 50*time.Millisecond, "status.lastOperation Create/Pending")
	assert.Contains(t, body(t, fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort)), "seedwarden_pending_shoots 1")
	var seed api.Seed
	require.NoError(t, c.Get(ctx, types.NamespacedName{Name: "gcp-us1"}, &seed))
	seed.Status.Allocatable[api.ResourceShoots] = resource.MustParse("4")
	require.NoError(t, c.Status().Update(ctx, &seed))
	require.Eventually(t, func() bool {
		var s api.Shoot
		require.NoError(t, c.Get(ctx, types.NamespacedName{Namespace: "garden-dev", Name: "pending"}, &s))
		return s.Spec.SeedName != nil && *s.Spec.SeedName == "gcp-us1"
	}, 10*time.Second, 50*time.Millisecond, "bound to gcp-us1 after its allocatable was raised")
	require.Eventually(t, func() bool {
		m := body(t, fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort))
		return strings.Contains(m, "seedwarden_pending_shoots 0") &&
			strings.Contains(m, `seedwarden_scheduling_retries_total{result="scheduled"} 1`) &&
			strings.Contains(m, `leader_election_master_status{name="seedwarden-pending-shoots"} 1`)
	}, 10*time.Second, 50*time.Millisecond, "pending metrics on controller-runtime's registry")

	srv.stopAndWait(t, gracefulShutdownTimeout+10*time.Second)
	// The Lease was released on shutdown (LeaderElectionReleaseOnCancel), so
	// another replica takes over at once.
	require.NoError(t, c.Get(ctx, types.NamespacedName{Namespace: "garden", Name: "seedwarden-pending-shoots"}, &lease))
	assert.Empty(t, deref(lease.Spec.HolderIdentity), "the leader Lease is released on shutdown")
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
