package e2e

import (
	"context"
	"fmt"
	"path/filepath"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/api"
)

// gardener-scheduler runs as it does in a garden: as its ServiceAccount,
// with the ClusterRole Gardener gives it, not as the garden's admin. A
// system:masters client is never sent to delegated authorization (no
// SubjectAccessReview per request) nor evaluated by RBAC, so an admin
// gardener-scheduler would cost the API servers less per Shoot than the
// real one, and the side-by-side comparison would favour it (BENCHMARKS.md
// §34). It refuses kubeconfigs that impersonate, so the garden writes it a
// client certificate of the ServiceAccount's name and groups (-user).

const (
	// gardenerSchedulerUser is the ServiceAccount gardener-scheduler runs
	// as (Gardener's operator and charts put it into kube-system).
	gardenerSchedulerUser = "system:serviceaccount:kube-system:gardener-scheduler"
	// gardenerSchedulerRole is Gardener's name of its ClusterRole and
	// ClusterRoleBinding.
	gardenerSchedulerRole = "gardener.cloud:system:scheduler"
)

// gardenerSchedulerRules are the rules of that ClusterRole at the pinned
// Gardener commit (pkg/component/gardener/scheduler/rbac.go); the Lease
// rules do not matter here, leader election is off.
var gardenerSchedulerRules = []rbacv1.PolicyRule{
	{APIGroups: []string{"", "events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch", "update"}},
	{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"create", "delete", "get", "list", "watch", "patch", "update"}},
	{APIGroups: []string{api.GroupName}, Resources: []string{"cloudprofiles", "namespacedcloudprofiles", "projects", "seeds"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{api.GroupName}, Resources: []string{"shoots", "shoots/status"}, Verbs: []string{"get", "list", "watch", "patch", "update"}},
	{APIGroups: []string{api.GroupName}, Resources: []string{"shoots/binding"}, Verbs: []string{"update"}},
}

// gardenerSchedulerUserFlag is the garden's -user flag for it.
func (st *suite) gardenerSchedulerUserFlag() string {
	return gardenerSchedulerUser + ",system:serviceaccounts,system:serviceaccounts:kube-system=" + st.gardenerSchedulerKubeconfigPath()
}

func (st *suite) gardenerSchedulerKubeconfigPath() string {
	return filepath.Join(st.work, "gardener-scheduler.kubeconfig")
}

// gardenerSchedulerKubeconfig grants gardener-scheduler's ClusterRole (once
// per garden) and returns the kubeconfig the garden wrote for it.
func (st *suite) gardenerSchedulerKubeconfig(ctx context.Context) (string, error) {
	meta := metav1.ObjectMeta{Name: gardenerSchedulerRole}
	role := &rbacv1.ClusterRole{ObjectMeta: meta, Rules: gardenerSchedulerRules}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: meta,
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: gardenerSchedulerRole},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "kube-system", Name: "gardener-scheduler"}},
	}
	for _, obj := range []client.Object{role, binding} {
		if err := st.c.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return "", fmt.Errorf("gardener-scheduler's %T: %w", obj, err)
		}
	}
	return st.gardenerSchedulerKubeconfigPath(), nil
}
