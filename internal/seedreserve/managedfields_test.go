package seedreserve

import (
	"context"
	"fmt"
	"testing"

	"github.com/go-logr/logr"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// A ledger written many times keeps no managedFields, where it would name
// every entry's data key, and holds all its entries. An update that does not
// ask for the reset, as an earlier version's, leaves them off: kube-apiserver
// tracks fields again only from a create or a server-side apply.
func TestLedgerWritesKeepNoManagedFields(t *testing.T) {
	cfg, ns := apiServer(t)
	c, err := NewClient(cfg)
	require.NoError(t, err)
	r, err := New(c, landscape(map[string]int64{"s0": 100}, nil),
		Options{Namespace: ns, Metrics: &countingRecorder{}, Log: logr.Discard(), Limits: cache.Limits{PerNamespace: 1 << 20, Total: 1 << 20}})
	require.NoError(t, err)
	ctx := context.Background()
	key := client.ObjectKey{Namespace: ns, Name: ConfigMapName("s0")}
	cm := &corev1.ConfigMap{}
	for i := range 40 {
		require.NoError(t, r.Reserve(ctx, "s0", fmt.Sprintf("garden-dev/s-%02d", i), "", 100))
	}
	require.NoError(t, c.Get(ctx, key, cm))
	assert.Len(t, cm.Data, 40)
	assert.Empty(t, cm.ManagedFields)

	for k, v := range cm.Data {
		cm.Data[k+"-old"] = v
		break
	}
	require.NoError(t, c.Update(ctx, cm))
	require.NoError(t, c.Get(ctx, key, cm))
	assert.Len(t, cm.Data, 41)
	assert.Empty(t, cm.ManagedFields, "after an update without the reset")
}
