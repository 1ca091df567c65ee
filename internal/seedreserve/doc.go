// Package seedreserve makes the capacity check hold across replicas: a place
// on a seed is reserved through the API server, so that etcd, not each
// replica's memory, decides who gets the last free places.
//
// # The problem
//
// Each replica keeps its reservations in memory (cache.Store). Three
// replicas behind one Service each see the same free places and give them
// away independently: with 100 free places, 300 concurrent Shoot CREATEs can
// place up to 300.
//
// # The design
//
// The capacity validating webhook (it runs after name generation, so it
// knows namespace/name) takes a cluster-wide reservation in a ConfigMap per
// seed, seedwarden-capacity-<seed>, in the webhook's own namespace
// (capacity.reservationNamespace, default the pod's). Its data maps a
// reservation key, "<namespace>.<name>" of the Shoot (ConfigMap keys cannot
// hold "/"; namespaces cannot hold "."), to the reservation's expiry (RFC
// 3339, written + TTL, rounded up to the millisecond) and, after ";", the
// identity of the Shoot it was taken for (entry.go: format and rolling
// upgrades). A reservation:
//
//  1. GETs the ConfigMap from the API server (never from a cache) and drops
//     expired entries;
//  2. counts the seed's usage as the Shoots this replica's cache charges to
//     the seed plus the entries whose Shoot is not one of them;
//  3. denies with a *cache.CapacityError (both numbers) if usage+1 would
//     exceed allocatable; else adds the entry and UPDATEs with the
//     resourceVersion it read (CREATEs on first use). A 409 Conflict (or
//     AlreadyExists on first use) means another replica wrote in between:
//     GET again and decide again, a bounded number of times with a small
//     random backoff.
//
// Dry runs GET and count but write nothing. Reserving a key that holds a live
// entry admits it and keeps its expiry (a retried request is not counted
// twice, and sending it again never holds the place beyond the first
// request's TTL). So does the leader's bind of an announced Shoot
// (cache.Holder's Announced: the identity in the Shoot's
// seedwarden.io/reservation, which only seedwarden writes) finding the
// admission's entry of that identity under the Shoot's key, while it lasts
// long enough (Reserver.keptUntil): the bind writes nothing, and the entry
// holds the place until every replica counts the bound Shoot.
//
// Entries live by the Store's rule, cache.Lifetime: a replica counts an
// entry while it is younger than the confirm window (Options.ConfirmWindow,
// reckoned back from the expiry), and after that only while the Shoot of its
// identity is in the replica's cache without a seed (confirmed: it waits for
// its binding). An entry past the window whose Shoot is absent (a later
// admission step refused the CREATE), on another seed, or another Shoot of
// that name (a CREATE of a name that exists) counts nothing and is dropped
// by the next write; so does one whose Shoot the replica saw deleted,
// window or not. So a refused CREATE holds its place for the window, not
// the TTL, with no write to end it. The identity is the mutating webhook's
// request UID for a CREATE (ClusterPlacer; the Shoot carries it in
// seedwarden.io/reservation), the Shoot's metadata.uid for one that exists
// (Reserve, the capacity webhook's bindings); a request of another identity
// for a key replaces its entry.
//
// # Clock skew
//
// An entry's age is the one its expiry implies on the reader's clock, but
// never more than the time this replica has seen the entry unless the two
// differ by more than MaxClockSkew (10 s). So up to that skew between
// replicas, either way, no entry is taken for older than it is: the confirm
// window and the TTL never end early, and the seed never overfills because
// of skew. A replica whose clock runs behind the writer's counts the
// writer's entries up to the skew longer; one that reads an entry for the
// first time long after it was written counts it at most MaxClockSkew
// longer. An expiry more than TTL + MaxClockSkew ahead is implausible:
// counted as live, and rewritten to one TTL from the reader's now.
//
// Limits: a replica writes at most Options.Limits unconfirmed entries per
// namespace, per user and in all (config reservations.maxPerNamespace,
// maxPerUser and maxTotal), so that forged admission reviews cannot fill the
// ConfigMaps (ledger.go); its confirmed entries count against the
// namespace's limit too. An entry for a Shoot that exists (cache.Holder's
// Exists, and the cache holds that Shoot) is never refused. Requests still in flight
// count, so a burst of real CREATEs in one namespace reaches them too. Beyond
// them Reserve writes nothing: it admits a key whose live entry holds its
// place already (the mutating webhook's, of any replica), and returns a
// *cache.LimitError for any other, which holds no place. The capacity
// webhook denies it: a placement admitted from a GET alone would hold
// nothing, so a concurrent reservation of the same last place, on any
// replica, would not count it and the seed would overfill. The mutating
// webhook leaves such a Shoot unplaced. The limits hold per replica: all
// replicas together write at most their number times the limits.
//
// Why one object per seed: optimistic concurrency serialises exactly the
// requests that compete for the same places. Requests for different seeds
// never conflict, and the object stays small (entries not yet counted as
// Shoots are bounded by the seed's allocatable, the others are pruned; about
// 60 bytes each). One object for all seeds would serialise
// the whole landscape; an object per reservation would need a List to count,
// and a List cannot be made atomic with a Create.
//
// Why dedupe by Shoot key: between admission and the Shoot reaching every
// replica's watch, a Shoot is represented by its entry; afterwards by
// itself. A replica counts an entry only if its own cache does not already
// charge that Shoot to the seed, so a Shoot counts exactly once whether this
// replica has seen it yet or not, and no replica counts less than what is
// really there, however far their watches lag each other (within the
// assumptions below). This is also why the key is the Shoot's name and not
// the admission UID.
//
// Pruning: the next writer (any replica) drops entries whose Shoot its cache
// shows on the seed, but only once the entry is Options.PruneAfter old
// (default 10s). Pruning at once would let a replica whose watch lags the
// pruner's by a few milliseconds see neither the entry nor the Shoot and
// give the place away again. Entries of Shoots that never appear end with
// the confirm window; confirmed ones with the TTL (reservationTTL).
//
// Within one replica, concurrent reservations for the same seed are batched:
// one goroutine per seed GETs, decides every queued request in order and
// writes them with one UPDATE. So a replica never conflicts with itself, a
// burst costs a few round trips instead of one per request, and conflicts
// (and retries) only arise between replicas.
//
// Between replicas (Options.Leading), the one whose retry controller leads
// keeps a contended seed: a replica that does not lead and whose write of
// the seed's ConfigMap another replica's beat within the last 10 s
// reserves nothing there at admission (Defers, ClusterPlacer.Defer). Its
// mutating webhook admits the Shoot without a seed, as at a limit, and the
// leader's retry controller reserves it in the leader's own batches.
// Replicas all choose the least-used seed, so without this they write one
// object in turn and most updates are refused (contention.go).
//
// # Failure behaviour
//
// Fail closed: any error talking to the API server (including a timeout,
// Options.Timeout, default 3s, inside the webhook's 5s), running out of
// conflict retries, or a key that cannot be stored, is returned and the
// capacity webhook denies with the error in the message. A refused CREATE can
// simply be sent again; an overfilled seed cannot be undone.
//
// What the guarantee rests on, in plain words:
//
//   - Every replica's watch shows a new Shoot within the confirm window
//     (and within PruneAfter of the entry's creation for pruning). A replica
//     whose watch is stopped for longer can undercount, as it could without
//     this package; seedwarden_reservation_confirmation_seconds shows the
//     margin.
//   - Replica clocks agree to within MaxClockSkew (10 s; see Clock skew).
//   - Nobody else edits or deletes the ConfigMaps; deleting one forgets its
//     live reservations.
//   - Shoots created past the webhook (while it was not called) are only
//     counted once the caches see them.
//
// A reservation on one seed that is then retried onto another keeps its
// first place until it expires (conservative).
//
// Every write makes the Seed (core.gardener.cloud/v1beta1, with the UID this
// replica's cache holds) the ConfigMap's owner, so the garbage collector
// deletes the ConfigMap with its Seed; a reference to an earlier Seed of the
// same name is replaced, or the collector would delete the new seed's
// reservations. blockOwnerDeletion is not set: it would need update on
// seeds/finalizers, and a Seed's deletion should not wait for it. A ConfigMap
// written while the cache did not know the Seed's UID is adopted by the next
// write.
//
// Every update also drops the ConfigMap's managedFields (resetManagedFields):
// with a data key per entry, tracking them cost kube-apiserver more than the
// rest of an update at a full seed's entries, and nothing needs them.
//
// The mutating webhook (through ClusterPlacer) chooses from its own
// replica's view and then reserves here under the same key before it
// answers; a seed found full is left out and the choice made again (a few
// seeds at most). The capacity webhook then finds that entry instead of
// counting the Shoot twice. A Shoot with only generateName has no name (no
// key) in the mutating webhook and is not reserved there: when replicas race
// for a seed's last places, it can still be refused by the capacity webhook
// ("seed ... is full").
//
// # Cost
//
// An uncontended reservation costs one GET and one UPDATE of a small object
// (two round trips to the API server, and one etcd write); a dry run costs
// one GET. Concurrent reservations for one seed on one replica share them.
// A batch that writes is decided on the copy this replica last read or
// wrote, so while no other replica writes the seed it costs the UPDATE
// alone (lastcopy.go: the update is conditional on the copy's
// resourceVersion, so it lands only where a fresh GET would have decided
// the same); a stale copy costs one refused UPDATE, then the seed is read
// first for a second. A batch of only binds that keep their announced
// Shoot's entry, on a copy younger than the confirm window, costs nothing
// (lastcopy.go says why that is safe); any other batch that writes nothing
// costs a GET.
// BenchmarkReserveAPIServer and TestThreeReplicasNeverOverfill measure it
// against a real kube-apiserver and etcd: on 2 cores shared by both and the
// test, about 4 ms per reservation (1 GET + 1 write) and 1 ms per dry run;
// 300 concurrent reservations on 3 replicas and 4 seeds took about 50 ms in
// all (p99 about 50 ms each, 37 GETs and 25 writes). In-memory reservations
// cost microseconds. seedwarden_capacity_reservation_duration_seconds
// measures it in production.
//
// # Configuration and permissions
//
// capacity.coordination: local (default: in-memory only, for one replica
// and --landscape) or apiserver. The ServiceAccount needs get, create and
// update on configmaps in capacity.reservationNamespace. That namespace must
// be excluded from webhooks on ConfigMaps (deploy/manifests excludes
// seedwarden's own namespace), or a reservation would call the webhook that
// is making it.
package seedreserve
