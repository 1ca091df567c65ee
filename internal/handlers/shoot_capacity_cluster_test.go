package handlers

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/placement"
	"github.com/seedwarden/seedwarden/internal/placementtoken"
	"github.com/seedwarden/seedwarden/internal/seedreserve"
)

// fakeCluster records the calls of the capacity webhook and the mutating
// webhook's placer, answers err, or finds the seeds in full full across
// replicas.
type fakeCluster struct {
	mu    sync.Mutex
	calls []string // "reserve|check seed key alloc"
	// holders are those of the reserve calls, in order.
	holders []cache.Holder
	err     error
	full    map[string]bool
}

func (f *fakeCluster) call(op, seed, key string, alloc int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fmt.Sprintf("%s %s %s %d", op, seed, key, alloc))
	if f.err == nil && f.full[seed] {
		return &cache.CapacityError{Seed: seed, Shoots: alloc, Allocatable: alloc}
	}
	return f.err
}

func (f *fakeCluster) ReserveFor(_ context.Context, seed string, h cache.Holder, alloc int64) error {
	f.mu.Lock()
	f.holders = append(f.holders, h)
	f.mu.Unlock()
	return f.call("reserve", seed, h.Key, alloc)
}

func (f *fakeCluster) Check(_ context.Context, seed, key string, alloc int64) error {
	return f.call("check", seed, key, alloc)
}

var (
	_ ClusterReserver = (*seedreserve.Reserver)(nil)
	_ Placer          = (*seedreserve.ClusterPlacer)(nil)
)

// With a ClusterReserver, it decides every placement on a seed with
// allocatable; the Store still records admitted places.
func TestShootCapacityValidatorCluster(t *testing.T) {
	const clusterKey = vNamespace + "/" + vName
	full := &cache.CapacityError{Seed: "small", Shoots: 1, Reserved: 1, Allocatable: 2}
	binding := func(oldSeed, newSeed string) vReview {
		return vReview{operation: admissionv1.Update, subResource: "binding", object: vShoot(newSeed, nil), oldObject: vShoot(oldSeed, nil)}
	}
	tests := []struct {
		name        string
		setup       func(f *capacityFixture)
		clusterErr  error
		review      func(f *capacityFixture) vReview
		wantAllowed bool
		wantMessage string
		wantCalls   []string
		wantUsage   map[string]int64
		wantKeys    map[string]string
	}{{
		name:        "manual create with room",
		review:      func(*capacityFixture) vReview { return vReview{object: vShoot("small", nil)} },
		wantAllowed: true, wantCalls: []string{"reserve small " + clusterKey + " 2"},
		wantUsage: map[string]int64{"small": 2}, wantKeys: map[string]string{manualKey: "small"},
	}, {
		name:        "manual create on a seed full across replicas",
		clusterErr:  full,
		review:      func(*capacityFixture) vReview { return vReview{object: vShoot("small", nil)} },
		wantMessage: `seedwarden: cannot place Shoot "garden-dev/crazy-botany": seed "small" is full: usage 2 (1 shoots + 1 reservations) + 1 would exceed allocatable shoots 2`,
		wantCalls:   []string{"reserve small " + clusterKey + " 2"},
		wantUsage:   map[string]int64{"small": 1}, wantKeys: map[string]string{manualKey: ""},
	}, {
		name:        "the API server cannot be reached",
		clusterErr:  errors.New(`reading reservations of seed "small" (ConfigMap seedwarden/seedwarden-capacity-small): connection refused`),
		review:      func(*capacityFixture) vReview { return vReview{object: vShoot("small", nil)} },
		wantMessage: `seedwarden: cannot check the capacity of seed "small": reading reservations of seed "small" (ConfigMap seedwarden/seedwarden-capacity-small): connection refused`,
		wantUsage:   map[string]int64{"small": 1},
	}, {
		name: "the cluster decides, not this replica's fuller view",
		setup: func(f *capacityFixture) {
			require.NoError(t, f.store.Reserve("small", cache.Claim{Key: "in-flight-here", Namespace: "garden-dev"})) // local view: full
		},
		review:      func(*capacityFixture) vReview { return vReview{object: vShoot("small", nil)} },
		wantAllowed: true, wantCalls: []string{"reserve small " + clusterKey + " 2"},
		wantKeys: map[string]string{manualKey: ""},
	}, {
		name:        "dry run checks",
		review:      func(*capacityFixture) vReview { return vReview{object: vShoot("small", nil), dryRun: true} },
		wantAllowed: true, wantCalls: []string{"check small " + clusterKey + " 2"},
		wantUsage: map[string]int64{"small": 1}, wantKeys: map[string]string{manualKey: ""},
	}, {
		name:        "dry run on a full seed",
		clusterErr:  full,
		review:      func(*capacityFixture) vReview { return vReview{object: vShoot("small", nil), dryRun: true} },
		wantMessage: `seed "small" is full`, wantCalls: []string{"check small " + clusterKey + " 2"},
	}, {
		name:        "binding",
		review:      func(*capacityFixture) vReview { return binding("full", "small") },
		wantAllowed: true, wantCalls: []string{"reserve small " + clusterKey + " 2"},
		wantKeys: map[string]string{manualKey: "small"},
	}, {
		name: "own placement held here still reserves across replicas",
		setup: func(f *capacityFixture) {
			require.NoError(t, f.store.Reserve("small", shootClaim(mutatingUID)))
		},
		review:      func(f *capacityFixture) vReview { return vReview{object: vShoot("small", f.ownPlacement("small"))} },
		wantAllowed: true, wantCalls: []string{"reserve small " + clusterKey + " 2"},
		wantUsage: map[string]int64{"small": 2}, wantKeys: map[string]string{mutatingUID: "small", manualKey: ""},
	}, {
		name: "own placement held here on a seed full across replicas gives the place back",
		setup: func(f *capacityFixture) {
			require.NoError(t, f.store.Reserve("small", shootClaim(mutatingUID)))
		},
		clusterErr:  full,
		review:      func(f *capacityFixture) vReview { return vReview{object: vShoot("small", f.ownPlacement("small"))} },
		wantMessage: `seed "small" is full`, wantCalls: []string{"reserve small " + clusterKey + " 2"},
		wantUsage: map[string]int64{"small": 1}, wantKeys: map[string]string{mutatingUID: ""},
	}, {
		name:        "own placement from another replica",
		review:      func(f *capacityFixture) vReview { return vReview{object: vShoot("small", f.ownPlacement("small"))} },
		wantAllowed: true, wantCalls: []string{"reserve small " + clusterKey + " 2"},
		wantKeys: map[string]string{mutatingUID: "small", manualKey: ""},
	}, {
		name:        "seed without allocatable",
		review:      func(*capacityFixture) vReview { return vReview{object: vShoot("unlimited", nil)} },
		wantAllowed: true, wantUsage: map[string]int64{"unlimited": 1},
	}, {
		name:        "unknown seed",
		review:      func(*capacityFixture) vReview { return vReview{object: vShoot("nope", nil)} },
		wantMessage: `seedwarden: seed "nope" not found; its capacity cannot be checked`,
	}, {
		name: "unrestricted subjects are not checked",
		review: func(*capacityFixture) vReview {
			r := vReview{object: vShoot("full", nil)}
			r.user = &authenticationv1.UserInfo{Username: "admin@example.com"}
			return r
		},
		wantAllowed: true,
	}, {
		name: "seed unchanged",
		review: func(*capacityFixture) vReview {
			return vReview{operation: admissionv1.Update, object: vShoot("full", nil), oldObject: vShoot("full", nil)}
		},
		wantAllowed: true,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newCapacityFixture(t)
			cluster := &fakeCluster{err: tc.clusterErr}
			f.v.Cluster = cluster
			if tc.setup != nil {
				tc.setup(f)
			}
			resp := vServe(t, f.v, tc.review(f).body(t))
			assert.Equal(t, tc.wantAllowed, resp.Allowed, vMessage(resp))
			if tc.wantMessage != "" {
				assert.Contains(t, vMessage(resp), tc.wantMessage)
			}
			if !resp.Allowed {
				assert.Equal(t, int32(http.StatusForbidden), resp.Result.Code)
			}
			if tc.wantCalls != nil || tc.clusterErr == nil {
				assert.Equal(t, tc.wantCalls, cluster.calls)
			}
			for seed, want := range tc.wantUsage {
				assert.Equal(t, want, f.store.Usage(seed), "usage of %s", seed)
			}
			for key, want := range tc.wantKeys {
				assert.Equal(t, want, f.reservation(key), "reservation %s", key)
			}
		})
	}
}

// replica is one webhook process: its own cache, its own handlers, the
// shared placement key and API server.
type replica struct {
	store *cache.Store
	chain *chain
}

func newReplicas(t *testing.T, n int, api client.Client, landscape func(*cache.Store)) []replica {
	out := make([]replica, n)
	clock := newVClock()
	for i := range out {
		store := burstStore(clock, vSeed("target", 60))
		landscape(store)
		c := newChain(t, store, &fakeAuthorizer{allowed: map[string]bool{vBinder: true}})
		if api != nil {
			// Timeouts far above what 300 concurrent requests take, even
			// under the race detector on a loaded machine: a reservation
			// abandoned after its batch was written holds its place until
			// it expires, which would make the count below vary.
			r, err := seedreserve.New(api, store, seedreserve.Options{
				Namespace: "seedwarden", Timeout: time.Minute, Limits: burstLimits, Now: clock.Now, Log: logr.Discard(),
			})
			require.NoError(t, err)
			c.capacity.Cluster = r
			c.mutator.Placer = &seedreserve.ClusterPlacer{Local: store, Cluster: r, Timeout: time.Minute}
		}
		out[i] = replica{store: store, chain: c}
	}
	return out
}

// admitAcross runs CREATE i through the mutating webhook of one replica and
// the validating webhooks of another, as a Service spreads calls.
func admitAcross(t *testing.T, replicas []replica, i int, object string, user *authenticationv1.UserInfo) (seed string, ok bool, why string) {
	name := fmt.Sprintf("shoot-%03d", i)
	m, v := replicas[i%len(replicas)].chain, replicas[(i+1)%len(replicas)].chain
	split := &chain{mutator: m.mutator, binding: v.binding, capacity: v.capacity}
	return split.admitCreate(t, fmt.Sprintf("uid-%03d", i), name, object, user)
}

// Three replicas, 300 CREATEs, one seed with 50 free places. Without
// coordination each replica gives the places away on its own (even one
// request at a time). Reserving through the API server, 300 concurrent
// CREATEs place exactly 50: the rest are admitted unplaced by a mutating
// webhook that found the seed full (its replica's view, or its cluster-wide
// reservation), or, for seeds set by the user, refused by the capacity
// webhook because other replicas took the places first.
func TestConcurrentCreatesAcrossReplicas(t *testing.T) {
	landscape := func(s *cache.Store) { vShootsOn(s, "target", 10) }
	run := func(t *testing.T, replicas []replica, manual, concurrent bool) (placed, refused int, other []string) {
		var (
			mu       sync.Mutex
			wg       sync.WaitGroup
			unplaced int
		)
		defer func() { t.Logf("placed %d, admitted unplaced %d, refused for capacity %d", placed, unplaced, refused) }()
		for i := range 300 {
			wg.Go(func() {
				object, user := namedShoot(fmt.Sprintf("shoot-%03d", i), ""), (*authenticationv1.UserInfo)(nil)
				if manual {
					object, user = namedShoot(fmt.Sprintf("shoot-%03d", i), "target"), binderUser
				}
				seed, ok, why := admitAcross(t, replicas, i, object, user)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case ok && seed == "target":
					placed++
				case ok && seed == "":
					unplaced++
				case !ok && strings.HasPrefix(why, "capacity: ") && strings.Contains(why, "would exceed allocatable shoots 60"):
					refused++
				default:
					other = append(other, fmt.Sprintf("%v %q %s", ok, seed, why))
				}
			})
			if !concurrent {
				wg.Wait()
			}
		}
		wg.Wait()
		return placed, refused, other
	}

	t.Run("local only overfills", func(t *testing.T) {
		// One request at a time, so that it fails the same way every run:
		// each replica counts only the places it reserved itself.
		placed, _, other := run(t, newReplicas(t, 3, nil, landscape), false, false)
		assert.Empty(t, other)
		assert.Greater(t, placed, 50, "the problem this package solves")
	})
	for _, manual := range []bool{false, true} {
		t.Run(fmt.Sprintf("apiserver manual=%v", manual), func(t *testing.T) {
			scheme := runtime.NewScheme()
			require.NoError(t, corev1.AddToScheme(scheme))
			api := fake.NewClientBuilder().WithScheme(scheme).Build()
			placed, refused, other := run(t, newReplicas(t, 3, api, landscape), manual, true)
			assert.Empty(t, other)
			assert.Equal(t, 50, placed)
			if !manual {
				// The mutating webhook reserved before answering: what it
				// placed, the capacity webhook admits.
				assert.Zero(t, refused)
			}
			cm := &corev1.ConfigMap{}
			require.NoError(t, api.Get(context.Background(), client.ObjectKey{Namespace: "seedwarden", Name: "seedwarden-capacity-target"}, cm))
			assert.Len(t, cm.Data, 50)
		})
	}
}

// The fast path answers a placement that went to the next-best seed, the
// first being full across replicas, exactly as controller-runtime's webhook
// does.
func TestMutatorFastPathMatchesAdmissionAcrossReplicas(t *testing.T) {
	for _, announce := range []bool{false, true} {
		bodies := map[string]string{}
		for name, mk := range map[string]func(*ShootMutator) http.Handler{
			"fast":   func(m *ShootMutator) http.Handler { return NewMutatingHTTPHandler(m, 0) },
			"oracle": oracle,
		} {
			store := vStore(vSeed("a", 10), vSeed("b", 10))
			vShootsOn(store, "b", 1)
			cluster := &fakeCluster{full: map[string]bool{"a": true}}
			m := &ShootMutator{
				Placer:        &seedreserve.ClusterPlacer{Local: store, Cluster: cluster, Log: logr.Discard()},
				Options:       placement.Options{Strategy: placement.MinimalDistance, NetworkMode: placement.Disjoint},
				SchedulerName: "default-scheduler", Announce: announce, Log: logr.Discard(),
			}
			req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/mutate-shoots",
				strings.NewReader(vReview{uid: "uid-1", object: vShoot("", nil)}.body(t)))
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			mk(m).ServeHTTP(rec, req)
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
			require.Len(t, cluster.calls, 2, name)
			bodies[name] = rec.Body.String()
		}
		assert.Contains(t, bodies["fast"], `"allowed":true`)
		assert.Equal(t, bodies["oracle"], bodies["fast"], "announce=%v", announce)
	}
}

// The reservation limits bound the entries a replica writes; they must never
// let a placement through without a place held across replicas. Replica A
// is at its limit for garden-dev (a burst in flight) when the retry
// controller binds a pending Shoot through it; replica B then reserves the
// same seed's last place for a manual placement. Admitted from a check alone,
// the binding would hold nothing, B would see the place free, and the seed
// would hold one Shoot too many.
func TestCapacityAtReservationLimitNeverOverfillsAcrossReplicas(t *testing.T) {
	clock := newVClock()
	signer := vSigner(t, clock)
	scheme := runtime.NewScheme()
	require.NoError(t, corev1.AddToScheme(scheme))
	apiServer := fake.NewClientBuilder().WithScheme(scheme).Build()
	replica := func(limits cache.Limits) (*ShootCapacityValidator, *seedreserve.Reserver) {
		store := floodStore(clock, cache.Limits{}, nil, []string{"garden-dev"}, vSeed("aws-eu1", 2), vSeed("aws-eu2", 10))
		r, err := seedreserve.New(apiServer, store, seedreserve.Options{Namespace: "seedwarden", Now: clock.Now, Timeout: time.Minute, Limits: limits, Log: logr.Discard()})
		require.NoError(t, err)
		return &ShootCapacityValidator{Store: store, Projects: store, Cluster: r, Signer: signer, Log: logr.Discard()}, r
	}
	a, _ := replica(cache.Limits{PerNamespace: 1})
	b, bReserver := replica(cache.Limits{})
	create := func(v *ShootCapacityValidator, name, seed string) *admissionv1.AdmissionResponse {
		return vServe(t, v, vReview{name: name, object: namedShoot(name, seed), user: binderUser}.body(t))
	}
	entries := func(seed string) []string {
		cm := &corev1.ConfigMap{}
		require.NoError(t, apiServer.Get(t.Context(), client.ObjectKey{Namespace: "seedwarden", Name: seedreserve.ConfigMapName(seed)}, cm))
		return slices.Sorted(maps.Keys(cm.Data))
	}

	// A's one entry for garden-dev, and one of aws-eu1's two places taken;
	// neither Shoot has reached the caches yet.
	require.True(t, create(a, "first", "aws-eu2").Allowed)
	require.True(t, create(b, "taken", "aws-eu1").Allowed)

	bind := vServe(t, a, vReview{
		operation: admissionv1.Update, name: "pending", user: binderUser,
		object: namedShoot("pending", "aws-eu1"), oldObject: namedShoot("pending", ""),
	}.body(t))
	manual := create(b, "manual", "aws-eu1")
	admitted := 0
	for _, resp := range []*admissionv1.AdmissionResponse{bind, manual} {
		if resp.Allowed {
			admitted++
		}
	}
	assert.Equal(t, 1, admitted, "aws-eu1 had one free place; binding: %q, manual: %q", vMessage(bind), vMessage(manual))
	assert.False(t, bind.Allowed, "at the limit no place can be held for the binding")
	assert.Contains(t, vMessage(bind), "reservations.maxPerNamespace")
	assert.True(t, manual.Allowed, vMessage(manual))
	assert.Equal(t, []string{"garden-dev.manual", "garden-dev.taken"}, entries("aws-eu1"))

	// A Shoot whose place is held already (B's mutating webhook reserved
	// it under its request's UID, which the Shoot carries with B's token)
	// is still admitted by A at its limit, and nothing is written.
	const mutatingUID = "b-mutating-uid"
	require.NoError(t, bReserver.ReserveFor(t.Context(), "aws-eu2",
		cache.Holder{ShootRef: cache.ShootRef{Key: "garden-dev/placed-by-b", ID: mutatingUID}}, 10))
	placed := strings.Replace(vShoot("aws-eu2", map[string]string{
		cache.AnnotationReservation: mutatingUID,
		placementtoken.Annotation:   signer.Sign(placementtoken.Subject{Namespace: vNamespace, Name: "placed-by-b", Seed: "aws-eu2"}),
	}), `"name": "crazy-botany",`, `"name": "placed-by-b",`, 1)
	resp := vServe(t, a, vReview{name: "placed-by-b", object: placed, user: binderUser}.body(t))
	assert.True(t, resp.Allowed, vMessage(resp))
	assert.Equal(t, []string{"garden-dev.first", "garden-dev.placed-by-b"}, entries("aws-eu2"))

	// A CREATE of that name without B's key (another request, a re-CREATE
	// of the name) is a new entry: refused at A's limit.
	resp = create(a, "placed-by-b", "aws-eu2")
	assert.False(t, resp.Allowed, vMessage(resp))
	assert.Contains(t, vMessage(resp), "reservations.maxPerNamespace")
}

// The cluster-wide entry names the Shoot it is for (cache.ShootRef.ID): a
// CREATE placed by the mutating webhook carries that webhook's request UID
// (its reservation key, trusted with its token); a seed set by hand at
// CREATE, this request's UID, which no Shoot carries; a binding of a Shoot
// that exists, its metadata.uid.
func TestCapacityClusterEntryIdentity(t *testing.T) {
	const shootUID = "0b7a5c1e-7a52-4e8e-9c1a-2f0d3b6c7e11"
	withUID := func(seed string) string {
		return shootJSON(fmt.Sprintf(`"uid": %q,`, shootUID), fmt.Sprintf(`"seedName": %q,`, seed))
	}
	for _, tc := range []struct {
		name   string
		review func(f *capacityFixture) vReview
		want   cache.Holder
	}{{
		name:   "the mutating webhook's placement",
		review: func(f *capacityFixture) vReview { return vReview{object: vShoot("small", f.ownPlacement("small"))} },
		want:   cache.Holder{ShootRef: cache.ShootRef{Key: vNamespace + "/" + vName, ID: mutatingUID}, User: vUser},
	}, {
		name: "a key without its token is the user's: this request's own",
		review: func(*capacityFixture) vReview {
			return vReview{object: vShoot("small", map[string]string{cache.AnnotationReservation: "older"})}
		},
		want: cache.Holder{ShootRef: cache.ShootRef{Key: vNamespace + "/" + vName, ID: testUID}, User: vUser},
	}, {
		name: "a binding",
		review: func(*capacityFixture) vReview {
			return vReview{operation: admissionv1.Update, subResource: "binding", object: withUID("small"), oldObject: withUID("")}
		},
		want: cache.Holder{ShootRef: cache.ShootRef{Key: vNamespace + "/" + vName, ID: shootUID}, User: vUser, Exists: true},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newCapacityFixture(t)
			cluster := &fakeCluster{}
			f.v.Cluster = cluster
			resp := vServe(t, f.v, tc.review(f).body(t))
			require.True(t, resp.Allowed, vMessage(resp))
			assert.Equal(t, []cache.Holder{tc.want}, cluster.holders)
		})
	}
}
