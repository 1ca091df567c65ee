package cache

import "maps"

// Per-project Shoot counts for the ProjectSpread scorer
// (placement.Snapshot.ProjectShoots): per namespace, a map seed name ->
// Shoots of that namespace charged to the seed, by the rule the per-seed
// counters use (charge: a migrating Shoot on both seeds; no reservations).
//
// Each namespace's map is immutable once stored: a change publishes a new
// copy for that namespace only (cost ~ the seeds the project uses), so a map
// handed to a decision never changes under it and readers need no lock.
// Seeds at zero are dropped and a namespace without charged Shoots has no
// entry, so memory follows the (namespace, seed) pairs in use.

// projectShoots is Snapshot.ProjectShoots: lock-free, nil for a namespace
// with no charged Shoots.
func (s *Store) projectShoots(namespace string) map[string]int64 {
	if v, ok := s.spread.Load(namespace); ok {
		return v.(map[string]int64)
	}
	return nil
}

// moveSpreadLocked replaces namespace's map by one with old's charge taken
// away and next's added. Called under s.mu (which serialises writers);
// a no-op when both charges are equal.
func (s *Store) moveSpreadLocked(namespace string, old, next charge) {
	if old == next {
		return
	}
	cur := s.projectShoots(namespace)
	m := make(map[string]int64, len(cur)+2)
	maps.Copy(m, cur)
	for _, seed := range [2]string{old.spec, old.status} {
		if seed == "" {
			continue
		}
		if m[seed]--; m[seed] <= 0 {
			delete(m, seed)
		}
	}
	for _, seed := range [2]string{next.spec, next.status} {
		if seed != "" {
			m[seed]++
		}
	}
	if len(m) == 0 {
		s.spread.Delete(namespace)
		return
	}
	s.spread.Store(namespace, m)
}
