package handlers

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/metrics"
)

// fakeEvents records what a guard's Enforcer records.
type fakeEvents struct {
	mu     sync.Mutex
	events []string // "type reason kind namespace/name uid: note"
}

func (f *fakeEvents) Eventf(regarding, _ runtime.Object, eventtype, reason, _, note string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	m, err := meta.Accessor(regarding)
	if err != nil {
		panic(err)
	}
	f.events = append(f.events, fmt.Sprintf("%s %s %s %s/%s %s: %s", eventtype, reason,
		regarding.GetObjectKind().GroupVersionKind().Kind, m.GetNamespace(), m.GetName(), m.GetUID(), fmt.Sprintf(note, args...)))
}

func (f *fakeEvents) list() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.events...)
}

// enforced is an Enforcer of guard with action, its metrics and events.
type enforced struct {
	e      *Enforcer
	reg    *prometheus.Registry
	events *fakeEvents
}

func newEnforced(guard, action string) enforced {
	reg := prometheus.NewRegistry()
	ev := &fakeEvents{}
	return enforced{e: NewEnforcer(guard, action, metrics.New(reg), ev, logr.Discard()), reg: reg, events: ev}
}

// refusals is seedwarden_guard_refusals_total{guard, action}.
func (x enforced) refusals(guard, action string) float64 {
	mfs, err := x.reg.Gather()
	if err != nil {
		panic(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != metrics.GuardRefusalsTotalName {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["guard"] == guard && labels["action"] == action {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// checkAnswer holds a response to what action does with a refusal whose
// deny message contains want.
func checkAnswer(t *testing.T, action string, resp *admissionv1.AdmissionResponse, want string) {
	t.Helper()
	switch action {
	case EnforceDeny:
		require.False(t, resp.Allowed)
		assert.Equal(t, int32(http.StatusForbidden), resp.Result.Code)
		assert.Contains(t, vMessage(resp), want)
		assert.Empty(t, resp.Warnings)
	case EnforceWarn:
		require.True(t, resp.Allowed, vMessage(resp))
		require.Len(t, resp.Warnings, 1)
		assert.Contains(t, resp.Warnings[0], strings.TrimPrefix(want, "seedwarden: "))
		assert.Contains(t, resp.Warnings[0], "enforcement is warn; deny would refuse this request")
	case EnforceDryRun:
		require.True(t, resp.Allowed, vMessage(resp))
		assert.Empty(t, resp.Warnings, "dryrun admits silently")
	}
}

var enforcements = []string{EnforceDeny, EnforceWarn, EnforceDryRun}

// A placement the capacity check refuses takes no place under warn and
// dryrun, as under deny; one held for it already is given back. Only the
// answer differs, and every refusal is counted under its action.
func TestCapacityEnforcementTakesNoPlace(t *testing.T) {
	const clusterKey = vNamespace + "/" + vName
	tests := []struct {
		name        string
		setup       func(f *capacityFixture, c *fakeCluster)
		review      func(f *capacityFixture) vReview
		cluster     bool
		wantMessage string
		wantUsage   map[string]int64
		wantKeys    map[string]string // reservation key -> seed ("" = none)
		wantCalls   []string          // of the cluster reserver
	}{{
		name:        "manual create on a full seed",
		review:      func(*capacityFixture) vReview { return vReview{object: vShoot("full", nil)} },
		wantMessage: `seedwarden: cannot place Shoot "garden-dev/crazy-botany": seed "full" is full`,
		wantUsage:   map[string]int64{"full": 2}, wantKeys: map[string]string{manualKey: ""},
	}, {
		name: "binding to a full seed",
		review: func(*capacityFixture) vReview {
			return vReview{operation: admissionv1.Update, subResource: "binding", object: vShoot("full", nil), oldObject: vShoot("", nil)}
		},
		wantMessage: `seed "full" is full`,
		wantUsage:   map[string]int64{"full": 2}, wantKeys: map[string]string{manualKey: ""},
	}, {
		name: "own placement on a seed that filled up gives its place back",
		setup: func(f *capacityFixture, _ *fakeCluster) {
			require.NoError(t, f.store.Reserve("small", shootClaim(mutatingUID)))
			vShootsOnNamed(f.store, "garden-ops", "late-1", "small")
			vShootsOnNamed(f.store, "garden-ops", "late-2", "small")
		},
		review:      func(f *capacityFixture) vReview { return vReview{object: vShoot("small", f.ownPlacement("small"))} },
		wantMessage: `seed "small" is full: usage 4 (including the place reserved for this Shoot)`,
		wantUsage:   map[string]int64{"small": 3}, wantKeys: map[string]string{mutatingUID: ""},
	}, {
		name: "a reservation limit",
		setup: func(f *capacityFixture, _ *fakeCluster) {
			for i := range 1 {
				require.NoError(t, f.store.Reserve("small", cache.Claim{Key: fmt.Sprintf("other-%d", i), Namespace: vNamespace, Name: fmt.Sprintf("other-%d", i)}))
			}
			f.store.Apply(vSeed("small", 100))
		},
		review:      func(*capacityFixture) vReview { return vReview{object: vShoot("small", nil)} },
		wantMessage: `seedwarden: cannot place Shoot "garden-dev/crazy-botany" on seed "small"`,
		wantUsage:   map[string]int64{"small": 2}, wantKeys: map[string]string{manualKey: ""},
	}, {
		name:    "full across replicas",
		cluster: true,
		setup: func(_ *capacityFixture, c *fakeCluster) {
			c.full = map[string]bool{"small": true}
		},
		review:      func(*capacityFixture) vReview { return vReview{object: vShoot("small", nil)} },
		wantMessage: `seed "small" is full`,
		wantUsage:   map[string]int64{"small": 1}, wantKeys: map[string]string{manualKey: ""},
		wantCalls: []string{"reserve small " + clusterKey + " 2"},
	}, {
		name:    "own placement full across replicas gives its place back",
		cluster: true,
		setup: func(f *capacityFixture, c *fakeCluster) {
			require.NoError(t, f.store.Reserve("small", shootClaim(mutatingUID)))
			c.full = map[string]bool{"small": true}
		},
		review:      func(f *capacityFixture) vReview { return vReview{object: vShoot("small", f.ownPlacement("small"))} },
		wantMessage: `seed "small" is full`,
		wantUsage:   map[string]int64{"small": 1}, wantKeys: map[string]string{mutatingUID: ""},
		wantCalls: []string{"reserve small " + clusterKey + " 2"},
	}}
	for _, tc := range tests {
		for _, action := range enforcements {
			t.Run(tc.name+"/"+action, func(t *testing.T) {
				f := newCapacityFixture(t)
				f.limitStore(1)
				cl := &fakeCluster{}
				if tc.cluster {
					f.v.Cluster = cl
				}
				if tc.setup != nil {
					tc.setup(f, cl)
				}
				x := newEnforced(WebhookCapacity, action)
				f.v.Enforce = x.e

				resp := vServe(t, f.v, tc.review(f).body(t))
				checkAnswer(t, action, resp, tc.wantMessage)
				for seed, want := range tc.wantUsage {
					assert.Equal(t, want, f.store.Usage(seed), "usage of %s", seed)
				}
				for key, want := range tc.wantKeys {
					assert.Equal(t, want, f.reservation(key), "reservation %s", key)
				}
				assert.Equal(t, tc.wantCalls, cl.calls, "the cluster reserver was asked as under deny, and refused")
				assert.Equal(t, 1.0, x.refusals(WebhookCapacity, action))
				if action == EnforceWarn {
					require.Len(t, x.events.list(), 1)
					assert.True(t, strings.HasPrefix(x.events.list()[0], "Warning WouldBeDenied Shoot garden-dev/crazy-botany "), x.events.list()[0])
				} else {
					assert.Empty(t, x.events.list())
				}
			})
		}
	}
}

// limitStore replaces the fixture's Store by one whose reservation limit per
// namespace is n, with the same seeds and Shoots.
func (f *capacityFixture) limitStore(n int) {
	s := vStoreWith(cache.Options{Limits: cache.Limits{PerNamespace: n, PerUser: 1000, Total: 1000}},
		vSeed("small", 2), vSeed("full", 2), vSeed("unlimited", -1))
	vShootsOn(s, "small", 1)
	vShootsOn(s, "full", 2)
	f.store, f.v.Store = s, s
}

// Placements with room, and what the guard cannot decide, are answered as
// under deny whatever the enforcement: a stale cache, an unknown seed, the
// API server failing.
func TestCapacityEnforcementOnlySoftensVerdicts(t *testing.T) {
	for _, action := range enforcements {
		t.Run(action, func(t *testing.T) {
			f := newCapacityFixture(t)
			x := newEnforced(WebhookCapacity, action)
			f.v.Enforce = x.e

			resp := vServe(t, f.v, vReview{object: vShoot("small", nil)}.body(t))
			assert.True(t, resp.Allowed)
			assert.Empty(t, resp.Warnings)
			assert.Equal(t, "small", f.reservation(manualKey), "a placement with room reserves as under deny")

			resp = vServe(t, f.v, vReview{object: vShoot("nope", nil)}.body(t))
			assert.False(t, resp.Allowed)
			assert.Contains(t, vMessage(resp), `seed "nope" not found`)

			f.v.Cluster = &fakeCluster{err: errors.New("connection refused")}
			resp = vServe(t, f.v, vReview{uid: "other", object: vShoot("full", nil)}.body(t))
			assert.False(t, resp.Allowed)
			assert.Contains(t, vMessage(resp), "cannot check the capacity")
			f.v.Cluster = nil

			f.v.StalenessGuard = StalenessGuard{Freshness: fixedFreshness(time.Minute), MaxStaleness: time.Second}
			resp = vServe(t, f.v, vReview{object: vShoot("full", nil)}.body(t))
			assert.False(t, resp.Allowed)
			assert.Contains(t, vMessage(resp), "stale")

			for _, a := range enforcements {
				assert.Zero(t, x.refusals(WebhookCapacity, a), "nothing here was the guard's verdict")
			}
			assert.Empty(t, x.events.list())
		})
	}
}

// The binding rules' verdicts follow the enforcement; an authorizer that
// does not answer and a stale cache still deny.
func TestBindingEnforcement(t *testing.T) {
	for _, action := range enforcements {
		t.Run(action, func(t *testing.T) {
			f := newBindingFixture(t)
			x := newEnforced(WebhookBinding, action)
			f.v.Enforce = x.e

			// A user without update on shoots/binding chooses a seed.
			resp := vServe(t, f.v, vReview{object: vShoot("aws-eu1", nil)}.body(t))
			checkAnswer(t, action, resp, `seedwarden: user "jane.doe@example.com" may not set spec.seedName to "aws-eu1"`)
			// Unsetting the seed.
			resp = vServe(t, f.v, vReview{operation: admissionv1.Update, object: vShoot("", nil), oldObject: vShoot("aws-eu1", nil)}.body(t))
			checkAnswer(t, action, resp, `spec.seedName: unsetting the seed ("aws-eu1") is not allowed`)
			assert.Equal(t, 2.0, x.refusals(WebhookBinding, action))

			f.auth.err = errors.New("SubjectAccessReview: connection refused")
			resp = vServe(t, f.v, vReview{object: vShoot("aws-eu1", nil)}.body(t))
			assert.False(t, resp.Allowed)
			assert.Contains(t, vMessage(resp), "cannot verify binding permission")
			f.auth.err = nil

			f.v.StalenessGuard = StalenessGuard{Freshness: fixedFreshness(time.Minute), MaxStaleness: time.Second}
			resp = vServe(t, f.v, vReview{object: vShoot("aws-eu1", nil)}.body(t))
			assert.False(t, resp.Allowed)
			assert.Contains(t, vMessage(resp), "stale")
			assert.Equal(t, 2.0, x.refusals(WebhookBinding, action), "only verdicts count")
		})
	}
}

func TestNamespaceDeletionEnforcement(t *testing.T) {
	for _, action := range enforcements {
		t.Run(action, func(t *testing.T) {
			v := ndValidator(t, ndStore(map[string]int{"team-x": 1}))
			x := newEnforced(WebhookNamespaceDeletion, action)
			v.Enforce = x.e
			resp := ksServe(t, v, ndDelete("team-x"))
			checkAnswer(t, action, resp, `deletion of namespace "team-x" is not permitted: it still contains 1 Shoot(s)`)
			assert.Equal(t, 1.0, x.refusals(WebhookNamespaceDeletion, action))
			if action == EnforceWarn {
				assert.Equal(t, []string{`Warning WouldBeDenied Namespace /team-x : DELETE namespace admitted although namespace-deletion would deny it (enforcement warn): deletion of namespace "team-x" is not permitted: it still contains 1 Shoot(s)`},
					x.events.list())
			}

			v.Synced = func() bool { return false }
			resp = ksServe(t, v, ndDelete("team-x"))
			assert.False(t, resp.Allowed)
			assert.Equal(t, int32(http.StatusServiceUnavailable), resp.Result.Code, "an unsynced cache is no verdict")
		})
	}
}

func TestKubeconfigSecretEnforcement(t *testing.T) {
	body := ksReview{object: ksSecretJSON(map[string]string{"kubeconfig": ksKubeconfig("", "    tokenFile: /var/run/token\n")}, "")}.body()
	for _, action := range enforcements {
		t.Run(action, func(t *testing.T) {
			v := ksValidator(t)
			x := newEnforced(WebhookKubeconfigSecret, action)
			v.Enforce = x.e
			resp := ksServe(t, v, body)
			checkAnswer(t, action, resp, `uses field "tokenFile", which is not allowed`)
			assert.Equal(t, 1.0, x.refusals(WebhookKubeconfigSecret, action))

			resp = ksServe(t, v, ksReview{object: `{"kind": "ConfigMap"}`}.body())
			assert.False(t, resp.Allowed, "an unreadable request is no verdict")
		})
	}
}

// A limit's own enforcement overrides the guard's, and of the limits a
// write breaks the strictest decides.
func TestResourceSizeLimitEnforcement(t *testing.T) {
	shoots := ResourceRule{APIGroups: []string{"core.gardener.cloud"}, APIVersions: []string{"*"}, Resources: []string{"shoots"}}
	seeds := ResourceRule{APIGroups: []string{"core.gardener.cloud"}, APIVersions: []string{"*"}, Resources: []string{"seeds"}}
	big := vReview{object: sized(t, "Shoot", "obj", 2000)}.body(t)
	seedCreate := vReview{kind: gvkFor(gvrSeeds, "Seed"), resource: gvrSeeds, namespace: "-", object: sized(t, "Seed", "obj", 2000)}.body(t)
	tests := []struct {
		name, guard, limit, count string
		body                      string
		want                      string
	}{
		{name: "guard deny", guard: EnforceDeny, body: big, want: EnforceDeny},
		{name: "new limit in warn beside a guard that denies", guard: EnforceDeny, limit: EnforceWarn, body: big, want: EnforceWarn},
		{name: "limit in dryrun", guard: EnforceWarn, limit: EnforceDryRun, body: big, want: EnforceDryRun},
		{name: "limit in deny under a guard in warn", guard: EnforceWarn, limit: EnforceDeny, body: big, want: EnforceDeny},
		{name: "guard warn", guard: EnforceWarn, body: big, want: EnforceWarn},
		{name: "size in warn and count in dryrun: warn", guard: EnforceDeny, limit: EnforceWarn, count: EnforceDryRun, body: seedCreate, want: EnforceWarn},
		{name: "size in dryrun and count in deny: deny", guard: EnforceWarn, limit: EnforceDryRun, count: EnforceDeny, body: seedCreate, want: EnforceDeny},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x := newEnforced(WebhookResourceSize, tc.guard)
			v := &ResourceSizeValidator{
				Enforce: x.e,
				Limits: []SizeLimit{
					{ResourceRule: shoots, Size: "1Ki", Bytes: 1024, Enforcement: tc.limit},
					{ResourceRule: seeds, Size: "1Ki", Bytes: 1024, Enforcement: tc.limit},
				},
				Counts:  []CountLimit{{ResourceRule: seeds, Count: 0, Enforcement: tc.count}},
				Counter: fixedCounter{"seeds": 0},
				Log:     logr.Discard(),
			}
			resp := vServe(t, v, tc.body)
			checkAnswer(t, tc.want, resp, "exceeds the limit of 1Ki (1024 bytes)")
			assert.Equal(t, 1.0, x.refusals(WebhookResourceSize, tc.want))
		})
	}
}

// fixedCounter counts resources from a map.
type fixedCounter map[string]int

func (c fixedCounter) Count(resource string) (int, bool) { n, ok := c[resource]; return n, ok }

// Warn events are bounded per guard; every refusal is still counted and
// warned about. A dry-run request records no event.
func TestWarnEventsBounded(t *testing.T) {
	v := ndValidator(t, ndStore(map[string]int{"team-x": 1}))
	x := newEnforced(WebhookNamespaceDeletion, EnforceWarn)
	v.Enforce = x.e
	dry := strings.Replace(ndDelete("team-x"), `"dryRun": false`, `"dryRun": true`, 1)
	require.NotEqual(t, dry, ndDelete("team-x"))
	resp := ksServe(t, v, dry)
	assert.True(t, resp.Allowed)
	assert.Len(t, resp.Warnings, 1)
	assert.Empty(t, x.events.list(), "a dry run records nothing")

	const n = 3 * guardEventBurst
	for range n {
		resp := ksServe(t, v, ndDelete("team-x"))
		require.True(t, resp.Allowed)
		require.Len(t, resp.Warnings, 1)
	}
	assert.Equal(t, float64(n+1), x.refusals(WebhookNamespaceDeletion, EnforceWarn))
	assert.Len(t, x.events.list(), guardEventBurst, "a burst, then one every %s", guardEventEvery)
}

// A nil Enforcer denies, as every guard did before enforcement existed.
func TestNilEnforcerDenies(t *testing.T) {
	var e *Enforcer
	assert.Equal(t, EnforceDeny, e.Action())
	resp := e.refuse(admission.Request{AdmissionRequest: vReview{}.request()}, nil, "seedwarden: no")
	assert.False(t, resp.Allowed)
	assert.Equal(t, "seedwarden: no", resp.Result.Message)
}

func TestTruncateNote(t *testing.T) {
	assert.Equal(t, "short", truncateNote("short"))
	long := truncateNote(strings.Repeat("ä", maxEventNote))
	assert.LessOrEqual(t, len(long), maxEventNote)
	assert.True(t, strings.HasSuffix(long, "…"))
	assert.True(t, strings.HasPrefix(long, "ää"))
}
