package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/handlers"
	"github.com/seedwarden/seedwarden/internal/pending"
	"github.com/seedwarden/seedwarden/internal/placement"
	"github.com/seedwarden/seedwarden/internal/placementtoken"
)

// Users of the project namespace that the scheduling tests impersonate: both
// may create and edit Shoots; only the operator may update shoots/binding.
const (
	developer = "e2e-developer@example.com"
	operator  = "e2e-operator@example.com"
)

// projectUser is an impersonating client and the warnings of its responses.
type projectUser struct {
	c     client.Client
	warns *warnings
}

// projectUsers creates the Roles and RoleBindings of developer and operator
// for t (removed when it ends) and waits until the authorizer answers as
// they say.
func (st *suite) projectUsers(t *testing.T) (dev, op projectUser) {
	t.Helper()
	ctx := context.Background()
	rbac := []client.Object{
		&rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Name: "e2e-shoot-editor", Namespace: projectNamespace},
			Rules: []rbacv1.PolicyRule{{
				APIGroups: []string{api.GroupName}, Resources: []string{"shoots"},
				Verbs: []string{"create", "get", "list", "watch", "update", "patch", "delete"},
			}},
		},
		&rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Name: "e2e-shoot-binder", Namespace: projectNamespace},
			Rules: []rbacv1.PolicyRule{{
				APIGroups: []string{api.GroupName}, Resources: []string{"shoots/binding"}, Verbs: []string{"update"},
			}},
		},
		roleBinding("e2e-developer-edit", "e2e-shoot-editor", developer),
		roleBinding("e2e-operator-edit", "e2e-shoot-editor", operator),
		roleBinding("e2e-operator-bind", "e2e-shoot-binder", operator),
	}
	for _, o := range rbac {
		require.NoError(t, st.c.Create(ctx, o))
		t.Cleanup(func() { _ = st.c.Delete(context.Background(), o) })
	}
	dev.c, dev.warns = st.clientAs(t, developer)
	op.c, op.warns = st.clientAs(t, operator)
	// RBAC reaches the authorizer through its informer: wait until it answers
	// as the Roles say.
	eventually(t, 10*time.Second, func() error {
		for _, c := range []struct {
			user, subresource string
			verb              string
			want              bool
		}{
			{developer, "", "create", true},
			{developer, "binding", "update", false},
			{operator, "", "create", true},
			{operator, "binding", "update", true},
		} {
			sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
				User: c.user, Groups: []string{"system:authenticated"},
				ResourceAttributes: &authorizationv1.ResourceAttributes{
					Namespace: projectNamespace, Verb: c.verb, Group: api.GroupName, Resource: "shoots", Subresource: c.subresource,
				},
			}}
			if err := st.c.Create(ctx, sar); err != nil {
				return err
			}
			if sar.Status.Allowed != c.want {
				return fmt.Errorf("%s %s shoots/%s: allowed=%t, want %t", c.user, c.verb, c.subresource, sar.Status.Allowed, c.want)
			}
		}
		return nil
	}, "the e2e Roles do not take effect")
	return dev, op
}

func roleBinding(name, role, user string) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: projectNamespace},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}
}

// TestAnnouncedSeedBound (placement mode binding): a user who may not bind
// creates a Shoot; the webhook announces a seed (annotation, warning) without
// setting spec.seedName, so the ShootValidator emulation lets the CREATE
// through, and the retry controller binds exactly that seed and records
// SchedulingSuccessful. On the gardener target the bind goes through the
// real shoots/binding subresource and ShootDNS sets the seed's domain.
func TestAnnouncedSeedBound(t *testing.T) {
	st := need(t)
	if !bindingMode() {
		t.Skipf("placement mode %q: the webhook sets spec.seedName itself (TestPatchModeNeedsBindingPermission)", placementMode)
	}
	st.startTest(t, webhookPlace)
	ctx := context.Background()
	dev, _ := st.projectUsers(t)

	shoot := newShoot(t.Name(), awsShoot("eu-central-1", "eu-central-1b"))
	want := st.simulate(t, shoot)
	require.False(t, want.Unschedulable, "simulate finds no seed: %s", want.Message)
	dev.warns.take()
	require.NoError(t, dev.c.Create(ctx, shoot), "the developer's CREATE carries no spec.seedName: ShootValidator has nothing to refuse")
	announced := shoot.GetAnnotations()[placementtoken.SeedAnnotation]
	assert.Equal(t, want.Seed, announced, "annotation %s", placementtoken.SeedAnnotation)
	assert.NotEmpty(t, shoot.GetAnnotations()[placementtoken.Annotation], "annotation %s (the token)", placementtoken.Annotation)
	assert.Empty(t, seedName(shoot), "spec.seedName in the CREATE response")
	warning := handlers.AnnouncedWarningPrefix + strconv.Quote(announced)
	assert.Contains(t, dev.warns.take(), warning, "the admission warning announcing the seed")

	bound := st.placedSeed(t, shoot)
	assert.Equal(t, announced, bound, "bound to the announced seed")
	key := client.ObjectKeyFromObject(shoot)
	st.waitScheduledEvent(t, key, bound)
	if onGardener() {
		// The bind went through shoots/binding (gardener-apiserver refuses
		// any other way), where ShootDNS gives the Shoot the seed's domain.
		st.requireShootDNSDomain(t, key, bound)
	}
	t.Logf("developer's Shoot %s: announced %s (warning %q), bound to %s", key, announced, warning, bound)
}

// TestPatchModeNeedsBindingPermission (placement mode patch): the webhook
// writes spec.seedName into the CREATE, so the ShootValidator emulation,
// which runs after it, refuses the CREATE of a user who may not bind (as
// gardener-apiserver does: on the gardener target it is ShootValidator
// itself), while a user who may bind gets the Shoot placed and, once it
// exists, a SchedulingSuccessful event (and on the gardener target
// ShootDNS's domain of that seed).
func TestPatchModeNeedsBindingPermission(t *testing.T) {
	st := need(t)
	if bindingMode() {
		t.Skipf("placement mode %q: the webhook leaves spec.seedName to the retry controller (TestAnnouncedSeedBound)", placementMode)
	}
	st.startTest(t, webhookPlace)
	ctx := context.Background()
	dev, op := st.projectUsers(t)

	refused := newShoot(t.Name(), awsShoot("eu-central-1", "eu-central-1b"), withName("e2e-patch-member"))
	err := dev.c.Create(ctx, refused)
	requireDenied(t, err, shootValidatorPolicyName)
	assert.True(t, apierrors.IsForbidden(err), "want 403 Forbidden, got %v", err)
	assert.Contains(t, err.Error(), "spec.seedName")
	assert.True(t, apierrors.IsNotFound(st.c.Get(ctx, client.ObjectKeyFromObject(refused), &api.Shoot{})), "the Shoot must not exist")
	t.Logf("developer's CREATE, placed by the webhook in mode patch: %v", err)

	placed := newShoot(t.Name(), awsShoot("eu-central-1", "eu-central-1b"))
	want := st.simulate(t, placed)
	require.False(t, want.Unschedulable, "simulate finds no seed: %s", want.Message)
	require.NoError(t, op.c.Create(ctx, placed), "a user who may bind")
	assert.Equal(t, want.Seed, seedName(placed), "spec.seedName set by the webhook")
	key := client.ObjectKeyFromObject(placed)
	assert.Equal(t, want.Seed, seedNameOf(t, key), "stored spec.seedName")
	// At admission the Shoot does not exist yet; the placing replica records
	// gardener-scheduler's success event once it shows up in the watch.
	st.waitScheduledEvent(t, key, want.Seed)
	if onGardener() {
		// ShootDNS named it at the CREATE, before generateName gave it its
		// name: <random>.<project>.<the seed's default domain>.
		def := st.seedDefaultDomain(t, want.Seed)
		require.NotEmpty(t, def, "seed %s has no spec.dns.defaults", want.Seed)
		domain := st.shootDNSDomain(t, key)
		assert.True(t, strings.HasSuffix(domain, ".dev."+def), "spec.dns.domain %q, want a subdomain of dev.%s", domain, def)
	}
}

// TestDeletingSeedNeverChosen: a Seed with a deletionTimestamp (kept by a
// finalizer) takes no new Shoot, neither at admission nor from the retry
// controller, although it has room and is the only seed the Shoot selects.
func TestDeletingSeedNeverChosen(t *testing.T) {
	st := need(t)
	st.startTest(t, webhookPlace)
	ctx := context.Background()
	const (
		label     = "e2e.seedwarden.io/deleting-seed-test"
		name      = "e2e-deleting"
		finalizer = "e2e.seedwarden.io/hold"
	)
	selective := func() *unstructured.Unstructured {
		return newShoot(t.Name(), awsShoot("eu-central-1", "eu-central-1a"), func(u *unstructured.Unstructured) {
			must(unstructured.SetNestedStringMap(u.Object, map[string]string{label: "true"}, "spec", "seedSelector", "matchLabels"))
		})
	}

	var tmpl api.Seed
	require.NoError(t, st.c.Get(ctx, keyOf("", "aws-eu2"), &tmpl))
	sd := &api.Seed{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Finalizers: []string{finalizer},
			Labels: map[string]string{label: "true", testLabel: labelValue(t.Name())},
		},
		Spec:   *tmpl.Spec.DeepCopy(),
		Status: *tmpl.Status.DeepCopy(),
	}
	sd.Status.Allocatable = corev1.ResourceList{api.ResourceShoots: *resource.NewQuantity(10, resource.DecimalSI)}
	require.NoError(t, createWithStatus(ctx, st.c, sd))
	// The Shoots go first (cleanupShoots runs last), then the finalizer is
	// removed and the Seed disappears.
	t.Cleanup(func() {
		ctx := context.Background()
		patch := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`))
		if err := st.c.Patch(ctx, &api.Seed{ObjectMeta: metav1.ObjectMeta{Name: name}}, patch); client.IgnoreNotFound(err) != nil {
			t.Errorf("removing the finalizer of seed %s: %v", name, err)
		}
		if err := st.c.Delete(ctx, &api.Seed{ObjectMeta: metav1.ObjectMeta{Name: name}}); client.IgnoreNotFound(err) != nil {
			t.Errorf("deleting seed %s: %v", name, err)
		}
	})

	// Alive, the seed takes the Shoot: it is the only reason it fits.
	require.NoError(t, st.dryRunUntil(ctx, 10*time.Second, eventuallyInterval, selective, onSeed(name)),
		"the webhook does not place onto the new seed %s", name)

	require.NoError(t, st.c.Delete(ctx, &api.Seed{ObjectMeta: metav1.ObjectMeta{Name: name}}))
	var deleting api.Seed
	require.NoError(t, st.c.Get(ctx, keyOf("", name), &deleting))
	require.NotNil(t, deleting.DeletionTimestamp, "seed %s has no deletionTimestamp", name)
	deletedAt := time.Now()

	// Within a second of the deletion the webhook stops choosing it (its
	// cache has the update by then).
	err := st.dryRunUntil(ctx, 5*time.Second, eventuallyInterval, selective, func(sh *unstructured.Unstructured) error {
		if got := admittedSeed(sh); got != "" {
			return fmt.Errorf("dry run %s after the deletion placed on %q, a seed being deleted",
				time.Since(deletedAt).Round(time.Millisecond), got)
		}
		return nil
	})
	require.NoError(t, err, "the webhook still places onto seed %s, which is being deleted (exclusion of deleting seeds not in this branch?)", name)

	shoot := selective()
	require.NoError(t, st.c.Create(ctx, shoot))
	// Nor does the retry controller (which takes such a Shoot at once) bind it.
	st.requireNeverBound(t, shoot, fmt.Sprintf("a Shoot only seed %s, being deleted, could take", name))
}

// TestSelfHostedShootNeverBound: a Shoot with a control-plane worker pool
// (spec.provider.workers[].controlPlane) runs its control plane itself and
// has no seed: it is admitted without one (no spec.seedName, no announced
// seed) and the retry controller never binds it, though seeds have room.
func TestSelfHostedShootNeverBound(t *testing.T) {
	st := need(t)
	st.startTest(t, webhookPlace)
	ctx := context.Background()

	selfHosted := func(u *unstructured.Unstructured) {
		workers, _, err := unstructured.NestedSlice(u.Object, "spec", "provider", "workers")
		must(err)
		workers[0].(map[string]any)["controlPlane"] = map[string]any{}
		must(unstructured.SetNestedSlice(u.Object, workers, "spec", "provider", "workers"))
	}
	ordinary := newShoot(t.Name(), awsShoot("eu-central-1", "eu-central-1a"))
	require.False(t, st.simulate(t, ordinary).Unschedulable, "an ordinary Shoot like it must have a seed")

	shoot := newShoot(t.Name(), awsShoot("eu-central-1", "eu-central-1a"), selfHosted)
	require.NoError(t, st.c.Create(ctx, shoot))
	workers, _, _ := unstructured.NestedSlice(shoot.Object, "spec", "provider", "workers")
	require.NotEmpty(t, workers)
	_, kept := workers[0].(map[string]any)["controlPlane"]
	require.True(t, kept, "the API server dropped spec.provider.workers[0].controlPlane (Shoot CRD)")
	st.requireNeverBound(t, shoot, "a self-hosted Shoot")
}

// requireNeverBound checks that shoot (as its CREATE returned it), which
// what describes, was neither placed at admission nor bound by the retry
// controller within 3 s, and got no SchedulingSuccessful event.
func (st *suite) requireNeverBound(t *testing.T, shoot *unstructured.Unstructured, what string) {
	t.Helper()
	key := client.ObjectKeyFromObject(shoot)
	assert.Empty(t, admittedSeed(shoot), "%s was placed at admission", what)
	assert.Empty(t, seedName(shoot), "spec.seedName in the CREATE response")
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		require.Empty(t, seedNameOf(t, key), "the retry controller bound %s, %s", key, what)
		time.Sleep(200 * time.Millisecond)
	}
	evs, err := st.shootEvents(context.Background(), key, corev1.EventTypeNormal, pending.ReasonSchedulingSuccessful)
	require.NoError(t, err)
	assert.Empty(t, evs, "%s events for %s", pending.ReasonSchedulingSuccessful, what)
}

// TestPendingShootRetried: a Shoot that no seed can take (gcp-us1, the only
// seed for gcp us-central1, is full) is admitted without a seed and with a
// warning; the retry controller records why it waits (Warning event
// SchedulingFailed, status.lastOperation Create/Pending) and binds it within
// seconds of the seed's allocatable being raised. The controller backs off
// from 30s in this suite, so only the Seed event can have triggered that.
func TestPendingShootRetried(t *testing.T) {
	st := need(t)
	st.startTest(t, webhookPlace)
	ctx := context.Background()
	c, warns := st.clientAs(t, "")
	const seed = "gcp-us1"

	before, err := scrape(st.metricsURL())
	require.NoError(t, err)
	shoot := newShoot(t.Name(), gcpShoot("us-central1", "us-central1-a"))
	sim := st.simulate(t, shoot)
	require.True(t, sim.Unschedulable, "simulate places it on %s", sim.Seed)
	warns.take()
	require.NoError(t, c.Create(ctx, shoot))
	require.Empty(t, admittedSeed(shoot), "admitted without a seed")
	assert.True(t, slices.ContainsFunc(warns.take(), func(w string) bool {
		return strings.HasPrefix(w, handlers.UnschedulableWarningPrefix) && strings.Contains(w, seed)
	}), "the admission warning gives %s's reason", seed)
	key := client.ObjectKeyFromObject(shoot)

	// The Shoot goes before the seed is restored (cleanups run last first).
	var original resource.Quantity
	t.Cleanup(func() {
		ctx := context.Background()
		if err := st.deleteShoot(ctx, shoot); err != nil {
			t.Errorf("deleting %s: %v", key, err)
		}
		eventually(t, 10*time.Second, func() error {
			if err := st.c.Get(ctx, key, &api.Shoot{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("Shoot %s still there (%v)", key, err)
			}
			return nil
		})
		if !original.IsZero() {
			require.NoError(t, st.setAllocatable(ctx, seed, original))
		}
	})

	// Pending: the controller says why.
	var pendingSince time.Time
	eventually(t, 15*time.Second, func() error {
		var s api.Shoot
		if err := st.c.Get(ctx, key, &s); err != nil {
			return err
		}
		op := s.Status.LastOperation
		if op == nil || op.Type != "Create" || op.State != "Pending" {
			return fmt.Errorf("status.lastOperation = %+v, want Create/Pending", op)
		}
		if !strings.Contains(op.Description, seed) {
			return fmt.Errorf("status.lastOperation.description %q does not name %s", op.Description, seed)
		}
		evs, err := st.shootEvents(ctx, key, corev1.EventTypeWarning, pending.ReasonSchedulingFailed)
		if err != nil {
			return err
		}
		if len(evs) == 0 {
			return fmt.Errorf("no %s event yet", pending.ReasonSchedulingFailed)
		}
		// The reasons for programs: the seed is full.
		var reasons placement.CodeSummary
		raw := s.Annotations[api.AnnotationUnschedulableReasons]
		if err := json.Unmarshal([]byte(raw), &reasons); err != nil || reasons.Counts[placement.SeedFull] < 1 {
			return fmt.Errorf("annotation %s = %q, want a count of %s", api.AnnotationUnschedulableReasons, raw, placement.SeedFull)
		}
		pendingSince = time.Now()
		t.Logf("pending: lastOperation %q; event %s: %q", op.Description, evs[0].Reason, evs[0].Note)
		return nil
	}, "the retry controller does not report the pending Shoot")
	assert.Empty(t, seedNameOf(t, key), "still without a seed")

	// Room on the seed: bound within seconds, by the controller.
	var sd api.Seed
	require.NoError(t, st.c.Get(ctx, keyOf("", seed), &sd))
	original = sd.Status.Allocatable[api.ResourceShoots]
	raised := original.DeepCopy()
	raised.Add(resource.MustParse("1"))
	require.NoError(t, st.setAllocatable(ctx, seed, raised))
	raisedAt := time.Now()
	var boundAfter time.Duration
	eventually(t, 10*time.Second, func() error {
		if got := seedNameOf(t, key); got != seed {
			return fmt.Errorf("spec.seedName = %q, want %s", got, seed)
		}
		boundAfter = time.Since(raisedAt)
		return nil
	}, "the pending Shoot is not bound after %s's allocatable was raised", seed)
	t.Logf("bound to %s %s after its allocatable went from %s to %s (pending for %s before)",
		seed, boundAfter.Round(time.Millisecond), original.String(), raised.String(), raisedAt.Sub(pendingSince).Round(time.Millisecond))
	assert.Less(t, boundAfter, 5*time.Second, "bound within seconds")

	eventually(t, 10*time.Second, func() error {
		evs, err := st.shootEvents(ctx, key, corev1.EventTypeNormal, pending.ReasonSchedulingSuccessful)
		if err != nil {
			return err
		}
		if len(evs) != 1 || !strings.Contains(evs[0].Note, seed) {
			return fmt.Errorf("%s events: %+v", pending.ReasonSchedulingSuccessful, evs)
		}
		var s api.Shoot
		if err := st.c.Get(ctx, key, &s); err != nil {
			return err
		}
		if s.Status.LastOperation != nil {
			return fmt.Errorf("status.lastOperation %+v: the controller removes its Create/Pending after binding", s.Status.LastOperation)
		}
		if v, ok := s.Annotations[api.AnnotationUnschedulableReasons]; ok {
			return fmt.Errorf("annotation %s = %q after binding: the bind removes it", api.AnnotationUnschedulableReasons, v)
		}
		return nil
	})
	after, err := scrape(st.metricsURL())
	require.NoError(t, err)
	scheduled := func(l map[string]string) bool { return l["result"] == "scheduled" }
	assert.Equal(t, 1.0, counterSum(after, "seedwarden_scheduling_retries_total", scheduled)-
		counterSum(before, "seedwarden_scheduling_retries_total", scheduled), "seedwarden_scheduling_retries_total{result=scheduled}")
	st.waitSettled(t)
}
