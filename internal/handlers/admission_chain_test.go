package handlers

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/placement"
	"github.com/seedwarden/seedwarden/internal/seedreserve"
)

// The admission chain as the API server runs it for a Shoot CREATE: the
// mutating webhook, its patch applied, then the validating webhooks (binding
// and capacity) on the mutated object. Real handlers, real AdmissionReview
// JSON, one real cache.Store, real placement.

type chain struct {
	mutator  *ShootMutator
	binding  *ShootBindingValidator
	capacity *ShootCapacityValidator
}

func newChain(t *testing.T, store *cache.Store, auth Authorizer) *chain {
	signer := vSigner(t, newVClock())
	return &chain{
		mutator: &ShootMutator{
			Placer:        &seedreserve.ClusterPlacer{Local: store},
			Options:       placement.Options{Strategy: placement.MinimalDistance, NetworkMode: placement.Disjoint},
			SchedulerName: "default-scheduler",
			Signer:        signer,
			Log:           logr.Discard(),
		},
		binding:  &ShootBindingValidator{Landscape: store, Authorizer: auth, Signer: signer, Log: logr.Discard()},
		capacity: &ShootCapacityValidator{Store: store, Signer: signer, Log: logr.Discard()},
	}
}

// admitCreate runs one CREATE of object through the chain. It returns the
// seed the stored Shoot would have ("" when admitted without one) and
// whether the request was admitted.
func (c *chain) admitCreate(t testing.TB, uid, name, object string, user *authenticationv1.UserInfo) (seed string, admitted bool, why string) {
	base := vReview{uid: uid, name: name, object: object, user: user}
	resp := vServe(t, c.mutator, base.body(t))
	if !resp.Allowed {
		return "", false, "mutating: " + vMessage(resp)
	}
	if len(resp.Patch) > 0 {
		p, err := jsonpatch.DecodePatch(resp.Patch)
		require.NoError(t, err)
		patched, err := p.Apply([]byte(object))
		require.NoError(t, err)
		object = string(patched)
	}
	// The validating webhooks are called with a UID of their own.
	validating := vReview{uid: uid + "-v", name: name, object: object, user: user}
	if resp := vServe(t, c.binding, validating.body(t)); !resp.Allowed {
		return "", false, "binding: " + vMessage(resp)
	}
	if resp := vServe(t, c.capacity, validating.body(t)); !resp.Allowed {
		return "", false, "capacity: " + vMessage(resp)
	}
	var shoot api.Shoot
	require.NoError(t, json.Unmarshal([]byte(object), &shoot))
	return ptr.Deref(shoot.Spec.SeedName, ""), true, ""
}

// burstLimits lift the reservation limits above what one user's burst of
// concurrent CREATEs holds, for tests of overfill rather than of the limits
// (reservation_flood_test.go).
var burstLimits = cache.Limits{PerNamespace: 1000, PerUser: 1000, Total: 1000}

// burstStore is vStore with burstLimits, on a clock that stands still: no
// reservation ends while the burst is in flight, however slow the machine.
func burstStore(clock *clocktesting.FakeClock, seeds ...*api.Seed) *cache.Store {
	return floodStore(clock, burstLimits, nil, []string{vNamespace}, seeds...)
}

func namedShoot(name, seed string) string {
	return strings.Replace(vShoot(seed, nil), `"name": "crazy-botany",`, fmt.Sprintf(`"name": %q,`, name), 1)
}

// TestConcurrentCreatesNeverOverfill: 200 concurrent CREATEs against one
// seed with 50 free places (allocatable 60, 10 Shoots) through the mutating
// webhook and the validating webhooks: exactly 50 are placed there; the
// others are admitted unplaced (no seed fits), with a warning.
func TestConcurrentCreatesNeverOverfill(t *testing.T) {
	store := burstStore(newVClock(), vSeed("target", 60))
	vShootsOn(store, "target", 10)
	c := newChain(t, store, &fakeAuthorizer{}) // nobody holds binding permission

	const n = 200
	var (
		mu      sync.Mutex
		placed  = map[string]int{}
		refused []string
		wg      sync.WaitGroup
	)
	for i := range n {
		wg.Go(func() {
			name := fmt.Sprintf("shoot-%03d", i)
			seed, ok, why := c.admitCreate(t, fmt.Sprintf("uid-%03d", i), name, namedShoot(name, ""), nil)
			mu.Lock()
			defer mu.Unlock()
			if !ok {
				refused = append(refused, why)
				return
			}
			placed[seed]++
		})
	}
	wg.Wait()
	assert.Empty(t, refused, "nothing is refused: the mutating webhook only places where there is room")
	assert.Equal(t, map[string]int{"target": 50, "": 150}, placed)
	assert.Equal(t, int64(60), store.Usage("target"))

	// The Shoots arrive through the watch: their reservations end and the
	// usage stays exact.
	for i := range n {
		name := fmt.Sprintf("shoot-%03d", i)
		if seed, ok := store.Reservation(fmt.Sprintf("uid-%03d", i)); ok {
			sh := &api.Shoot{}
			sh.Namespace, sh.Name, sh.Spec.SeedName = vNamespace, name, &seed
			sh.Annotations = map[string]string{cache.AnnotationReservation: fmt.Sprintf("uid-%03d", i)}
			store.Apply(sh)
		}
	}
	assert.Equal(t, int64(60), store.Usage("target"))
}

// TestConcurrentManualBindingsNeverOverfill: 200 concurrent CREATEs naming
// the seed themselves (users with binding permission; the mutating webhook
// skips them): exactly 50 are admitted, the rest are refused for capacity.
func TestConcurrentManualBindingsNeverOverfill(t *testing.T) {
	store := burstStore(newVClock(), vSeed("target", 60))
	vShootsOn(store, "target", 10)
	c := newChain(t, store, &fakeAuthorizer{allowed: map[string]bool{vBinder: true}})

	var (
		mu       sync.Mutex
		admitted int
		full     int
		other    []string
		wg       sync.WaitGroup
	)
	for i := range 200 {
		wg.Go(func() {
			name := fmt.Sprintf("manual-%03d", i)
			seed, ok, why := c.admitCreate(t, fmt.Sprintf("uid-%03d", i), name, namedShoot(name, "target"), binderUser)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case ok && seed == "target":
				admitted++
			case !ok && strings.Contains(why, `capacity: seedwarden: cannot place Shoot`) && strings.Contains(why, "would exceed allocatable shoots 60"):
				full++
			default:
				other = append(other, fmt.Sprintf("%v %q %s", ok, seed, why))
			}
		})
	}
	wg.Wait()
	assert.Empty(t, other)
	assert.Equal(t, 50, admitted)
	assert.Equal(t, 150, full)
	assert.Equal(t, int64(60), store.Usage("target"))
}

// A user without binding permission cannot choose the seed however the
// request is dressed up, even when the mutating webhook is skipped.
func TestChainUserCannotChooseSeed(t *testing.T) {
	store := vStore(vSeed("aws-eu1", 10), vSeed("aws-eu2", 10))
	c := newChain(t, store, &fakeAuthorizer{})

	// A placement by the webhook, then the same token copied to another
	// Shoot, and to the same Shoot name with another seed.
	seed, ok, why := c.admitCreate(t, "uid-1", "first", namedShoot("first", ""), nil)
	require.True(t, ok, why)
	require.NotEmpty(t, seed)
	resp := vServe(t, c.mutator, vReview{uid: "uid-1b", name: "first", object: namedShoot("first", "")}.body(t))
	var ops []map[string]any
	require.NoError(t, json.Unmarshal(resp.Patch, &ops))
	token := ""
	for _, op := range ops {
		if v, ok := op["value"].(map[string]any); ok && v["seedwarden.io/placement"] != nil {
			token = v["seedwarden.io/placement"].(string)
		}
		if op["path"] == "/spec/seedName" {
			seed = op["value"].(string) // the seed the token is for
		}
	}
	require.NotEmpty(t, token)

	other := "aws-eu1"
	if seed == other {
		other = "aws-eu2"
	}
	for _, tc := range []struct {
		name, object string
	}{
		{"copied to another Shoot", strings.Replace(vShoot(seed, map[string]string{"seedwarden.io/placement": token}), `"name": "crazy-botany",`, `"name": "second",`, 1)},
		{"same Shoot, other seed", strings.Replace(vShoot(other, map[string]string{"seedwarden.io/placement": token}), `"name": "crazy-botany",`, `"name": "first",`, 1)},
		{"forged", vShoot(seed, map[string]string{"seedwarden.io/placement": "v1.4102444800.AAAA"})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Through the whole chain: the mutating webhook strips the token.
			_, ok, why := c.admitCreate(t, "uid-"+tc.name, "", tc.object, nil)
			assert.False(t, ok)
			assert.Contains(t, why, "binding: seedwarden: user")
			// The mutating webhook skipped (failurePolicy Ignore): the
			// validating webhook alone still refuses.
			resp := vServe(t, c.binding, vReview{name: "-", object: tc.object}.body(t))
			assert.False(t, resp.Allowed)
			assert.Contains(t, vMessage(resp), "annotation was not accepted")
		})
	}
}
