package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// The webhook runs as the ServiceAccount of deploy/manifests with exactly
// the RBAC shipped there (applied from the files), so any request the code
// makes that the shipped roles do not allow fails the suite: the deploy
// tests list the grants and prove there is nothing more, this proves there
// is nothing less.
const (
	serviceAccountUser = "system:serviceaccount:" + seedwardenNamespace + ":seedwarden"
)

// shippedRBACFiles hold the ServiceAccount and every role and binding.
var shippedRBACFiles = []string{
	"deploy/manifests/serviceaccount.yaml",
	"deploy/manifests/rbac-cluster.yaml",
	"deploy/manifests/rbac-namespace.yaml",
	"deploy/manifests/rbac-garden.yaml",
	"deploy/manifests/rbac-autoscaler.yaml",
	"deploy/manifests/rbac-seeddrain.yaml",
	"deploy/manifests/rbac-audit.yaml",
}

// applyShippedRBAC creates the shipped ServiceAccount, roles and bindings,
// and what the e2e configuration needs beyond the shipped one: patch on
// shoots, for pendingShoots.bindMode update (the e2e API server serves Shoots
// from a CRD, without the binding subresource), as deploy/README.md tells
// operators in that case.
func (st *suite) applyShippedRBAC(ctx context.Context) error {
	n := 0
	for _, rel := range shippedRBACFiles {
		created, err := st.createManifests(ctx, rel)
		if err != nil {
			return err
		}
		n += created
	}
	if onGardener() {
		// bindMode binding: the shipped RBAC alone.
		logf("shipped RBAC applied (%d objects from %v); the webhook runs as %s", n, shippedRBACFiles, serviceAccountUser)
		return nil
	}
	const bindModeUpdate = "seedwarden-e2e-bind-mode-update"
	extra := []any{
		&rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: bindModeUpdate},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"core.gardener.cloud"}, Resources: []string{"shoots"}, Verbs: []string{"patch"}}},
		},
		&rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: bindModeUpdate},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: bindModeUpdate},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "seedwarden", Namespace: seedwardenNamespace}},
		},
	}
	for _, o := range extra {
		var err error
		switch o := o.(type) {
		case *rbacv1.ClusterRole:
			err = st.c.Create(ctx, o)
		case *rbacv1.ClusterRoleBinding:
			err = st.c.Create(ctx, o)
		}
		if err != nil {
			return fmt.Errorf("e2e RBAC for bindMode update: %w", err)
		}
	}
	logf("shipped RBAC applied (%d objects from %v); the webhook runs as %s", n, shippedRBACFiles, serviceAccountUser)
	return nil
}

// asServiceAccount is cfg impersonating the shipped ServiceAccount, with
// the groups the API server gives service accounts.
func asServiceAccount(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Impersonate = rest.ImpersonationConfig{
		UserName: serviceAccountUser,
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + seedwardenNamespace, "system:authenticated"},
	}
	return c
}

// forbiddenRequests are the lines of every webhook log in the work
// directory that report a request refused by RBAC.
func (st *suite) forbiddenRequests() []string {
	logs, _ := filepath.Glob(filepath.Join(st.work, "*.log"))
	var out []string
	for _, l := range logs {
		lines, err := readLines(l, 0)
		if err != nil {
			out = append(out, fmt.Sprintf("%s: %v", l, err))
			continue
		}
		for _, line := range lines {
			// An authorizer's refusal reads `… is forbidden: User "…"
			// cannot …`; other refusals (e.g. NamespaceLifecycle's "unable to
			// create new content in namespace … because it is being
			// terminated", an event racing a test's namespace deletion)
			// are not RBAC's.
			if strings.Contains(line, "is forbidden: User ") {
				out = append(out, filepath.Base(l)+": "+line)
			}
		}
	}
	return out
}
