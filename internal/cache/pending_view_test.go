package cache

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seedwarden/seedwarden/internal/api"
)

// A Shoot is counted once, on its seed or pending: one whose place the
// retry controller reserved, or that the Store counts on a seed, after the
// pending Shoots were listed is left out of them; a place taken after the
// view was read does not show in its usage.
func TestPendingViewCountsEachShootOnce(t *testing.T) {
	s := NewStore(Options{})
	s.Apply(seed("a", 4))
	s.Apply(shoot("p", "on-a", "a", "a"))
	listed := []*api.Shoot{shoot("p", "reserved", "", ""), shoot("p", "bound", "", ""), shoot("p", "waiting", "", ""), shoot("p", "later", "", "")}
	// Between the List and the view: one place reserved, one Shoot bound.
	require.NoError(t, s.Reserve("a", Claim{Key: ManualReservationKey("p", "reserved"), Namespace: "p", Name: "reserved", Exists: true}))
	s.Apply(shoot("p", "bound", "a", ""))

	snap, pending := s.PendingView(listed)
	names := make([]string, 0, len(pending))
	for _, p := range pending {
		names = append(names, p.Name)
	}
	assert.Equal(t, []string{"waiting", "later"}, names)
	sd, ok := s.Seed("a")
	require.True(t, ok)
	assert.Equal(t, int64(3), snap.Usage(sd), "on-a, bound and the reservation")

	// After the view: the retry controller takes "later"'s place.
	require.NoError(t, s.Reserve("a", Claim{Key: ManualReservationKey("p", "later"), Namespace: "p", Name: "later", Exists: true}))
	assert.Equal(t, int64(3), snap.Usage(sd), "frozen: later is counted pending only")
	assert.Equal(t, int64(4), s.Snapshot().Usage(sd), "the live snapshot counts it")
}
