package seedreserve

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// ConfigMapPrefix starts the name of every reservation ConfigMap; the seed
// name follows.
const ConfigMapPrefix = "seedwarden-capacity-"

// Labels and annotations of the reservation ConfigMaps.
const (
	LabelManagedBy     = "app.kubernetes.io/managed-by"
	LabelComponent     = "app.kubernetes.io/component"
	ManagedBy          = "seedwarden"
	Component          = "capacity-reservations"
	AnnotationSeedName = "seedwarden.io/seed"
)

// Defaults of Options.
const (
	DefaultTimeout     = 3 * time.Second
	DefaultMaxAttempts = 10
	DefaultPruneAfter  = 10 * time.Second
)

// ConfigMapName is the name of seed's reservation ConfigMap.
func ConfigMapName(seed string) string { return ConfigMapPrefix + seed }

// LocalShoots is what a Reserver needs of this replica's cache (cache.Store).
type LocalShoots interface {
	// ShootsOnSeed returns the Shoots that count against seed and, for each
	// of refs, that Shoot's state (pending only carrying the ref's
	// identity), both from one instant of the cache.
	ShootsOnSeed(seed string, refs []cache.ShootRef) (shoots int64, states []cache.ShootState)
	// PendingUID returns the metadata.uid of the Shoot key
	// ("namespace/name") if the cache holds it waiting without a seed.
	PendingUID(key string) (uid string, ok bool)
	// Seed returns the seed of that name; its Object's UID becomes the
	// owner of the seed's reservation ConfigMap.
	Seed(name string) (*placement.Seed, bool)
}

var _ LocalShoots = (*cache.Store)(nil)

// Options configure a Reserver.
type Options struct {
	// Namespace holds the reservation ConfigMaps. Required.
	Namespace string
	// TTL is how long a reservation holds its place without the Shoot
	// showing up (reservationTTL). Default: cache.DefaultReservationTTL.
	TTL time.Duration
	// ConfirmWindow is how long an entry counts before the cache holds its
	// Shoot (reservations.confirmWindow); after it, an entry counts only
	// while its Shoot waits in the cache without a seed. Default:
	// cache.DefaultConfirmWindow; at most TTL.
	ConfirmWindow time.Duration
	// PruneAfter is the age after which a writer drops an entry whose Shoot
	// its cache shows on the seed; younger ones stay so that replicas whose
	// watch lags still count the Shoot once. At or above TTL, entries only
	// expire. Default: 10s.
	PruneAfter time.Duration
	// Timeout bounds one Reserve or Check, conflict retries and waiting for
	// this replica's earlier requests for the seed included. Default: 3s
	// (the webhook's timeoutSeconds is 5).
	Timeout time.Duration
	// MaxAttempts bounds the writes tried per batch when other replicas'
	// updates conflict. Default: 10.
	MaxAttempts int
	// Limits bound the unconfirmed entries this replica writes (zero
	// fields: the defaults of cache.Limits); a Reserve beyond them returns a
	// *cache.LimitError without writing.
	Limits cache.Limits
	// Leading reports whether this replica's retry controller leads; nil:
	// no replica leads one (a lone replica, or no retry controller). With
	// it, a replica that does not lead leaves contended seeds to the
	// leader (Defers; contention.go).
	Leading func() bool
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Metrics may be nil.
	Metrics Recorder
	Log     logr.Logger
}

// Reserver reserves places on seeds through the API server. It implements
// handlers.ClusterReserver. All methods are safe for concurrent use.
type Reserver struct {
	client      client.Client
	local       LocalShoots
	namespace   string
	ttl         time.Duration
	life        cache.Lifetime
	pruneAfter  time.Duration
	timeout     time.Duration
	maxAttempts int
	now         func() time.Time
	leading     func() bool
	metrics     recorder
	log         logr.Logger
	ledger      *ledger
	seen        *sightings

	mu     sync.Mutex
	queues map[string]*queue // per seed
}

// New returns a Reserver writing through c, which must read from the API
// server, not from an informer cache (client.New, or NewClient; not a
// manager's default client), and counting the Shoots local sees.
func New(c client.Client, local LocalShoots, o Options) (*Reserver, error) {
	if c == nil || local == nil {
		return nil, errors.New("seedreserve: a client and the local cache are required")
	}
	if errs := validation.IsDNS1123Label(o.Namespace); len(errs) > 0 {
		return nil, fmt.Errorf("seedreserve: namespace %q: %s", o.Namespace, strings.Join(errs, "; "))
	}
	if o.TTL <= 0 {
		o.TTL = cache.DefaultReservationTTL
	}
	if o.ConfirmWindow <= 0 {
		o.ConfirmWindow = cache.DefaultConfirmWindow
	}
	o.ConfirmWindow = min(o.ConfirmWindow, o.TTL)
	if o.PruneAfter <= 0 {
		o.PruneAfter = DefaultPruneAfter
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = DefaultMaxAttempts
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	life := cache.Lifetime{ConfirmWindow: o.ConfirmWindow, TTL: o.TTL}
	return &Reserver{
		client: c, local: local, namespace: o.Namespace,
		ttl: o.TTL, life: life, pruneAfter: o.PruneAfter, timeout: o.Timeout, maxAttempts: o.MaxAttempts,
		now: o.Now, leading: o.Leading, metrics: recorder{o.Metrics}, log: o.Log,
		ledger: newLedger(o.Limits, life, local), seen: newSightings(),
		queues: map[string]*queue{},
	}, nil
}

// Namespace returns the namespace of the reservation ConfigMaps.
func (r *Reserver) Namespace() string { return r.namespace }

// Reserve is ReserveFor the Shoot key ("namespace/name") as this replica's
// cache holds it (the retry controller's bind): a Shoot waiting there
// without a seed is reserved for as the Shoot that exists, under its
// metadata.uid; any other key as a new Shoot's that nothing confirms.
func (r *Reserver) Reserve(ctx context.Context, seed, key, user string, allocatable int64) error {
	h := cache.Holder{ShootRef: cache.ShootRef{Key: key}, User: user}
	if uid, ok := r.local.PendingUID(key); ok {
		h.ID, h.Exists = uid, true
	}
	return r.ReserveFor(ctx, seed, h, allocatable)
}

// ReserveFor takes a place on seed for h (h.User "" where unknown), unless
// seed's usage, counted across replicas, would exceed allocatable: then it
// returns a *cache.CapacityError. The entry lives by cache.Lifetime: it
// counts for the confirm window, then only while a replica's cache holds
// the Shoot of its identity (h.ID) waiting without a seed, and ends when
// that Shoot is counted on the seed or deleted. An entry of the same
// identity keeps its place and its expiry: sending a request again never
// makes a place last longer than the TTL; one of another identity under the
// key is replaced. A new entry beyond Options.Limits is not written: a
// *cache.LimitError, which holds no place (the same request's live entry
// is admitted as ever). Any other error means nothing could be decided; the
// caller must deny.
func (r *Reserver) ReserveFor(ctx context.Context, seed string, h cache.Holder, allocatable int64) error {
	req, err := r.newRequest(seed, h.ShootRef, allocatable)
	if err != nil {
		return err
	}
	h.ShootRef = req.ref
	if validID(h.Announced) == nil {
		req.announced = h.Announced
	}
	taken, err := r.ledger.take(seed, h, r.now())
	if err != nil {
		// Past the limit the key may still hold its place, reserved by
		// the mutating webhook (of any replica): only the ConfigMap knows.
		req.refused = err
	}
	err = r.reserve(ctx, seed, req)
	if req.refused != nil && errors.Is(err, req.refused) {
		r.metrics.refused(err)
	}
	if taken {
		// Rounded up like the written expiry, which was decided before now.
		r.ledger.settle(h.Key, err, r.now().Add(r.ttl+time.Millisecond))
	}
	return err
}

// reserve queues req for seed's batch and waits for its answer.
func (r *Reserver) reserve(ctx context.Context, seed string, req *request) (err error) {
	start := time.Now()
	defer func() { r.metrics.observe(opReserve, err, time.Since(start)) }()
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()

	q := r.queue(seed)
	q.mu.Lock()
	q.pending = append(q.pending, req)
	idle := !q.busy
	q.busy = true
	q.mu.Unlock()
	if idle {
		go r.run(seed, q)
	}
	select {
	case err := <-req.done:
		return err
	case <-ctx.Done():
		req.abandoned.Store(true)
		select {
		case err := <-req.done: // answered meanwhile
			return err
		default:
		}
		// If the batch it is in is being written, the place stays held
		// until the entry expires: conservative.
		return fmt.Errorf("reserving a place on seed %q through the API server: %w", seed, ctx.Err())
	}
}

// Check answers what Reserve would, from a fresh GET, without writing (dry
// runs).
func (r *Reserver) Check(ctx context.Context, seed, key string, allocatable int64) (err error) {
	start := time.Now()
	defer func() { r.metrics.observe(opCheck, err, time.Since(start)) }()
	req, err := r.newRequest(seed, cache.ShootRef{Key: key}, allocatable)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	cm, _, err := r.get(ctx, seed)
	if err != nil {
		return err
	}
	d := r.decide(seed, cm.Data, []*request{req}, r.now())
	return d.results[0]
}

// request is one Reserve waiting for its batch.
type request struct {
	key   string         // ConfigMap data key: "<namespace>.<name>"
	ref   cache.ShootRef // Key "<namespace>/<name>", the identity
	alloc int64
	// refused: the limits refuse a new entry; the request is admitted only
	// if the key holds a live one, else answered with this error.
	refused error
	// announced: an entry of this identity is the request's own too (the
	// admission's, which the Shoot carries): kept, not written again.
	announced string
	done      chan error // buffered: the batch never blocks on a caller
	// abandoned: the caller stopped waiting; a batch not yet decided
	// leaves the request out.
	abandoned atomic.Bool
	answered  bool // by the batch goroutine only
}

func (r *Reserver) newRequest(seed string, ref cache.ShootRef, allocatable int64) (*request, error) {
	name := ConfigMapName(seed)
	if seed == "" || len(validation.IsDNS1123Subdomain(name)) > 0 {
		return nil, fmt.Errorf("seed name %q cannot name a reservation ConfigMap", seed)
	}
	dataKey, err := encodeKey(ref.Key)
	if err != nil {
		return nil, err
	}
	if validID(ref.ID) != nil {
		ref.ID = "" // not storable: confirmed by nothing
	}
	return &request{key: dataKey, ref: ref, alloc: allocatable, done: make(chan error, 1)}, nil
}

// encodeKey turns "namespace/name" into a ConfigMap data key. A namespace
// is a DNS label (no dots), so the first "." separates it again.
func encodeKey(key string) (string, error) {
	ns, name, ok := strings.Cut(key, "/")
	if !ok || ns == "" || name == "" || strings.Contains(ns, ".") {
		return "", fmt.Errorf("reservation key %q is not <namespace>/<name>", key)
	}
	k := ns + "." + name
	if errs := validation.IsConfigMapKey(k); len(errs) > 0 {
		return "", fmt.Errorf("reservation key %q cannot be stored: %s", key, strings.Join(errs, "; "))
	}
	return k, nil
}

// decodeKey is the Shoot key of a ConfigMap data key, or "" for a key that
// seedwarden did not write (it is counted, never deduplicated).
func decodeKey(k string) string {
	ns, name, ok := strings.Cut(k, ".")
	if !ok || ns == "" || name == "" {
		return ""
	}
	return ns + "/" + name
}
