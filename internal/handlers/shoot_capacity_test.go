package handlers

import (
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"

	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/metrics"
	"github.com/seedwarden/seedwarden/internal/placementtoken"
)

const mutatingUID = "mutating-uid-1"

type capacityFixture struct {
	v      *ShootCapacityValidator
	store  *cache.Store
	signer *placementtoken.Signer
}

// newCapacityFixture: seed "small" (allocatable 2, one Shoot), "full"
// (allocatable 2, two Shoots), "unlimited" (no allocatable).
func newCapacityFixture(t *testing.T) *capacityFixture {
	clock := newVClock()
	signer := vSigner(t, clock)
	store := vStore(vSeed("small", 2), vSeed("full", 2), vSeed("unlimited", -1))
	vShootsOn(store, "small", 1)
	vShootsOn(store, "full", 2)
	return &capacityFixture{
		v: &ShootCapacityValidator{
			Store:  store,
			Signer: signer,
			UnrestrictedSubjects: Subjects{
				{Kind: SubjectUser, Name: "admin@example.com"},
				{Kind: SubjectGroup, Name: "garden:operators"},
				{Kind: SubjectServiceAccount, Namespace: "garden", Name: "*"},
				{Kind: SubjectUser, Name: "system:serviceaccount:ops-*:scheduler"},
			},
			Log: vLog(t),
		},
		store: store, signer: signer,
	}
}

func (f *capacityFixture) ownPlacement(seed string) map[string]string {
	return map[string]string{
		placementtoken.Annotation:   f.signer.Sign(placementtoken.Subject{Namespace: vNamespace, Name: vName, Seed: seed}),
		cache.AnnotationReservation: mutatingUID,
	}
}

func (f *capacityFixture) reservation(key string) string {
	seed, _ := f.store.Reservation(key)
	return seed
}

var manualKey = cache.ManualReservationKey(vNamespace, vName)

// shootClaim is the Claim of a place reserved under key for the reviews'
// Shoot (vNamespace/vName).
func shootClaim(key string) cache.Claim {
	return cache.Claim{Key: key, Namespace: vNamespace, Name: vName}
}

func TestShootCapacityValidator(t *testing.T) {
	binding := func(oldSeed, newSeed string) vReview {
		return vReview{operation: admissionv1.Update, subResource: "binding", object: vShoot(newSeed, nil), oldObject: vShoot(oldSeed, nil)}
	}
	as := func(r vReview, u *authenticationv1.UserInfo) vReview { r.user = u; return r }

	tests := []struct {
		name        string
		setup       func(f *capacityFixture)
		review      func(f *capacityFixture) vReview
		wantAllowed bool
		wantMessage string
		wantUsage   map[string]int64
		wantKeys    map[string]string // reservation key -> seed ("" = none)
	}{{
		name:        "no seed",
		review:      func(*capacityFixture) vReview { return vReview{object: vShoot("", nil)} },
		wantAllowed: true, wantUsage: map[string]int64{"small": 1},
	}, {
		name: "seed unchanged",
		review: func(*capacityFixture) vReview {
			return vReview{operation: admissionv1.Update, object: vShoot("full", nil), oldObject: vShoot("full", nil)}
		},
		wantAllowed: true, wantUsage: map[string]int64{"full": 2},
	}, {
		name:        "manual create with room reserves",
		review:      func(*capacityFixture) vReview { return vReview{object: vShoot("small", nil)} },
		wantAllowed: true, wantUsage: map[string]int64{"small": 2}, wantKeys: map[string]string{manualKey: "small"},
	}, {
		name:        "manual create on a full seed",
		review:      func(*capacityFixture) vReview { return vReview{object: vShoot("full", nil)} },
		wantMessage: `seedwarden: cannot place Shoot "garden-dev/crazy-botany": seed "full" is full: usage 2 (2 shoots + 0 reservations) + 1 would exceed allocatable shoots 2`,
		wantUsage:   map[string]int64{"full": 2}, wantKeys: map[string]string{manualKey: ""},
	}, {
		name: "manual create after another took the last place",
		setup: func(f *capacityFixture) {
			require.NoError(t, f.store.Reserve("small", cache.Claim{Key: "someone-else", Namespace: "garden-dev"}))
		},
		review: func(*capacityFixture) vReview {
			return vReview{object: vShoot("small", nil)}
		},
		wantMessage: `seed "small" is full: usage 2 (1 shoots + 1 reservations) + 1 would exceed allocatable shoots 2`,
		wantUsage:   map[string]int64{"small": 2},
	}, {
		name:        "binding to a full seed",
		review:      func(*capacityFixture) vReview { return binding("small", "full") },
		wantMessage: `seed "full" is full: usage 2 (2 shoots + 0 reservations) + 1 would exceed allocatable shoots 2`,
		wantUsage:   map[string]int64{"full": 2},
	}, {
		name:        "binding with room",
		review:      func(*capacityFixture) vReview { return binding("full", "small") },
		wantAllowed: true, wantUsage: map[string]int64{"small": 2, "full": 2}, wantKeys: map[string]string{manualKey: "small"},
	}, {
		name: "update setting the first seed",
		review: func(*capacityFixture) vReview {
			return vReview{operation: admissionv1.Update, object: vShoot("full", nil), oldObject: vShoot("", nil)}
		},
		wantMessage: `seed "full" is full`,
	}, {
		name: "retried manual placement keeps its place",
		setup: func(f *capacityFixture) {
			require.NoError(t, f.store.Reserve("small", shootClaim(manualKey)))
		},
		review:      func(*capacityFixture) vReview { return vReview{object: vShoot("small", nil)} },
		wantAllowed: true, wantUsage: map[string]int64{"small": 2},
	}, {
		name:        "seed without allocatable",
		review:      func(*capacityFixture) vReview { return vReview{object: vShoot("unlimited", nil)} },
		wantAllowed: true, wantUsage: map[string]int64{"unlimited": 1},
	}, {
		name:        "unknown seed",
		review:      func(*capacityFixture) vReview { return vReview{object: vShoot("nope", nil)} },
		wantMessage: `seedwarden: seed "nope" not found; its capacity cannot be checked`,
	}, {
		name:        "dry run with room reserves nothing",
		review:      func(*capacityFixture) vReview { return vReview{object: vShoot("small", nil), dryRun: true} },
		wantAllowed: true, wantUsage: map[string]int64{"small": 1}, wantKeys: map[string]string{manualKey: ""},
	}, {
		name:        "dry run on a full seed",
		review:      func(*capacityFixture) vReview { return vReview{object: vShoot("full", nil), dryRun: true} },
		wantMessage: `seed "full" is full: usage 2 (2 shoots + 0 reservations) + 1 would exceed allocatable shoots 2`,
	}, {
		name:        "dry-run binding to a full seed",
		review:      func(*capacityFixture) vReview { r := binding("", "full"); r.dryRun = true; return r },
		wantMessage: `seed "full" is full`,
	}, {
		name: "own placement holding its reservation",
		setup: func(f *capacityFixture) {
			require.NoError(t, f.store.Reserve("small", shootClaim(mutatingUID))) // by the mutating webhook
		},
		review:      func(f *capacityFixture) vReview { return vReview{object: vShoot("small", f.ownPlacement("small"))} },
		wantAllowed: true, wantUsage: map[string]int64{"small": 2}, wantKeys: map[string]string{mutatingUID: "small", manualKey: ""},
	}, {
		name: "own placement on a seed that filled up since gives the place back",
		setup: func(f *capacityFixture) {
			require.NoError(t, f.store.Reserve("small", shootClaim(mutatingUID)))
			// Created past the webhook.
			vShootsOnNamed(f.store, "garden-ops", "late-1", "small")
			vShootsOnNamed(f.store, "garden-ops", "late-2", "small")
		},
		review:      func(f *capacityFixture) vReview { return vReview{object: vShoot("small", f.ownPlacement("small"))} },
		wantMessage: `seedwarden: seed "small" is full: usage 4 (including the place reserved for this Shoot) exceeds allocatable shoots 2`,
		wantUsage:   map[string]int64{"small": 3}, wantKeys: map[string]string{mutatingUID: ""},
	}, {
		name:        "own placement from another replica reserves here under its key",
		review:      func(f *capacityFixture) vReview { return vReview{object: vShoot("small", f.ownPlacement("small"))} },
		wantAllowed: true, wantUsage: map[string]int64{"small": 2}, wantKeys: map[string]string{mutatingUID: "small", manualKey: ""},
	}, {
		name:        "own placement from another replica on a full seed",
		review:      func(f *capacityFixture) vReview { return vReview{object: vShoot("full", f.ownPlacement("full"))} },
		wantMessage: `seed "full" is full: usage 2 (2 shoots + 0 reservations) + 1 would exceed allocatable shoots 2`,
		wantKeys:    map[string]string{mutatingUID: ""},
	}, {
		name: "forged token cannot ride on another Shoot's reservation",
		setup: func(f *capacityFixture) {
			// Someone else's placement of a Shoot of this name: only the
			// token tells it apart.
			require.NoError(t, f.store.Reserve("small", shootClaim(mutatingUID)))
		},
		review: func(f *capacityFixture) vReview {
			return vReview{object: vShoot("small", map[string]string{placementtoken.Annotation: "forged", cache.AnnotationReservation: mutatingUID})}
		},
		wantMessage: `seed "small" is full: usage 2 (1 shoots + 1 reservations) + 1 would exceed allocatable shoots 2`,
	}, {
		name: "reservation annotation on a binding is not trusted",
		setup: func(f *capacityFixture) {
			require.NoError(t, f.store.Reserve("small", shootClaim(mutatingUID)))
		},
		review: func(f *capacityFixture) vReview {
			r := binding("", "small")
			r.object = vShoot("small", f.ownPlacement("small"))
			return r
		},
		wantMessage: `seed "small" is full`,
	}, {
		name: "unrestricted user",
		review: func(*capacityFixture) vReview {
			return as(vReview{object: vShoot("full", nil)}, &authenticationv1.UserInfo{Username: "admin@example.com"})
		},
		wantAllowed: true, wantUsage: map[string]int64{"full": 2},
	}, {
		name: "unrestricted group",
		review: func(*capacityFixture) vReview {
			return as(binding("", "full"), &authenticationv1.UserInfo{Username: "op", Groups: []string{"system:authenticated", "garden:operators"}})
		},
		wantAllowed: true,
	}, {
		name: "unrestricted service account",
		review: func(*capacityFixture) vReview {
			return as(binding("", "full"), &authenticationv1.UserInfo{Username: "system:serviceaccount:garden:gardener-scheduler"})
		},
		wantAllowed: true,
	}, {
		name: "unrestricted by wildcard user name",
		review: func(*capacityFixture) vReview {
			return as(binding("", "full"), &authenticationv1.UserInfo{Username: "system:serviceaccount:ops-eu:scheduler"})
		},
		wantAllowed: true,
	}, {
		name: "service account of another namespace is restricted",
		review: func(*capacityFixture) vReview {
			return as(binding("", "full"), &authenticationv1.UserInfo{Username: "system:serviceaccount:garden-dev:gardener-scheduler"})
		},
		wantMessage: `seed "full" is full`,
	}, {
		name: "delete",
		review: func(*capacityFixture) vReview {
			return vReview{operation: admissionv1.Delete, oldObject: vShoot("full", nil)}
		},
		wantAllowed: true,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newCapacityFixture(t)
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
			for seed, want := range tc.wantUsage {
				assert.Equal(t, want, f.store.Usage(seed), "usage of %s", seed)
			}
			for key, want := range tc.wantKeys {
				assert.Equal(t, want, f.reservation(key), "reservation %s", key)
			}
		})
	}
}

// A manual reservation lasts until the Shoot shows up on its seed.
func TestShootCapacityValidatorManualReservationEnds(t *testing.T) {
	f := newCapacityFixture(t)
	resp := vServe(t, f.v, vReview{object: vShoot("small", nil)}.body(t))
	require.True(t, resp.Allowed, vMessage(resp))
	resp = vServe(t, f.v, vReview{object: strings.Replace(vShoot("small", nil), vName, "second", 1), name: "second"}.body(t))
	require.False(t, resp.Allowed, "the first one holds the last place")

	// The first Shoot arrives through the watch: its reservation ends, it
	// counts as a Shoot, and the seed stays full.
	vShootsOnNamed(f.store, vNamespace, vName, "small")
	assert.Equal(t, "", f.reservation(manualKey))
	assert.Equal(t, int64(2), f.store.Usage("small"))
}

// Without a signer (no key), a reservation annotation counts when this
// replica holds that reservation on the seed.
func TestShootCapacityValidatorWithoutSigner(t *testing.T) {
	f := newCapacityFixture(t)
	f.v.Signer = nil
	require.NoError(t, f.store.Reserve("small", shootClaim(mutatingUID)))
	ann := map[string]string{cache.AnnotationReservation: mutatingUID}
	resp := vServe(t, f.v, vReview{object: vShoot("small", ann)}.body(t))
	assert.True(t, resp.Allowed, vMessage(resp))
	assert.Equal(t, int64(2), f.store.Usage("small"))

	// Not held here: a manual placement.
	resp = vServe(t, f.v, vReview{object: vShoot("full", ann)}.body(t))
	assert.False(t, resp.Allowed)
}

func TestShootCapacityValidatorMalformed(t *testing.T) {
	f := newCapacityFixture(t)
	for _, r := range []vReview{
		{operation: admissionv1.Update, subResource: "status", object: vShoot("a", nil), oldObject: vShoot("a", nil)},
		{kind: metaGVK("", "v1", "Secret"), resource: metaGVR("", "v1", "secrets"), object: "{}"},
		{object: "null"},
		{},
		{operation: admissionv1.Update, object: vShoot("small", nil)},
	} {
		resp := vServe(t, f.v, r.body(t))
		assert.False(t, resp.Allowed)
		assert.Equal(t, int32(http.StatusBadRequest), resp.Result.Code, vMessage(resp))
	}
	assert.Equal(t, int64(1), f.store.Usage("small"))

	f.v.Store = nil
	resp := vServe(t, f.v, vReview{object: vShoot("small", nil)}.body(t))
	assert.False(t, resp.Allowed)
	assert.Contains(t, vMessage(resp), "no store configured")
}

func TestShootCapacityValidatorMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	f := newCapacityFixture(t)
	h := Observed(WebhookCapacity, metrics.New(reg), f.v)
	vServe(t, h, vReview{object: vShoot("small", nil)}.body(t))
	vServe(t, h, vReview{object: vShoot("full", nil)}.body(t))
	assert.Equal(t, 1.0, vCounter(t, reg, metrics.ValidationsTotalName, map[string]string{"webhook": "capacity", "result": "allowed"}))
	assert.Equal(t, 1.0, vCounter(t, reg, metrics.ValidationsTotalName, map[string]string{"webhook": "capacity", "result": "denied"}))
}

// A user can write seedwarden.io/reservation: a CREATE whose annotation
// names the live key of another Shoot's placement must not ride on that
// place. Before keys were checked against the Shoot they were taken for,
// such a CREATE was admitted on the place held for the other Shoot and the
// seed took one Shoot too many.
func TestShootCapacityValidatorForgedReservationKey(t *testing.T) {
	const (
		full  = `seed "small" is full: usage 2 (1 shoots + 1 reservations) + 1 would exceed allocatable shoots 2`
		taken = `reservation key "mutating-uid-1" is held for another Shoot`
	)
	for _, tc := range []struct {
		name   string
		held   cache.Claim // the placement whose key the CREATE names
		signed bool        // the CREATE carries a token for its own name and seed
		// want: without a token the key is not used at all (a manual
		// placement, which finds the seed full); with one the Store
		// refuses the key.
		want string
	}{
		{"another Shoot of the namespace, no signer", cache.Claim{Key: mutatingUID, Namespace: vNamespace, Name: "victim"}, false, full},
		{"another Shoot of the namespace, own token", cache.Claim{Key: mutatingUID, Namespace: vNamespace, Name: "victim"}, true, taken},
		{"a Shoot of this name in another namespace", cache.Claim{Key: mutatingUID, Namespace: "garden-other", Name: vName}, true, taken},
		{"a generateName this name does not have", cache.Claim{Key: mutatingUID, Namespace: vNamespace, GenerateName: "victim-"}, true, taken},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newCapacityFixture(t)
			require.NoError(t, f.store.Reserve("small", tc.held)) // small's last place
			ann := map[string]string{cache.AnnotationReservation: mutatingUID}
			if tc.signed {
				ann = f.ownPlacement("small")
			} else {
				f.v.Signer = nil
			}
			resp := vServe(t, f.v, vReview{object: vShoot("small", ann)}.body(t))
			assert.False(t, resp.Allowed)
			assert.Contains(t, vMessage(resp), tc.want)
			assert.Equal(t, int64(2), f.store.Usage("small"))
			assert.Equal(t, "small", f.reservation(mutatingUID), "the other Shoot keeps its place")
		})
	}
}
