package seedscale

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seedwarden/seedwarden/internal/placement"
)

// ReasonReplicasNotReady is a set whose replicas, asked for or registered,
// are not ready past the provisioning time (spec.provisioningTimeout): they
// no longer count as room, and the set is not asked for more while they
// do not come (a ManagedSeedSet creates the next replica only when the
// previous is ready).
const ReasonReplicasNotReady = "ReplicasNotReady"

// ReasonBackedOff is a set whose ManagedSeedSet reports its pending
// replica failing (Set.Failing): as with ReasonReplicasNotReady its
// replicas on the way are no room and it is not asked for more, and
// DecideFleet tries the other sets first.
const ReasonBackedOff = "BackedOff"

// NotReady counts a set's replicas as a ManagedSeedSet's status does, and
// those past the provisioning time.
type NotReady struct {
	// Asked is spec.replicas, Registered the set's seeds (not being
	// deleted), Ready those of them ready.
	Asked      int32 `json:"asked"`
	Registered int32 `json:"registered"`
	Ready      int32 `json:"ready"`
	// Late are the replicas past the provisioning time, or on the way to
	// a set whose pending replica fails: registered seeds not ready and
	// holding nothing, created longer ago, plus the replicas asked for
	// longer ago and not registered.
	Late int32 `json:"late"`
	// Timeout is the provisioning time.
	Timeout metav1.Duration `json:"timeout"`
}

// String says it for a status message.
func (n *NotReady) String() string {
	return fmt.Sprintf("%d %s not ready after the provisioning time %s (spec.provisioningTimeout; %d asked, %d registered, %d ready): they no longer count as room",
		n.Late, replicasWord(n.Late), n.Timeout.Duration, n.Asked, n.Registered, n.Ready)
}

func replicasWord(n int32) string {
	if n == 1 {
		return "replica"
	}
	return "replicas"
}

// late says whether something that started at since has had longer than
// the provisioning time. An unknown start (zero) or clock (Input.Now zero)
// is never late: a replica counts until it is known not to come.
func (in *Input) late(since time.Time) bool {
	if since.IsZero() || in.Now.IsZero() || in.Spec == nil {
		return false
	}
	return in.Now.Sub(since) > in.Spec.ProvisioningTimeoutOrDefault()
}

// lateSeed says whether a registered, not ready seed holding nothing is
// past the provisioning time (by its creation).
func (in *Input) lateSeed(s *placement.Seed) bool {
	return in.late(s.Object.CreationTimestamp.Time)
}

// Late counts the set's replicas past the provisioning time, as the
// recommendation will (NotReady.Late): cheap, so that the controller can
// tell from it whether a recommendation computed earlier still holds.
func Late(in *Input) int32 {
	if in.Snapshot == nil || in.Spec == nil {
		return 0
	}
	return newSim(in).notReady().Late
}

// notReady counts the set's replicas; nil-free.
func (s *sim) notReady() NotReady {
	n := NotReady{Asked: s.in.Set.Replicas, Registered: s.registered(), Late: int32(len(s.late)) + s.lateAsked}
	for _, seed := range s.active {
		if seed.Ready() {
			n.Ready++
		}
	}
	if s.in.Spec != nil {
		n.Timeout = metav1.Duration{Duration: s.in.Spec.ProvisioningTimeoutOrDefault()}
	}
	return n
}
