package seedmanagement

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/utils/ptr"
)

// Only the reasons that say the replica fails back a set off; a replica on
// its way is for the provisioning time to judge.
func TestStatusFailing(t *testing.T) {
	tests := []struct {
		name string
		p    *PendingReplica
		want string
	}{
		{"none", nil, ""},
		{"reconcile failed", &PendingReplica{Name: "aws-3", Reason: "ShootReconcileFailed", Retries: ptr.To[int32](2)}, "aws-3: ShootReconcileFailed, 2 retries"},
		{"delete failed", &PendingReplica{Name: "aws-1", Reason: "ShootDeleteFailed"}, "aws-1: ShootDeleteFailed"},
		{"on its way", &PendingReplica{Name: "aws-3", Reason: "ShootReconciling"}, ""},
		{"seed not ready yet", &PendingReplica{Name: "aws-3", Reason: "SeedNotReady"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := ManagedSeedSetStatus{PendingReplica: tc.p}
			assert.Equal(t, tc.want, st.Failing())
			cp := st.DeepCopy()
			if tc.p != nil {
				assert.NotSame(t, st.PendingReplica, cp.PendingReplica, "deep copied")
				assert.Equal(t, st, *cp)
			}
		})
	}
}
