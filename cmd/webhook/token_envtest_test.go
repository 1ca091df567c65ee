package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/seedwarden/seedwarden/hack/devcerts/certgen"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/handlers"
	"github.com/seedwarden/seedwarden/internal/placementtoken"
	"github.com/seedwarden/seedwarden/internal/testenv"
)

// skipMutationLabel keeps a Shoot from the mutating webhook in this test,
// as a failurePolicy Ignore webhook that timed out would.
const skipMutationLabel = "test.seedwarden.io/skip-mutation"

// TestGenerateNameTokenAgainstAPIServer: a generateName Shoot's token, with
// a real kube-apiserver calling the webhooks (placement mode patch). It shows what
// the design rests on (the mutating webhook sees no name, the validating
// webhook sees the generated name and the uid) and that a generateName
// Shoot's token, copied onto a second generateName Shoot that skipped the
// mutating webhook, does not give a user without binding permission the
// seed, while the first Shoot was placed with it.
func TestGenerateNameTokenAgainstAPIServer(t *testing.T) {
	env, restCfg := testenv.Start(t, "../../e2e/crds")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := client.New(restCfg, client.Options{Scheme: cache.NewScheme()})
	require.NoError(t, err)
	createLandscape(ctx, t, c, "garden", "garden-dev")

	certDir := devCertDir(t)
	port, metricsPort, healthPort := freePort(t), freePort(t), freePort(t)
	cfg := writeFile(t, "config.yaml", configHeader+fmt.Sprintf(`
server: {port: %d, certDir: %s}
metrics: {bindAddress: "127.0.0.1:%d"}
health: {bindAddress: "127.0.0.1:%d"}
placement: {keyFile: %s, mode: patch}
schedulerName: default-scheduler
pendingShoots: {enabled: false}
`, port, certDir, metricsPort, healthPort, placementKeyFile(t)))
	srv := startCluster(ctx, t, cfg, adminKubeconfig(t, env), healthPort)
	defer srv.stopAndWait(t, gracefulShutdownTimeout+10*time.Second)
	registerShootWebhooks(ctx, t, c, certDir, port)

	// jane may create Shoots, not bind them.
	jane := userClient(ctx, t, env, c, "jane")

	// The first Shoot: placed by the mutating webhook, admitted on its token.
	shoot := &unstructured.Unstructured{}
	require.NoError(t, json.Unmarshal(yamlToJSON(t, "../../examples/shoot.yaml"), &shoot.Object))
	shoot.SetNamespace("garden-dev")
	shoot.SetName("")
	shoot.SetGenerateName("web-")
	first := shoot.DeepCopy()
	require.NoError(t, jane.Create(ctx, first))
	seed, _, _ := unstructured.NestedString(first.Object, "spec", "seedName")
	token := first.GetAnnotations()[placementtoken.Annotation]
	require.NotEmpty(t, seed, "placed by the webhook")
	require.True(t, strings.HasPrefix(token, "v2."), token)
	assert.True(t, strings.HasPrefix(first.GetName(), "web-"))
	key, err := base64.StdEncoding.DecodeString(testPlacementKey)
	require.NoError(t, err)
	signer, err := placementtoken.NewSigner([][]byte{key}, time.Minute, nil)
	require.NoError(t, err)
	assert.NoError(t, signer.Verify(token, placementtoken.Subject{Namespace: "garden-dev", GenerateName: "web-", Seed: seed}),
		"the mutating webhook saw no name: the token is signed for the prefix alone")

	// The copy: same prefix and token, past the mutating webhook.
	copied := shoot.DeepCopy()
	copied.SetLabels(map[string]string{skipMutationLabel: "true"})
	copied.SetAnnotations(map[string]string{placementtoken.Annotation: token})
	require.NoError(t, unstructured.SetNestedField(copied.Object, seed, "spec", "seedName"))
	err = jane.Create(ctx, copied)
	require.Error(t, err, "the copy was admitted as %s", copied.GetName())
	assert.Contains(t, err.Error(), "may not set spec.seedName")
	assert.Contains(t, err.Error(), fmt.Sprintf("placement token was already used by another Shoot: garden-dev/%s (uid %q)", first.GetName(), first.GetUID()),
		"the validating webhook saw the first Shoot's generated name and uid")

	// The first Shoot lives on: an UPDATE is not about its token.
	first.SetLabels(map[string]string{"team": "web"})
	assert.NoError(t, jane.Update(ctx, first))
}

// registerShootWebhooks points kube-apiserver at the server on port: the
// mutating webhook (Shoot CREATE, failurePolicy Fail, skipping Shoots with
// skipMutationLabel) and the binding webhook.
func registerShootWebhooks(ctx context.Context, t *testing.T, c client.Client, certDir string, port int) {
	t.Helper()
	ca, err := os.ReadFile(filepath.Join(certDir, certgen.CAFile))
	require.NoError(t, err)
	clientConfig := func(path string) admissionregistrationv1.WebhookClientConfig {
		return admissionregistrationv1.WebhookClientConfig{URL: ptr.To(fmt.Sprintf("https://localhost:%d%s", port, path)), CABundle: ca}
	}
	rules := func(ops ...admissionregistrationv1.OperationType) []admissionregistrationv1.RuleWithOperations {
		return []admissionregistrationv1.RuleWithOperations{{Operations: ops, Rule: admissionregistrationv1.Rule{
			APIGroups: []string{"core.gardener.cloud"}, APIVersions: []string{"v1beta1"}, Resources: []string{"shoots"},
		}}}
	}
	none := admissionregistrationv1.SideEffectClassNoneOnDryRun
	fail := admissionregistrationv1.Fail
	require.NoError(t, c.Create(ctx, &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "seedwarden-test"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name: "shoots.seedwarden.io", ClientConfig: clientConfig(handlers.MutateShootsPath), Rules: rules(admissionregistrationv1.Create),
			ObjectSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: skipMutationLabel, Operator: metav1.LabelSelectorOpDoesNotExist}}},
			SideEffects:    &none, FailurePolicy: &fail, AdmissionReviewVersions: []string{"v1"},
		}},
	}))
	require.NoError(t, c.Create(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "seedwarden-test"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name: "binding.shoots.seedwarden.io", ClientConfig: clientConfig(handlers.WebhookBindingPath),
			Rules:       rules(admissionregistrationv1.Create, admissionregistrationv1.Update),
			SideEffects: &none, FailurePolicy: &fail, AdmissionReviewVersions: []string{"v1"},
		}},
	}))
}

// userClient returns a client for user name, who may create, get and update
// Shoots in garden-dev and nothing else.
func userClient(ctx context.Context, t *testing.T, env *envtest.Environment, admin client.Client, name string) client.Client {
	t.Helper()
	require.NoError(t, admin.Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: "garden-dev", Name: "shoot-creator"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"core.gardener.cloud"}, Resources: []string{"shoots"}, Verbs: []string{"create", "get", "update"}}},
	}))
	require.NoError(t, admin.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: "garden-dev", Name: "shoot-creator"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "shoot-creator"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: name}},
	}))
	user, err := env.AddUser(envtest.User{Name: name, Groups: []string{"system:authenticated"}}, nil)
	require.NoError(t, err)
	c, err := client.New(user.Config(), client.Options{Scheme: cache.NewScheme()})
	require.NoError(t, err)
	return c
}
