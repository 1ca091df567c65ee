package leadership

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// lease is an in-memory Lease with optimistic concurrency, shared by the
// memLocks of several replicas.
type lease struct {
	mu  sync.Mutex
	rec *resourcelock.LeaderElectionRecord
	rv  int
}

func (l *lease) holder() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.rec == nil {
		return ""
	}
	return l.rec.HolderIdentity
}

var leaseResource = schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}

// errUnreachable stands for an API server this replica cannot reach.
var errUnreachable = errors.New("connection refused")

// memLock is one replica's resourcelock.Interface on a lease, as client-go's
// LeaseLock behaves: an update is based on the version last read or
// written. down makes every call fail, as a cut connection would.
type memLock struct {
	l    *lease
	id   string
	down atomic.Bool
	rv   int
}

var _ resourcelock.Interface = (*memLock)(nil)

func (m *memLock) Get(context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	if m.down.Load() {
		return nil, nil, errUnreachable
	}
	m.l.mu.Lock()
	defer m.l.mu.Unlock()
	if m.l.rec == nil {
		return nil, nil, apierrors.NewNotFound(leaseResource, "test")
	}
	rec := *m.l.rec
	raw, err := json.Marshal(rec)
	m.rv = m.l.rv
	return &rec, raw, err
}

func (m *memLock) Create(_ context.Context, rec resourcelock.LeaderElectionRecord) error {
	if m.down.Load() {
		return errUnreachable
	}
	m.l.mu.Lock()
	defer m.l.mu.Unlock()
	if m.l.rec != nil {
		return apierrors.NewAlreadyExists(leaseResource, "test")
	}
	m.l.rec, m.l.rv = &rec, m.l.rv+1
	m.rv = m.l.rv
	return nil
}

func (m *memLock) Update(_ context.Context, rec resourcelock.LeaderElectionRecord) error {
	if m.down.Load() {
		return errUnreachable
	}
	m.l.mu.Lock()
	defer m.l.mu.Unlock()
	if m.l.rec == nil {
		return apierrors.NewNotFound(leaseResource, "test")
	}
	if m.rv != m.l.rv {
		return apierrors.NewConflict(leaseResource, "test", errors.New("the object has been modified"))
	}
	m.l.rec, m.l.rv = &rec, m.l.rv+1
	m.rv = m.l.rv
	return nil
}

func (m *memLock) RecordEvent(string)         {}
func (m *memLock) Identity() string           { return m.id }
func (m *memLock) Describe() string           { return "test/lease" }
func (m *memLock) setDown(down bool) *memLock { m.down.Store(down); return m }
