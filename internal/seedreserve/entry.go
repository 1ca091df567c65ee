package seedreserve

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

// An entry's value is its expiry (RFC 3339, written + TTL) and, for an
// entry taken for a known Shoot, ";" and that Shoot's identity
// (cache.ShootRef.ID): "2026-12-02T04:00:30.123Z;5c1e…". An entry without an
// identity is written as the expiry alone, the format of earlier versions.
//
// Rolling upgrade: an earlier version cannot parse a value with an identity.
// It counts such an entry as live (its rule for unreadable values) and, the
// next time it writes the ConfigMap, rewrites it to expire one TTL from its
// own now, without the identity. This version reads an expiry alone as an
// entry of no known Shoot: it counts for the confirm window, and while its
// Shoot is on the seed, but nothing confirms it. So mid-upgrade no replica
// counts less than the Shoots there: an earlier version overcounts an entry
// of this one for at most a TTL, and an announcement whose entry an earlier
// version wrote may lose its hold after the window (the binding is then
// decided again where the capacity is checked).

// idSeparator separates the expiry from the identity. It occurs in neither.
const idSeparator = ";"

// maxIDLength bounds an identity: a UID is 36 characters.
const maxIDLength = 64

// formatValue is the stored value of an entry expiring at expiry (already
// formatted) for the Shoot of identity id ("" for none). An identity that
// is not a plain token is left out: such an entry is confirmed by nothing.
func formatValue(expiry, id string) string {
	if id == "" || validID(id) != nil {
		return expiry
	}
	return expiry + idSeparator + id
}

// parseValue reads a stored value: its expiry and identity ("" for none).
func parseValue(v string) (time.Time, string, error) {
	exp, id, _ := strings.Cut(v, idSeparator)
	t, err := time.Parse(time.RFC3339, exp)
	if err != nil {
		return time.Time{}, "", err
	}
	if id != "" {
		if err := validID(id); err != nil {
			return time.Time{}, "", err
		}
	}
	return t, id, nil
}

// validID accepts what a UID is made of (letters, digits, '-'), up to
// maxIDLength characters.
func validID(id string) error {
	if len(id) > maxIDLength {
		return fmt.Errorf("identity of %d characters exceeds %d", len(id), maxIDLength)
	}
	for _, c := range id {
		if c != '-' && (c < '0' || c > '9') && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') {
			return fmt.Errorf("identity %q holds %q", id, c)
		}
	}
	return nil
}

// sightings remembers, per seed, when this replica first saw each stored
// entry (by key and value: a rewritten entry is a new one), so that an
// entry's age never exceeds what this replica has seen of it (entryAge),
// whatever the writer's clock said. It holds the entries of the last read
// of each seed's object only. A replica that starts afresh sees every entry
// as new: it counts them for one more window at most (conservative).
type sightings struct {
	mu     sync.Mutex
	bySeed map[string]map[string]time.Time // seed -> key "=" value -> first seen
}

func newSightings() *sightings {
	return &sightings{bySeed: map[string]map[string]time.Time{}}
}

// observe records the stored entries of seed, seen at now, forgets those no
// longer stored, and returns when each was first seen, by key.
func (s *sightings) observe(seed string, stored map[string]string, now time.Time) map[string]time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	before := s.bySeed[seed]
	next := make(map[string]time.Time, len(stored))
	byKey := make(map[string]time.Time, len(stored))
	for k, v := range stored {
		id := k + "=" + v
		first, ok := before[id]
		if !ok {
			first = now
		}
		next[id], byKey[k] = first, first
	}
	s.bySeed[seed] = next
	return byKey
}

// written records the entries of data, which this replica is about to
// write at now: those it did not see before are first seen now.
func (s *sightings) written(seed string, data map[string]string, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := s.bySeed[seed]
	if seen == nil {
		seen = map[string]time.Time{}
		s.bySeed[seed] = seen
	}
	for k, v := range data {
		if id := k + "=" + v; seen[id].IsZero() {
			seen[id] = now
		}
	}
}
