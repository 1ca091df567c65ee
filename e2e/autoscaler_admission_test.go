package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/autoscalingapi"
	"github.com/seedwarden/seedwarden/internal/seedmanagement"
)

// Users of the garden namespace the SeedAutoscaler admission test
// impersonates: both may write SeedAutoscalers; only the scaler may update
// managedseedsets/scale.
const (
	autoscalerEditor = "e2e-sas-editor@example.com"
	setScaler        = "e2e-set-scaler@example.com"
)

// TestAutoscalerAdmission: the SeedAutoscaler webhook, registered as
// deploy/manifests has it, with the webhook process under the shipped
// RBAC. A user who may write SeedAutoscalers but not update
// managedseedsets/scale is refused a SeedAutoscaler with min=max=3 (the
// set stays at 1, nothing is stored), and so is a retargeting or a wider
// range of a SeedAutoscaler someone allowed to scale made; a user who may
// scale is let through once, and a second SeedAutoscaler for the same set
// is refused with a message naming the first.
func TestAutoscalerAdmission(t *testing.T) {
	st := need(t)
	st.startTest(t, webhookSeedAutoscaler)
	ctx := context.Background()
	const set, other = "e2e-admission", "e2e-admission-other"
	key := st.createManagedSeedSet(t, set, 1, 2)
	st.createManagedSeedSet(t, other, 1, 2)
	editor, scaler := st.autoscalerUsers(t)

	pinned := func(name, target string) *autoscalingapi.SeedAutoscaler {
		sas := seedAutoscaler(name, target, 3, 3, 50, time.Minute)
		sas.Namespace, sas.Labels = gardenNamespace, map[string]string{testLabel: labelValue(t.Name())}
		// Dry run: what the webhook lets through scales nothing here, so
		// no ManagedSeedSet controller needs playing.
		sas.Spec.DryRun = true
		return sas
	}
	deleteAfter := func(sas *autoscalingapi.SeedAutoscaler) {
		t.Cleanup(func() { _ = st.c.Delete(context.Background(), sas) })
	}

	// The confused deputy: min=max=3 from a user who may not scale.
	sas := pinned("e2e-admission-editor", set)
	sas.Spec.DryRun = false
	err := editor.Create(ctx, sas)
	deleteAfter(sas)
	requireDenied(t, err, webhookSeedAutoscaler)
	assert.Contains(t, err.Error(), fmt.Sprintf(`user %q may not make SeedAutoscaler %s/e2e-admission-editor scale ManagedSeedSet %q: `+
		`that needs permission to update managedseedsets/scale (seedmanagement.gardener.cloud) in namespace %q`, autoscalerEditor, gardenNamespace, set, gardenNamespace))
	st.requireNoSeedAutoscaler(t, "e2e-admission-editor")

	// The scaler may.
	first := pinned("e2e-admission-first", set)
	require.NoError(t, scaler.Create(ctx, first))
	deleteAfter(first)

	// A second one for the set, even from the scaler, is refused and
	// names the first.
	second := pinned("e2e-admission-second", set)
	err = scaler.Create(ctx, second)
	deleteAfter(second)
	requireDenied(t, err, webhookSeedAutoscaler)
	assert.Contains(t, err.Error(), fmt.Sprintf("ManagedSeedSet %s/%s is already scaled by SeedAutoscaler %s/e2e-admission-first", gardenNamespace, set, gardenNamespace))
	st.requireNoSeedAutoscaler(t, "e2e-admission-second")

	// The editor may not retarget the scaler's, widen its range or make it
	// write; a change of its pace only is theirs to make.
	for what, change := range map[string]func(*autoscalingapi.SeedAutoscaler){
		"retarget":          func(s *autoscalingapi.SeedAutoscaler) { s.Spec.ScaleTargetRef.Name = other },
		"raise maxReplicas": func(s *autoscalingapi.SeedAutoscaler) { s.Spec.MaxReplicas = 6 },
		"turn dry run off":  func(s *autoscalingapi.SeedAutoscaler) { s.Spec.DryRun = false },
	} {
		cur := &autoscalingapi.SeedAutoscaler{}
		require.NoError(t, editor.Get(ctx, client.ObjectKeyFromObject(first), cur))
		changed := cur.DeepCopy()
		change(changed)
		// A merge patch: the controller's status writes move the
		// resourceVersion on, which an update would conflict with.
		err := editor.Patch(ctx, changed, client.MergeFrom(cur))
		requireDenied(t, err, webhookSeedAutoscaler)
		assert.Contains(t, err.Error(), "needs permission to update managedseedsets/scale", what)
	}
	cur := &autoscalingapi.SeedAutoscaler{}
	require.NoError(t, editor.Get(ctx, client.ObjectKeyFromObject(first), cur))
	paced := cur.DeepCopy()
	paced.Spec.Behavior.ScaleDown.StabilizationWindowSeconds = ptrTo(int32(120))
	require.NoError(t, editor.Patch(ctx, paced, client.MergeFrom(cur)), "behavior only paces what the scaler allowed")

	// Through all of it the set kept its one replica.
	spec, _, err := st.scaleOf(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, int32(1), spec, "a refused SeedAutoscaler scaled the set")
}

// requireNoSeedAutoscaler requires that SeedAutoscaler garden/name was not
// stored.
func (st *suite) requireNoSeedAutoscaler(t *testing.T, name string) {
	t.Helper()
	err := st.c.Get(context.Background(), keyOf(gardenNamespace, name), &autoscalingapi.SeedAutoscaler{})
	require.Error(t, err, "SeedAutoscaler %s was stored", name)
	require.True(t, client.IgnoreNotFound(err) == nil, "%v", err)
}

// autoscalerUsers creates, for t, the Roles of the garden namespace that let
// autoscalerEditor and setScaler write SeedAutoscalers and setScaler also
// update managedseedsets/scale, and waits until the authorizer answers as
// they say.
func (st *suite) autoscalerUsers(t *testing.T) (editor, scaler client.Client) {
	t.Helper()
	ctx := context.Background()
	binding := func(name, role, user string) *rbacv1.RoleBinding {
		return &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: gardenNamespace},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
		}
	}
	rbac := []client.Object{
		&rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Name: "e2e-seedautoscaler-editor", Namespace: gardenNamespace},
			Rules: []rbacv1.PolicyRule{{
				APIGroups: []string{autoscalingapi.GroupName}, Resources: []string{autoscalingapi.ResourceSeedAutoscaler},
				Verbs: []string{"create", "get", "list", "watch", "update", "patch", "delete"},
			}},
		},
		&rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Name: "e2e-managedseedset-scaler", Namespace: gardenNamespace},
			Rules: []rbacv1.PolicyRule{{
				APIGroups: []string{seedmanagement.GroupName}, Resources: []string{"managedseedsets/scale"}, Verbs: []string{"get", "update"},
			}},
		},
		binding("e2e-sas-editor-edit", "e2e-seedautoscaler-editor", autoscalerEditor),
		binding("e2e-set-scaler-edit", "e2e-seedautoscaler-editor", setScaler),
		binding("e2e-set-scaler-scale", "e2e-managedseedset-scaler", setScaler),
	}
	for _, o := range rbac {
		require.NoError(t, st.c.Create(ctx, o))
		t.Cleanup(func() { _ = st.c.Delete(context.Background(), o) })
	}
	eventually(t, 10*time.Second, func() error {
		for _, c := range []struct {
			user, group, resource, subresource string
			want                               bool
		}{
			{autoscalerEditor, autoscalingapi.GroupName, autoscalingapi.ResourceSeedAutoscaler, "", true},
			{autoscalerEditor, seedmanagement.GroupName, "managedseedsets", "scale", false},
			{setScaler, autoscalingapi.GroupName, autoscalingapi.ResourceSeedAutoscaler, "", true},
			{setScaler, seedmanagement.GroupName, "managedseedsets", "scale", true},
		} {
			verb := "update"
			if c.subresource == "" {
				verb = "create"
			}
			sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
				User: c.user, Groups: []string{"system:authenticated"},
				ResourceAttributes: &authorizationv1.ResourceAttributes{
					Namespace: gardenNamespace, Verb: verb, Group: c.group, Resource: c.resource, Subresource: c.subresource,
				},
			}}
			if err := st.c.Create(ctx, sar); err != nil {
				return err
			}
			if sar.Status.Allowed != c.want {
				return fmt.Errorf("%s %s %s/%s: allowed=%t, want %t", c.user, verb, c.resource, c.subresource, sar.Status.Allowed, c.want)
			}
		}
		return nil
	}, "the e2e Roles do not take effect")
	editor, _ = st.clientAs(t, autoscalerEditor)
	scaler, _ = st.clientAs(t, setScaler)
	return editor, scaler
}
