package cache

import (
	"time"

	"github.com/seedwarden/seedwarden/internal/api"
)

// Which Shoot a reservation was taken for. A name is not enough: a CREATE of
// a name that exists (refused later: AlreadyExists) must not be confirmed by
// the Shoot that already has it. A reservation names its Shoot by an
// identity (ShootRef.ID) that only that Shoot can carry:
//
//   - for a CREATE, the mutating webhook's AdmissionReview UID. The API
//     server draws a fresh one for every webhook call, the webhook writes it
//     into the Shoot's seedwarden.io/reservation annotation, and it removes
//     any such annotation a CREATE brings and reverts an UPDATE that writes
//     one, so the Shoot created by that request is the only one carrying it;
//   - for a Shoot that exists (a binding, the retry controller's place), its
//     metadata.uid, which the API server assigns and nobody can choose.
//
// A re-CREATE of an existing name gets a new request UID, which the existing
// Shoot does not carry, so it confirms nothing and its reservation ends with
// the confirm window.
//
// The Store keeps the identities of the Shoots waiting without a seed (the
// only ones that confirm anything) and, for the confirm window, of the
// Shoots deleted: past the window an absent Shoot ends a reservation anyway.

// ShootRef names a reservation's Shoot: Key "<namespace>/<name>" and the
// identity ID it was taken for ("" for none known: nothing confirms it).
type ShootRef struct {
	Key, ID string
}

// shootIdentity is what a cached Shoot can be recognised by.
type shootIdentity struct {
	uid, reservation string
}

func (i shootIdentity) carries(id string) bool {
	return id != "" && (id == i.uid || id == i.reservation)
}

// tombstone remembers a deleted Shoot for the confirm window.
type tombstone struct {
	id      shootID
	ident   shootIdentity
	deleted time.Time
}

func identityOf(o *api.Shoot) shootIdentity {
	return shootIdentity{uid: string(o.UID), reservation: o.Annotations[AnnotationReservation]}
}

func reducedIdentity(r *ReducedShoot) shootIdentity {
	return shootIdentity{uid: string(r.GetUID()), reservation: r.annotation(AnnotationReservation)}
}

// rememberDeletedLocked records that the Shoot id, recognised by ident, is
// gone, and forgets the deletions older than the confirm window.
func (s *Store) rememberDeletedLocked(id shootID, ident shootIdentity, now time.Time) {
	s.forgetDeletedLocked(now)
	if ident == (shootIdentity{}) {
		return
	}
	s.deleted = append(s.deleted, tombstone{id: id, ident: ident, deleted: now})
	s.deletedByID[id] = append(s.deletedByID[id], ident)
}

func (s *Store) forgetDeletedLocked(now time.Time) {
	n := 0
	for n < len(s.deleted) && now.Sub(s.deleted[n].deleted) >= s.life.ConfirmWindow {
		t := s.deleted[n]
		if rest := s.deletedByID[t.id][1:]; len(rest) > 0 {
			s.deletedByID[t.id] = rest
		} else {
			delete(s.deletedByID, t.id)
		}
		s.deleted[n] = tombstone{}
		n++
	}
	s.deleted = s.deleted[n:]
}

// deletedLocked reports whether the Shoot id carrying the identity was seen
// deleted within the confirm window.
func (s *Store) deletedLocked(id shootID, identity string) bool {
	for _, ident := range s.deletedByID[id] {
		if ident.carries(identity) {
			return true
		}
	}
	return false
}

// PendingUID returns the metadata.uid of the Shoot key ("namespace/name")
// if the cache holds it waiting without a seed.
func (s *Store) PendingUID(key string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ident, ok := s.pending[shootIDOf(key)]
	return ident.uid, ok && ident.uid != ""
}

// Holder is whom a cluster-wide reservation (internal/seedreserve) is for:
// the Shoot's key and identity, the user who asked, and whether the Shoot
// exists already (a binding or UPDATE: confirmed from the start, never
// refused by a limit).
type Holder struct {
	ShootRef
	User   string
	Exists bool
}

// ShootKnown reports whether the cache holds a Shoot namespace/name: a
// CREATE of that name is refused (AlreadyExists) unless the Shoot is gone
// in the API server and the watch has not said so yet.
func (s *Store) ShootKnown(namespace, name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.knownLocked(namespace, name)
}
