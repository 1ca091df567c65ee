package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/api"
)

// hoardEntry is a managedFields entry of 8,000 made-up annotation paths
// (about 120 KB), which the API server keeps as a client sends it.
func hoardEntry(t *testing.T) metav1.ManagedFieldsEntry {
	t.Helper()
	paths := make(map[string]struct{}, 8000)
	for i := range 8000 {
		paths[fmt.Sprintf("f:k%06d", i)] = struct{}{}
	}
	raw, err := json.Marshal(map[string]any{"f:metadata": map[string]any{"f:annotations": paths}})
	require.NoError(t, err)
	require.Greater(t, len(raw), 120_000)
	return metav1.ManagedFieldsEntry{Manager: "hoard", Operation: metav1.ManagedFieldsOperationUpdate,
		APIVersion: "core.gardener.cloud/v1beta1", FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(string(raw))}
}

// TestOversizedManagedFieldsRejected: under the 8 KiB Shoot limit (and the
// 16Ki managedFields limit derived from it), a project member's Shoot
// carrying a 120 KB managedFields entry is denied on CREATE, and adding one
// to a stored Shoot is denied on UPDATE; the Shoot's own managedFields pass.
func TestOversizedManagedFieldsRejected(t *testing.T) {
	st := need(t)
	st.requireWebhook(t, webhookShootSize)
	st.logOnFailure(t)
	st.cleanupShoots(t)
	ctx := context.Background()
	hoard := hoardEntry(t)
	// A tenant: the suite's admin is in system:masters, whose writes the
	// managedFields limit never refuses. The operator may bind, so that in
	// mode patch the placed CREATE passes ShootValidator and the size
	// webhook is what refuses it.
	_, dev := st.projectUsers(t)

	// us-east-1 goes to aws-us1, which has no capacity limit: a reservation
	// left by a refused Shoot cannot disturb other tests.
	big := newShoot(t.Name(), awsShoot("us-east-1", "us-east-1a"), withName("e2e-hoarder"))
	big.SetManagedFields([]metav1.ManagedFieldsEntry{hoard})
	err := dev.c.Create(ctx, big)
	requireDenied(t, err, webhookShootSize)
	assert.ErrorContains(t, err, "metadata.managedFields of ")
	assert.ErrorContains(t, err, "exceed the limit of 16Ki (16384 bytes)")
	t.Logf("CREATE: %.300s", err)
	assert.True(t, apierrors.IsNotFound(st.c.Get(ctx, client.ObjectKeyFromObject(big), &api.Shoot{})), "the Shoot must not exist")

	plain := newShoot(t.Name(), awsShoot("us-east-1", "us-east-1a"))
	require.NoError(t, dev.c.Create(ctx, plain), "a Shoot with the API server's own managedFields")

	// The retry controller may bind the Shoot meanwhile: read it afresh on a
	// conflict.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		stored := &unstructured.Unstructured{}
		stored.SetGroupVersionKind(plain.GroupVersionKind())
		require.NoError(t, dev.c.Get(ctx, client.ObjectKeyFromObject(plain), stored))
		require.NotEmpty(t, stored.GetManagedFields(), "the API server records who wrote the Shoot")
		stored.SetManagedFields(append(stored.GetManagedFields(), hoard))
		return dev.c.Update(ctx, stored)
	})
	requireDenied(t, err, webhookShootSize)
	assert.ErrorContains(t, err, "an update may keep managedFields over the limit, not grow them")
	t.Logf("UPDATE: %.300s", err)
}
