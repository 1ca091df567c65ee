package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestUpdateRevertsSeedwardenAnnotations: on a real API server, an UPDATE
// that adds a seedwarden.io/* annotation or changes the value of one
// reaches the mutating handler through annotations.shoots.seedwarden.io
// (the CREATE-only place.shoots.seedwarden.io does not see it), which
// undoes both with a warning and keeps the rest of the change.
func TestUpdateRevertsSeedwardenAnnotations(t *testing.T) {
	st := need(t)
	st.startTest(t, webhookPlace, webhookAnnotations)
	ctx := context.Background()
	c, warned := st.clientAs(t, "")

	sh := newShoot(t.Name())
	require.NoError(t, c.Create(ctx, sh))
	warned.take()
	const changed, added, other = "seedwarden.io/placement", "seedwarden.io/e2e-forged", "example.com/team"
	before, ok := sh.GetAnnotations()[changed]
	require.True(t, ok, "the placed Shoot carries %s", changed)

	patch := []byte(`{"metadata":{"annotations":{"` + changed + `":"forged","` + added + `":"forged","` + other + `":"a"}}}`)
	require.NoError(t, c.Patch(ctx, sh, client.RawPatch(types.MergePatchType, patch)))
	msgs := strings.Join(warned.take(), "\n")
	assert.Contains(t, msgs, changed, "a warning names the reverted annotations")
	assert.Contains(t, msgs, added, "a warning names the reverted annotations")

	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(shootGVK)
	require.NoError(t, st.c.Get(ctx, client.ObjectKeyFromObject(sh), got))
	assert.Equal(t, before, got.GetAnnotations()[changed], "a changed annotation gets its old value back")
	assert.NotContains(t, got.GetAnnotations(), added, "an added annotation is removed")
	assert.Equal(t, "a", got.GetAnnotations()[other], "the rest of the UPDATE is kept")
}
