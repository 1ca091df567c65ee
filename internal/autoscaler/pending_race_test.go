package autoscaler

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/utils/ptr"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/placement"
	"github.com/seedwarden/seedwarden/internal/seedscale"
)

// A seed with room for the 4 pending Shoots, which the retry controller
// binds while the sync decides (their places reserved right after the
// pending Shoots were listed). With the live Snapshot beside that list
// each is counted pending and on the seed, and the set grows by a seed no
// Shoot needs (e2e TestAutoscalerFleetOneSetGrows, under load); with the
// View, read at one moment, they are counted once and the set holds.
func TestPendingBoundDuringSyncCountedOnce(t *testing.T) {
	tests := []struct {
		name string
		view bool
		want int32
	}{
		{"live snapshot and a list read apart", false, 2},
		{"view read at one moment", true, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			store := newLandscape(t, 1, 6)
			sa := seedAutoscaler(1, 10)
			sa.Spec.Metrics[0].Resource.Target.AverageUtilization = ptr.To[int32](100)
			f := newFixture(t, store, nil, managedSeedSet(1), sa)
			listed := pendingShoots(4)
			bindAll := func(pending []*api.Shoot) {
				for _, s := range pending {
					require.NoError(t, store.Reserve("aws-0", cache.Claim{Key: cache.ManualReservationKey(s.Namespace, s.Name),
						Namespace: s.Namespace, Name: s.Name}))
				}
			}
			if tc.view {
				f.r.View = func() (*placement.Snapshot, []*api.Shoot) {
					snap, pending := store.PendingView(listed())
					bindAll(pending)
					return snap, pending
				}
			} else {
				f.r.Pending = func() []*api.Shoot {
					pending := listed()
					bindAll(pending)
					return pending
				}
			}
			got, _, err := f.sync(t)
			require.NoError(t, err)
			assert.Equal(t, tc.want, f.replicas(t), got.Status.Message)
			if tc.view {
				assert.Equal(t, seedscale.ReasonSteady, got.Status.Reason)
			}
		})
	}
}
