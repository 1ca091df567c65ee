package leadership

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	crleaderelection "sigs.k8s.io/controller-runtime/pkg/leaderelection"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
)

// NewLock is the Lease namespace/name as the manager-level election of
// earlier versions took it (controller-runtime's resource lock: identity
// hostname_uuid, clients with a timeout below the renew deadline, events
// through rec), so old and new replicas elect one leader among them.
func NewLock(cfg *rest.Config, rec recorder.Provider, namespace, name string) (resourcelock.Interface, error) {
	return crleaderelection.NewResourceLock(cfg, rec, crleaderelection.Options{
		LeaderElection:             true,
		LeaderElectionResourceLock: resourcelock.LeasesResourceLock,
		LeaderElectionNamespace:    namespace,
		LeaderElectionID:           name,
		RenewDeadline:              DefaultRenewDeadline,
	})
}

// errLostNotReleased refuses the release of a Lease that was lost.
var errLostNotReleased = errors.New("not releasing a Lease this replica failed to renew: another replica may hold it by now")

// releaseGuard is the Lock of one election. client-go releases the Lease
// (ReleaseOnCancel) whenever a term ends, also after a failed renewal, and
// then writes over whatever the Lease holds now, possibly another replica's
// fresh hold. The guard lets a release through only on shutdown or when
// the work failed (resigned); a lost Lease simply expires. It also records
// whether this replica acquired the Lease.
type releaseGuard struct {
	resourcelock.Interface
	shutdown context.Context
	resigned atomic.Bool
	acquired atomic.Bool
}

func (g *releaseGuard) Create(ctx context.Context, rec resourcelock.LeaderElectionRecord) error {
	err := g.Interface.Create(ctx, rec)
	if err == nil && rec.HolderIdentity == g.Identity() {
		g.acquired.Store(true)
	}
	return err
}

func (g *releaseGuard) Update(ctx context.Context, rec resourcelock.LeaderElectionRecord) error {
	if rec.HolderIdentity == "" && g.shutdown.Err() == nil && !g.resigned.Load() {
		return fmt.Errorf("%s: %w", g.Describe(), errLostNotReleased)
	}
	err := g.Interface.Update(ctx, rec)
	if err == nil && rec.HolderIdentity == g.Identity() {
		g.acquired.Store(true)
	}
	return err
}
