package cache

import (
	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// PendingView is the landscape with every seed's usage read at one moment,
// and of pending (PendingShoots.List, read just before) the Shoots that
// this usage does not count already: those a live reservation holds a
// place for (announced at admission, or being bound) and those the Store
// counts on a seed are left out. The SeedAutoscaler decides from it.
//
// Both halves come from under the Store's lock, which every change of the
// counters takes: with the live Snapshot, whose usage is read on each
// call, a Shoot the retry controller binds while a recommendation runs is
// counted pending (listed before its reservation) and on its seed (the
// reservation, read after), and the set grows for it. A Shoot whose place
// is taken between the List and this call is left out here; one taken
// after is counted pending and not on its seed, in the frozen usage.
// Either way once. What stays open is a Shoot counted nowhere for one
// sync (PendingShoots has dropped it, the Store's handler not counted it
// yet, no reservation): the next sync sees it, and too few seeds for a
// sync costs a period, too many cost the operator a seed.
func (s *Store) PendingView(pending []*api.Shoot) (*placement.Snapshot, []*api.Shoot) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweepLocked(s.now())
	l := s.land.Load()
	usage := make(map[string]int64, len(l.counters))
	for name, c := range l.counters {
		usage[name] = c.usage()
	}
	left := make([]*api.Shoot, 0, len(pending))
	for _, p := range pending {
		if !s.holdsPlaceLocked(p) && !s.countedLocked(p) {
			left = append(left, p)
		}
	}
	snap := l.snap
	snap.Usage = func(sd *placement.Seed) int64 { return usage[sd.Name] }
	return &snap, left
}

// countedLocked reports whether the Store counts the Shoot on a seed: the
// watch has shown it with one, which PendingShoots saw first.
func (s *Store) countedLocked(shoot *api.Shoot) bool {
	c, ok := s.shoots[intern(shoot.Namespace)][shoot.Name]
	return ok && c != charge{}
}
