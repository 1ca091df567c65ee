package seedreserve

// Long file (over 450 lines): one Reserver with its batching, retries and
// ConfigMap encoding; to be split with the rest of issue 13 (item 9 names
// Reserver.decide).

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/api"
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

// maxExpiryAhead bounds how far in the future an entry's expiry may lie (the
// longest reservationTTL the configuration accepts, plus clock skew); a
// later one, like an unreadable one, was not written by seedwarden and is
// rewritten to expire one TTL from now the next time the object is written.
const maxExpiryAhead = time.Hour + time.Minute

// ConfigMapName is the name of seed's reservation ConfigMap.
func ConfigMapName(seed string) string { return ConfigMapPrefix + seed }

// LocalShoots is what a Reserver needs of this replica's cache (cache.Store).
type LocalShoots interface {
	// ShootsOnSeed returns the Shoots that count against seed and, for each
	// of keys ("namespace/name"), whether that Shoot is one of them, both
	// from one instant of the cache.
	ShootsOnSeed(seed string, keys []string) (shoots int64, charged []bool)
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
	pruneAfter  time.Duration
	timeout     time.Duration
	maxAttempts int
	now         func() time.Time
	metrics     recorder
	log         logr.Logger

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
	return &Reserver{
		client: c, local: local, namespace: o.Namespace,
		ttl: o.TTL, pruneAfter: o.PruneAfter, timeout: o.Timeout, maxAttempts: o.MaxAttempts,
		now: o.Now, metrics: recorder{o.Metrics}, log: o.Log,
		queues: map[string]*queue{},
	}, nil
}

// Namespace returns the namespace of the reservation ConfigMaps.
func (r *Reserver) Namespace() string { return r.namespace }

// Reserve takes a place on seed for key ("namespace/name" of the Shoot)
// unless seed's usage, counted across replicas, would exceed allocatable:
// then it returns a *cache.CapacityError. A key holding a live entry keeps
// its place (the expiry is renewed). Any other error means nothing could be
// decided; the caller must deny.
func (r *Reserver) Reserve(ctx context.Context, seed, key string, allocatable int64) (err error) {
	start := time.Now()
	defer func() { r.metrics.observe(opReserve, err, time.Since(start)) }()
	req, err := r.newRequest(seed, key, allocatable)
	if err != nil {
		return err
	}
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
	req, err := r.newRequest(seed, key, allocatable)
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
	key      string // ConfigMap data key: "<namespace>.<name>"
	shootKey string // "<namespace>/<name>"
	alloc    int64
	done     chan error // buffered: the batch never blocks on a caller
	// abandoned: the caller stopped waiting; a batch not yet decided
	// leaves the request out.
	abandoned atomic.Bool
	answered  bool // by the batch goroutine only
}

func (r *Reserver) newRequest(seed, key string, allocatable int64) (*request, error) {
	name := ConfigMapName(seed)
	if seed == "" || len(validation.IsDNS1123Subdomain(name)) > 0 {
		return nil, fmt.Errorf("seed name %q cannot name a reservation ConfigMap", seed)
	}
	dataKey, err := encodeKey(key)
	if err != nil {
		return nil, err
	}
	return &request{key: dataKey, shootKey: key, alloc: allocatable, done: make(chan error, 1)}, nil
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

// queue batches one seed's requests on this replica.
type queue struct {
	mu      sync.Mutex
	pending []*request
	busy    bool // a run goroutine is draining pending
}

func (r *Reserver) queue(seed string) *queue {
	r.mu.Lock()
	defer r.mu.Unlock()
	q := r.queues[seed]
	if q == nil {
		q = &queue{}
		r.queues[seed] = q
	}
	return q
}

// run commits the queued requests batch by batch until none are left.
func (r *Reserver) run(seed string, q *queue) {
	for {
		q.mu.Lock()
		batch := q.pending
		q.pending = nil
		if len(batch) == 0 {
			q.busy = false
			q.mu.Unlock()
			return
		}
		q.mu.Unlock()
		r.metrics.observeBatch(len(batch))
		r.commit(seed, batch)
	}
}

// commit decides and writes one batch: GET, decide every request in order,
// one write; on a conflict with another replica, again from a fresh GET.
func (r *Reserver) commit(seed string, batch []*request) {
	ctx, cancel := context.WithTimeout(context.Background(), r.timeout)
	defer cancel()
	var lastErr error
	for attempt := 1; attempt <= r.maxAttempts; attempt++ {
		live := batch[:0:0]
		for _, req := range batch {
			if !req.answered && !req.abandoned.Load() {
				live = append(live, req)
			}
		}
		if len(live) == 0 {
			return
		}
		cm, exists, err := r.get(ctx, seed)
		if err != nil {
			answer(live, nil, err)
			return
		}
		d := r.decide(seed, cm.Data, live, r.now())
		if !d.write {
			answer(live, d.results, nil)
			return
		}
		cm.Data = d.data
		err = r.write(ctx, seed, cm, exists)
		switch {
		case err == nil:
			answer(live, d.results, nil)
			return
		case apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) || (exists && apierrors.IsNotFound(err)):
			// Another replica wrote first (or created the object, or
			// someone deleted it): decide again on what is there now.
			lastErr = err
			r.metrics.conflict()
			r.log.V(1).Info("Reservation write conflicted; retrying", "seed", seed, "attempt", attempt, "requests", len(live), "error", err.Error())
			if err := sleep(ctx, jitter(attempt)); err != nil {
				answer(live, nil, fmt.Errorf("reserving a place on seed %q through the API server: %w", seed, err))
				return
			}
		default:
			// The denials stand (they were decided on what the API
			// server holds); the places could not be taken.
			answer(live, d.results, err)
			return
		}
	}
	rest := batch[:0:0]
	for _, req := range batch {
		if !req.answered {
			rest = append(rest, req)
		}
	}
	answer(rest, nil, fmt.Errorf("reserving a place on seed %q: %d attempts conflicted with other replicas' updates of ConfigMap %s/%s (last: %v)",
		seed, r.maxAttempts, r.namespace, ConfigMapName(seed), lastErr))
}

// answer delivers results[i] to reqs[i]; a non-nil writeErr replaces every
// nil result (a place that was granted but could not be written).
func answer(reqs []*request, results []error, writeErr error) {
	for i, req := range reqs {
		var err error
		if results != nil {
			err = results[i]
		}
		if err == nil {
			err = writeErr
		}
		req.answered = true
		req.done <- err
	}
}

func (r *Reserver) get(ctx context.Context, seed string) (cm *corev1.ConfigMap, exists bool, err error) {
	cm = &corev1.ConfigMap{}
	key := client.ObjectKey{Namespace: r.namespace, Name: ConfigMapName(seed)}
	switch err := r.client.Get(ctx, key, cm); {
	case err == nil:
		return cm, true, nil
	case apierrors.IsNotFound(err):
		return &corev1.ConfigMap{}, false, nil
	default:
		return nil, false, fmt.Errorf("reading reservations of seed %q (ConfigMap %s/%s): %w", seed, key.Namespace, key.Name, err)
	}
}

// write creates the ConfigMap on first use, else updates it under the
// resourceVersion it was read with. Either way the ConfigMap is owned by the
// Seed (see ownedBySeed).
func (r *Reserver) write(ctx context.Context, seed string, cm *corev1.ConfigMap, exists bool) error {
	if exists {
		cm.OwnerReferences = ownedBySeed(cm.OwnerReferences, r.seedOwner(seed))
		if err := r.client.Update(ctx, cm); err != nil {
			return wrapAPIError(err, "updating", r.namespace, seed)
		}
		return nil
	}
	cm.ObjectMeta = metav1.ObjectMeta{
		Namespace:       r.namespace,
		Name:            ConfigMapName(seed),
		Labels:          map[string]string{LabelManagedBy: ManagedBy, LabelComponent: Component},
		Annotations:     map[string]string{AnnotationSeedName: seed},
		OwnerReferences: ownedBySeed(nil, r.seedOwner(seed)),
	}
	if err := r.client.Create(ctx, cm); err != nil {
		return wrapAPIError(err, "creating", r.namespace, seed)
	}
	return nil
}

// seedOwner is the ownerReference to seed's Seed as this replica's cache
// knows it, or nil when the cache holds no UID for it. The garbage collector
// deletes the ConfigMap once that Seed is gone. BlockOwnerDeletion stays
// unset: setting it needs update on seeds/finalizers, and a reservation
// ConfigMap has no business delaying a Seed's deletion.
func (r *Reserver) seedOwner(seed string) *metav1.OwnerReference {
	sd, ok := r.local.Seed(seed)
	if !ok || sd.Object == nil || sd.Object.UID == "" {
		return nil
	}
	return &metav1.OwnerReference{
		APIVersion: api.SchemeGroupVersion.String(),
		Kind:       seedKind,
		Name:       seed,
		UID:        sd.Object.UID,
	}
}

const seedKind = "Seed"

// ownedBySeed returns refs with owner as the only Seed owner. A reference to
// an earlier Seed of the same name (deleted and created again) is replaced:
// the garbage collector would otherwise delete the ConfigMap with the new
// seed's reservations in it. A nil owner (the cache does not know the Seed)
// leaves refs as they are.
func ownedBySeed(refs []metav1.OwnerReference, owner *metav1.OwnerReference) []metav1.OwnerReference {
	if owner == nil {
		return refs
	}
	out := make([]metav1.OwnerReference, 0, len(refs)+1)
	for _, ref := range refs {
		if ref.Kind != seedKind || !strings.HasPrefix(ref.APIVersion, api.GroupName+"/") {
			out = append(out, ref)
		}
	}
	return append(out, *owner)
}

// wrapAPIError keeps the API status (apierrors.IsConflict and friends look
// through %w) and names the object.
func wrapAPIError(err error, verb, namespace, seed string) error {
	return fmt.Errorf("%s reservations of seed %q (ConfigMap %s/%s): %w", verb, seed, namespace, ConfigMapName(seed), err)
}

// decision is what one batch does to a seed's reservations.
type decision struct {
	results []error           // per request: nil or a *cache.CapacityError
	data    map[string]string // the ConfigMap data to write
	write   bool              // some request took or renewed a place
}

// decide counts the seed's usage from the stored entries and this replica's
// cache and decides every request in order. It does not touch the API.
func (r *Reserver) decide(seed string, stored map[string]string, reqs []*request, now time.Time) decision {
	type entry struct {
		key      string
		expires  time.Time
		rewrite  bool // unreadable or implausible expiry
		dropped  bool
		charged  bool // the cache charges its Shoot to the seed
		shootIdx int  // in keys; -1 for a key seedwarden did not write
	}
	renewed := expiryString(now.Add(r.ttl))
	entries := make(map[string]*entry, len(stored)+len(reqs))
	keys := make([]string, 0, len(stored)+len(reqs))
	for k, v := range stored {
		e := &entry{key: k, shootIdx: -1}
		exp, err := time.Parse(time.RFC3339, v)
		switch {
		case err != nil || exp.After(now.Add(maxExpiryAhead)):
			// Counted as live (conservative) and, when written, given one
			// TTL from now, so that it does end.
			e.expires, e.rewrite = now.Add(r.ttl), true
		case !exp.After(now):
			e.dropped = true // expired
		default:
			e.expires = exp
		}
		if sk := decodeKey(k); sk != "" && !e.dropped {
			e.shootIdx = len(keys)
			keys = append(keys, sk)
		}
		entries[k] = e
	}
	reqIdx := len(keys)
	for _, req := range reqs {
		keys = append(keys, req.shootKey)
	}
	shoots, charged := r.local.ShootsOnSeed(seed, keys)

	count := shoots
	for _, e := range entries {
		if e.dropped {
			continue
		}
		e.charged = e.shootIdx >= 0 && charged[e.shootIdx]
		switch {
		case e.charged && e.expires.Sub(now) <= r.ttl-r.pruneAfter:
			e.dropped = true // the Shoot counts itself, everywhere by now
		case !e.charged:
			count++
		}
	}

	d := decision{results: make([]error, len(reqs))}
	for i, req := range reqs {
		if e := entries[req.key]; e != nil && !e.dropped {
			// Retried, or a duplicate in this batch: already counted.
			e.expires, e.rewrite = time.Time{}, true
			d.write = true
			continue
		}
		if count+1 > req.alloc {
			d.results[i] = &cache.CapacityError{Seed: seed, Shoots: shoots, Reserved: count - shoots, Allocatable: req.alloc}
			continue
		}
		entries[req.key] = &entry{key: req.key, rewrite: true}
		if !charged[reqIdx+i] {
			count++
		}
		d.write = true
	}
	if !d.write {
		return d
	}
	d.data = make(map[string]string, len(entries))
	for k, e := range entries {
		switch {
		case e.dropped:
		case e.rewrite:
			d.data[k] = renewed
		default:
			d.data[k] = stored[k]
		}
	}
	return d
}

// expiryString rounds t up to the second, so that an entry never ends
// before its TTL.
func expiryString(t time.Time) string {
	if t.Truncate(time.Second) != t {
		t = t.Truncate(time.Second).Add(time.Second)
	}
	return t.UTC().Format(time.RFC3339)
}

// jitter is a small random backoff that grows with the attempt: replicas
// that conflicted should not collide again at once.
func jitter(attempt int) time.Duration {
	return time.Millisecond + rand.N(time.Duration(attempt)*4*time.Millisecond)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
