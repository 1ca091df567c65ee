package cache

import (
	"strings"
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

// Claim is what a reservation is taken for: its key, the Shoot it is for and
// the user who asked. The key travels on the Shoot in AnnotationReservation,
// which its users can write, so a Shoot can confirm or end only a
// reservation taken for it: same namespace, and the same name or, for a
// Shoot that had only generateName at admission, a name with that prefix.
type Claim struct {
	Key                           string
	Namespace, Name, GenerateName string
	// User is who sent the request (userInfo.username), "" where unknown;
	// Limits.PerUser bounds each user's unconfirmed reservations.
	User string
	// Exists: the Shoot exists already (an UPDATE or binding, the retry
	// controller's placement). Its reservation is confirmed from the start
	// and never refused by a limit (it stands for a real Shoot), though it
	// counts against Limits.PerNamespace while it lasts. A CREATE's never
	// is, whatever its name.
	Exists bool
	// UID is the metadata.uid of the Shoot that Exists, so that its
	// deletion ends the reservation (and a later Shoot's of the same name
	// does not).
	UID string
}

// ClaimFor is the Claim of a placement of shoot under key, asked by user.
func ClaimFor(shoot *api.Shoot, key, user string) Claim {
	return Claim{Key: key, Namespace: shoot.Namespace, Name: shoot.Name, GenerateName: shoot.GenerateName, User: user}
}

// heldFor reports whether the Shoot namespace/name is the one c was taken for.
func (c Claim) heldFor(namespace, name string) bool {
	if c.Namespace != namespace || name == "" {
		return false
	}
	if c.Name != "" {
		return c.Name == name
	}
	return c.GenerateName != "" && strings.HasPrefix(name, c.GenerateName)
}

// sameShoot reports whether o, a claim under c's key, is for the Shoot c was
// taken for: o may name the Shoot that had only generateName for c.
func (c Claim) sameShoot(o Claim) bool {
	if o.Name != "" {
		return c.heldFor(o.Namespace, o.Name)
	}
	return c.Namespace == o.Namespace && c.Name == "" && c.GenerateName == o.GenerateName
}

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
	// Announced is the identity of the admission's reservation that the
	// Shoot carries (AnnotationReservation, which only seedwarden writes),
	// "" for none: an entry of that identity under the key is this Shoot's
	// and is kept as written, so binding an announced Shoot writes nothing.
	Announced string
}

// ShootKnown reports whether the cache holds a Shoot namespace/name: a
// CREATE of that name is refused (AlreadyExists) unless the Shoot is gone
// in the API server and the watch has not said so yet.
func (s *Store) ShootKnown(namespace, name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.knownLocked(namespace, name)
}
