package cache

import (
	"maps"
	"sync"
	"sync/atomic"
)

// Per-project Shoot counts for the ProjectSpread scorer
// (placement.Snapshot.ProjectShoots): per namespace, seed name -> Shoots of
// that namespace charged to the seed, by the rule the per-seed counters use
// (charge: a migrating Shoot on both seeds; no reservations).
//
// Writers (the watch, under Store.mu) edit a namespace's live counts in
// place and drop its published view; the first read after that copies the
// counts (cost ~ the seeds the project uses) into a new view that is never
// written again. So a map handed to a decision never changes under it, a
// Shoot update allocates nothing (beyond a namespace's first Shoot or a
// seed new to it), and only decisions that score with
// ProjectSpread ever pay for a copy. Seeds at zero are dropped and a
// namespace without charged Shoots has no entry, so memory follows the
// (namespace, seed) pairs in use.

// projectSpread is one namespace's counts.
type projectSpread struct {
	mu     sync.Mutex       // guards counts; view is set and cleared under it
	counts map[string]int64 // live; seeds at zero are deleted
	// view is an immutable copy of counts, nil when counts changed since.
	view atomic.Pointer[map[string]int64]
}

// projectShoots is Snapshot.ProjectShoots: nil for a namespace with no
// charged Shoots. Lock-free unless the namespace changed since its last read.
func (s *Store) projectShoots(namespace string) map[string]int64 {
	v, ok := s.spread.Load(namespace)
	if !ok {
		return nil
	}
	p := v.(*projectSpread)
	if m := p.view.Load(); m != nil {
		return *m
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if m := p.view.Load(); m != nil {
		return *m // built by a concurrent reader
	}
	m := maps.Clone(p.counts)
	p.view.Store(&m)
	return m
}

// moveSpreadLocked takes old's charge away from namespace and adds next's.
// Called under s.mu, which serialises writers; a no-op when they are equal.
func (s *Store) moveSpreadLocked(namespace string, old, next [2]string) {
	if old == next {
		return
	}
	var p *projectSpread
	if v, ok := s.spread.Load(namespace); ok {
		p = v.(*projectSpread)
	} else {
		p = &projectSpread{counts: map[string]int64{}}
		s.spread.Store(namespace, p)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, seed := range old {
		if seed == "" {
			continue
		}
		if p.counts[seed]--; p.counts[seed] <= 0 {
			delete(p.counts, seed)
		}
	}
	for _, seed := range next {
		if seed != "" {
			p.counts[seed]++
		}
	}
	if p.view.Load() != nil { // a load is cheaper than a store when no one read
		p.view.Store(nil)
	}
	if len(p.counts) == 0 {
		// A reader still holding p builds an empty view, which is right.
		s.spread.Delete(namespace)
	}
}
