package handlers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/placement"
	"github.com/seedwarden/seedwarden/internal/placementtoken"
)

// CapacityStore is what the capacity webhook needs of the cache.Store.
type CapacityStore interface {
	Seed(name string) (*placement.Seed, bool)
	Usage(seed string) int64
	ReservationFor(key, namespace, name string) (seed string, ok bool)
	Reserve(seed string, c cache.Claim) error
	CheckCapacity(seed, key string) error
	Release(key string)
}

var _ CapacityStore = (*cache.Store)(nil)

// ClusterReserver holds places on seeds across replicas (seedreserve.Reserver:
// through the API server). Keys are "<namespace>/<name>" of the Shoot.
type ClusterReserver interface {
	// Reserve takes a place on seed for key, or returns a
	// *cache.CapacityError when usage+1 would exceed allocatable; a key
	// holding a place keeps it. A *cache.LimitError means the reservation
	// limits refused a new place: none is held. Any other error means it
	// could not decide.
	ReserveFor(ctx context.Context, seed string, h cache.Holder, allocatable int64) error
	// Check answers what Reserve would, without reserving (dry runs).
	Check(ctx context.Context, seed, key string, allocatable int64) error
}

// ShootCapacityValidator is the validating webhook that keeps seeds within
// status.allocatable.shoots: a request that sets or changes spec.seedName
// (shoots CREATE/UPDATE, shoots/binding) is denied when the seed is full.
//
//   - The webhook's own placement (CREATE with a verified placement token)
//     already holds a reservation from the mutating webhook, recorded in the
//     seedwarden.io/reservation annotation; it is admitted while the seed's
//     usage, which includes that reservation, stays within allocatable. When
//     this replica holds no such reservation (placed by another replica, or
//     expired), one is taken now under the same key.
//   - Any other placement reserves a place under
//     cache.ManualReservationKey(namespace, name) until the Shoot shows up on
//     the seed in the watch (or the reservation TTL passes).
//   - Dry runs are checked but reserve nothing.
//   - When the reservation limits refuse a new reservation
//     (*cache.LimitError), the placement is denied: admitted from a check
//     alone it would hold no place, and a concurrent request (here or on
//     another replica) could take the same last place. It can be sent again
//     once earlier reservations end.
//
// Reserving is atomic in the Store, so concurrent requests served by one
// replica never overfill a seed. With a Cluster reserver, the place is taken
// there instead, under "<namespace>/<name>", so that concurrent requests
// served by different replicas never overfill a seed either; see Cluster.
// UnrestrictedSubjects skip the check.
type ShootCapacityValidator struct {
	Store CapacityStore
	// Projects: for a Shoot in a namespace of no known Project the
	// capacity is checked but nothing is reserved (inProject). Nil: every
	// namespace is known.
	Projects ProjectLookup
	// Cluster, when set, decides: every placement on a seed with
	// allocatable shoots reserves through it (dry runs check), whether or
	// not this replica holds a reservation in Store. Store still records
	// the place, so this replica's mutating webhook counts it until the
	// Shoot arrives; a Store that is fuller than the cluster-wide count (it
	// also counts this replica's in-flight placements) does not deny. Any
	// error of Cluster denies (fail closed). nil: Store alone decides (one
	// replica).
	Cluster ClusterReserver
	// Signer verifies placement tokens. Without one, the reservation
	// annotation is trusted whenever this replica holds a live reservation
	// of that key on the seed (one replica, no key configured).
	Signer               *placementtoken.Signer
	UnrestrictedSubjects Subjects
	Log                  logr.Logger
	// StalenessGuard: beyond its bound requests that set or change a seed
	// are denied (see StalenessGuard). Zero: always check.
	StalenessGuard
	// Enforce answers a placement the guard refuses (a full seed, a
	// reservation limit): deny, warn or dryrun. It is asked after the
	// failed reservation, so a request it admits holds no place; a place
	// held for it already is given back, as deny does. nil: deny.
	Enforce *Enforcer
}

var _ admission.Handler = (*ShootCapacityValidator)(nil)

// Handle implements admission.Handler.
func (v *ShootCapacityValidator) Handle(ctx context.Context, req admission.Request) admission.Response {
	c, log, done := shootChangeOf(req, v.Log)
	if done != nil {
		return *done
	}
	return v.judge(ctx, req, c, log)
}

// judge decides a screened and decoded request (shootChangeOf).
func (v *ShootCapacityValidator) judge(ctx context.Context, req admission.Request, c *shootChange, log logr.Logger) admission.Response {
	if c.newSeed == "" || c.newSeed == c.oldSeed {
		return admission.Allowed("seedwarden: no seed is set or changed")
	}
	if v.UnrestrictedSubjects.Match(req.UserInfo) {
		log.V(1).Info("Capacity not checked for unrestricted subject", "user", req.UserInfo.Username, "seed", c.newSeed)
		return admission.Allowed("seedwarden: capacity not checked for an unrestricted subject")
	}
	if d, stale := v.StaleBeyond(time.Now()); stale {
		log.Info("Denied placement on seed: the placement cache is stale", "seed", c.newSeed, "staleFor", d.String(), "maxStaleness", v.MaxStaleness.String())
		return admission.Denied(staleDenial(c.newSeed, d, v.MaxStaleness))
	}
	if v.Store == nil {
		err := errors.New("seedwarden: no store configured")
		log.Error(err, "Cannot check capacity")
		return denied("seedwarden: cannot check the capacity of seed %q: %v", c.newSeed, err)
	}
	c.checkOnly = c.dryRun
	if !inProject(v.Projects, c.namespace) {
		// Checked like a dry run, reserved nowhere: a forged review naming
		// a made-up namespace takes no place and writes no ConfigMap.
		log.V(1).Info("Namespace belongs to no known Project; capacity checked, nothing reserved", "seed", c.newSeed)
		c.checkOnly = true
	}

	key, held := v.reservationKey(c, string(req.UID))
	if v.Cluster != nil {
		return v.admitCluster(ctx, req, c, key, held, log)
	}
	if held {
		return v.admitHeld(req, c, key, log)
	}
	var err error
	if c.checkOnly {
		err = v.Store.CheckCapacity(c.newSeed, key)
	} else {
		err = v.Store.Reserve(c.newSeed, c.claim(key))
	}
	if msg, verdict := capacityRefusal(c, err); msg != "" {
		log.Info("Placement on seed refused", "seed", c.newSeed, "reason", msg, "dryRun", c.dryRun, "enforcement", v.enforcement(verdict))
		return v.refuse(req, c, msg, verdict)
	}
	log.V(1).Info("Reserved a place on seed", "seed", c.newSeed, "key", key, "dryRun", c.dryRun)
	return admission.Allowed(fmt.Sprintf("seedwarden: seed %q has room", c.newSeed))
}

// reservationKey returns the key under which the Shoot holds (or is to take)
// its place, and whether this replica already holds it on the new seed.
func (v *ShootCapacityValidator) reservationKey(c *shootChange, uid string) (key string, held bool) {
	if c.op == admissionv1.Create && !c.binding {
		own := verifyPlacement(v.Signer, c) == nil
		if k := c.shoot.Annotations[cache.AnnotationReservation]; k != "" && (own || v.Signer == nil) {
			seed, ok := v.Store.ReservationFor(k, c.namespace, c.name)
			if ok && seed == c.newSeed {
				return k, true
			}
			if own {
				// Placed by another replica, or the reservation expired:
				// take it here under the same key, which the watch releases.
				return k, false
			}
		}
	}
	if c.name == "" {
		// Not reachable through the API server (a validating webhook sees
		// the generated name); keep such a request from sharing a key.
		return cache.ManualReservationKey(c.namespace, c.shoot.GenerateName+"?"+uid), false
	}
	return cache.ManualReservationKey(c.namespace, c.name), false
}

// admitHeld admits a placement whose reservation is counted already, unless
// the seed filled up since (Shoots created past the webhook, a lowered
// allocatable); then the reservation is given back.
func (v *ShootCapacityValidator) admitHeld(req admission.Request, c *shootChange, key string, log logr.Logger) admission.Response {
	seed, ok := v.Store.Seed(c.newSeed)
	if !ok {
		v.release(c, key)
		return denied("seedwarden: seed %q not found; its capacity cannot be checked", c.newSeed)
	}
	alloc, has := seed.Allocatable()
	if !has {
		return admission.Allowed(fmt.Sprintf("seedwarden: seed %q sets no allocatable shoots", c.newSeed))
	}
	if usage := v.Store.Usage(c.newSeed); usage > alloc {
		v.release(c, key)
		log.Info("Own placement on a seed that filled up refused", "seed", c.newSeed, "usage", usage, "allocatable", alloc, "enforcement", v.enforcement(true))
		return v.refuse(req, c, fmt.Sprintf("seedwarden: seed %q is full: usage %d (including the place reserved for this Shoot) exceeds allocatable shoots %d",
			c.newSeed, usage, alloc), true)
	}
	return admission.Allowed(fmt.Sprintf("seedwarden: seed %q holds a place for this Shoot", c.newSeed))
}

// admitCluster decides with the cluster-wide reservation. localKey is the
// Store's reservation key (held: this replica holds it on the new seed).
func (v *ShootCapacityValidator) admitCluster(ctx context.Context, req admission.Request, c *shootChange, localKey string, held bool, log logr.Logger) admission.Response {
	uid := string(req.UID)
	seed, ok := v.Store.Seed(c.newSeed)
	if !ok {
		if held {
			v.release(c, localKey)
		}
		return denied("seedwarden: seed %q not found; its capacity cannot be checked", c.newSeed)
	}
	alloc, has := seed.Allocatable()
	if !has {
		v.reserveLocally(c, localKey, held, log)
		return admission.Allowed(fmt.Sprintf("seedwarden: seed %q sets no allocatable shoots", c.newSeed))
	}
	key := clusterReservationKey(c, uid)
	var err error
	if c.checkOnly {
		err = v.Cluster.Check(ctx, c.newSeed, key, alloc)
	} else {
		err = v.Cluster.ReserveFor(ctx, c.newSeed, c.holder(key, localKey, uid), alloc)
	}
	if msg, verdict := capacityRefusal(c, err); msg != "" {
		if held {
			v.release(c, localKey)
		}
		log.Info("Placement on seed refused", "seed", c.newSeed, "reason", msg, "dryRun", c.dryRun, "coordination", "apiserver", "enforcement", v.enforcement(verdict))
		return v.refuse(req, c, msg, verdict)
	}
	v.reserveLocally(c, localKey, held, log)
	log.V(1).Info("Reserved a place on seed across replicas", "seed", c.newSeed, "key", key, "dryRun", c.dryRun)
	return admission.Allowed(fmt.Sprintf("seedwarden: seed %q has room", c.newSeed))
}

// reserveLocally records an admitted place in the Store, so that this
// replica's mutating webhook counts it until the Shoot arrives. The
// cluster-wide reservation has decided already: a full Store does not deny.
func (v *ShootCapacityValidator) reserveLocally(c *shootChange, key string, held bool, log logr.Logger) {
	if held || c.checkOnly {
		return
	}
	if err := v.Store.Reserve(c.newSeed, c.claim(key)); err != nil {
		log.V(1).Info("Admitted across replicas; not recorded in this replica's reservations", "seed", c.newSeed, "reason", err.Error())
	}
}

// claim is the Store's Claim of the Shoot's place under key.
func (c *shootChange) claim(key string) cache.Claim {
	cl := cache.Claim{Key: key, Namespace: c.namespace, Name: c.name, GenerateName: c.shoot.GenerateName, User: c.user,
		Exists: c.op == admissionv1.Update}
	if cl.Exists {
		cl.UID = string(c.shoot.UID)
	}
	return cl
}

// holder is whom the cluster-wide entry under key is for. Its identity
// (cache.ShootRef) is, for a Shoot that exists (UPDATE, binding), its
// metadata.uid; for a CREATE, the key of the mutating webhook's reservation
// when it is the webhook's own (held here, or its token verifies: the entry
// it reserved across replicas is the same), else this request's UID, which
// no Shoot carries: nothing confirms such an entry (a seed set at CREATE
// lands on it, and a refused CREATE holds it for the window only).
func (c *shootChange) holder(key, localKey, uid string) cache.Holder {
	h := cache.Holder{ShootRef: cache.ShootRef{Key: key, ID: uid}, User: c.user, Exists: c.op == admissionv1.Update}
	switch {
	case h.Exists:
		h.ID = string(c.shoot.UID)
	case localKey != "" && localKey == c.shoot.Annotations[cache.AnnotationReservation]:
		// reservationKey returns the annotation only when it is the
		// webhook's own: held here, or its token verifies.
		h.ID = localKey
	}
	return h
}

// clusterReservationKey is "<namespace>/<name>": the Shoot's own key, so
// that replicas can tell a reservation from the Shoot once it exists.
func clusterReservationKey(c *shootChange, uid string) string {
	if c.name == "" {
		// Not reachable through the API server (a validating webhook sees
		// the generated name); keep such a request from sharing a key.
		return c.namespace + "/" + c.shoot.GenerateName + uid
	}
	return c.namespace + "/" + c.name
}

func (v *ShootCapacityValidator) release(c *shootChange, key string) {
	if !c.dryRun {
		v.Store.Release(key)
	}
}

// capacityRefusal turns a Reserve/CheckCapacity error into the message of
// its denial ("" for none). verdict: the guard's rules refuse the placement
// (the seed is full, a reservation limit); otherwise it could not decide (an
// unknown seed, the API server's error), which is denied whatever the
// enforcement.
func capacityRefusal(c *shootChange, err error) (message string, verdict bool) {
	var (
		full  *cache.CapacityError
		limit *cache.LimitError
	)
	switch {
	case err == nil:
		return "", false
	case errors.As(err, &full):
		return fmt.Sprintf("seedwarden: cannot place Shoot %q: %v", c.key(), full), true
	case errors.As(err, &limit):
		return fmt.Sprintf("seedwarden: cannot place Shoot %q on seed %q: %v", c.key(), c.newSeed, limit), true
	case errors.Is(err, cache.ErrUnknownSeed):
		return fmt.Sprintf("seedwarden: seed %q not found; its capacity cannot be checked", c.newSeed), false
	default:
		return fmt.Sprintf("seedwarden: cannot check the capacity of seed %q: %v", c.newSeed, err), false
	}
}

// refuse answers a refused placement: a verdict as the enforcement says,
// anything else denied.
func (v *ShootCapacityValidator) refuse(req admission.Request, c *shootChange, message string, verdict bool) admission.Response {
	if !verdict {
		return admission.Denied(message)
	}
	return v.Enforce.refuse(req, c.object(req), message)
}

// enforcement is what becomes of a refusal, for logs.
func (v *ShootCapacityValidator) enforcement(verdict bool) string {
	if !verdict {
		return EnforceDeny
	}
	return v.Enforce.Action()
}
