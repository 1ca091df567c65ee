package handlers

import (
	"encoding/json"
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

// seedChecks are a binding and a capacity check over one landscape, as
// cmd/webhook builds them: "room" (allocatable 2, one Shoot) and "full"
// (allocatable 2, two Shoots), both taking the reviews' Shoot.
type seedChecks struct {
	binding  *ShootBindingValidator
	capacity *ShootCapacityValidator
	store    *cache.Store
	signer   *placementtoken.Signer
}

func newSeedChecks(t *testing.T) *seedChecks {
	signer := vSigner(t, newVClock())
	store := vStore(vSeed("room", 2), vSeed("full", 2))
	vShootsOn(store, "room", 1)
	vShootsOn(store, "full", 2)
	return &seedChecks{
		binding: &ShootBindingValidator{
			Landscape: store, Signer: signer, Log: vLog(t),
			Authorizer: &fakeAuthorizer{allowed: map[string]bool{vBinder: true}, reason: "RBAC: no rule"},
		},
		capacity: &ShootCapacityValidator{Store: store, Signer: signer, Log: vLog(t)},
		store:    store, signer: signer,
	}
}

func (c *seedChecks) own(seed string) map[string]string {
	return map[string]string{
		placementtoken.Annotation:   c.signer.Sign(placementtoken.Subject{Namespace: vNamespace, Name: vName, Seed: seed}),
		cache.AnnotationReservation: mutatingUID,
	}
}

// The one registration decides what the two registrations decide apart: a
// request is admitted exactly when both admit it, a refusal says what the
// refusing check says (binding's first), and a place is reserved exactly
// when capacity reserves one apart, except for a request the binding check
// refuses, which reserves nothing.
func TestShootSeedValidatorDecidesAsBothApart(t *testing.T) {
	binding := func(seed string, u *authenticationv1.UserInfo) vReview {
		return vReview{operation: admissionv1.Update, subResource: "binding", object: vShoot(seed, nil), oldObject: vShoot("", nil), user: u}
	}
	for _, tc := range []struct {
		name   string
		review func(c *seedChecks) vReview
	}{
		{"own placement with room", func(c *seedChecks) vReview { return vReview{object: vShoot("room", c.own("room"))} }},
		{"own placement on a full seed", func(c *seedChecks) vReview { return vReview{object: vShoot("full", c.own("full"))} }},
		{"CREATE without a seed", func(*seedChecks) vReview { return vReview{object: vShoot("", nil)} }},
		{"CREATE naming a seed, no permission", func(*seedChecks) vReview { return vReview{object: vShoot("room", nil)} }},
		{"CREATE naming a seed with room, binder", func(*seedChecks) vReview {
			return vReview{object: vShoot("room", nil), user: binderUser}
		}},
		{"binding to a seed with room", func(*seedChecks) vReview { return binding("room", binderUser) }},
		{"binding to a full seed", func(*seedChecks) vReview { return binding("full", binderUser) }},
		{"binding, no permission", func(*seedChecks) vReview { return binding("room", nil) }},
		{"binding to no seed", func(*seedChecks) vReview { return binding("", binderUser) }},
		{"binding to a seed that does not exist", func(*seedChecks) vReview { return binding("gone", binderUser) }},
		{"dry-run binding to a seed with room", func(*seedChecks) vReview {
			r := binding("room", binderUser)
			r.dryRun = true
			return r
		}},
		{"UPDATE keeping the seed", func(*seedChecks) vReview {
			return vReview{operation: admissionv1.Update, object: vShoot("room", nil), oldObject: vShoot("room", nil)}
		}},
		{"UPDATE unsetting the seed", func(*seedChecks) vReview {
			return vReview{operation: admissionv1.Update, object: vShoot("", nil), oldObject: vShoot("room", nil)}
		}},
		{"DELETE", func(*seedChecks) vReview {
			return vReview{operation: admissionv1.Delete, oldObject: vShoot("room", nil)}
		}},
		{"no object", func(*seedChecks) vReview { return vReview{} }},
		{"not a Shoot", func(*seedChecks) vReview {
			return vReview{kind: metaGVK("", "v1", "ConfigMap"), resource: metaGVR("", "v1", "configmaps"), object: `{}`}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			apart, together := newSeedChecks(t), newSeedChecks(t)
			b := vServe(t, apart.binding, tc.review(apart).body(t))
			c := vServe(t, apart.capacity, tc.review(apart).body(t))
			got := vServe(t, &ShootSeedValidator{Binding: together.binding, Capacity: together.capacity}, tc.review(together).body(t))

			require.Equal(t, b.Allowed && c.Allowed, got.Allowed, "binding: %s; capacity: %s; together: %s", vMessage(b), vMessage(c), vMessage(got))
			switch {
			case !b.Allowed:
				assert.Equal(t, b.Result, got.Result, "the binding check's refusal")
			default:
				assert.Equal(t, c.Result, got.Result, "the capacity check's answer")
			}
			wantSeed, wantHeld := apart.store.Reservation(manualKey)
			if !b.Allowed {
				wantSeed, wantHeld = "", false
			}
			gotSeed, gotHeld := together.store.Reservation(manualKey)
			assert.Equal(t, wantHeld, gotHeld, "a place held")
			assert.Equal(t, wantSeed, gotSeed)
		})
	}
}

// A binding the binding check only warns about (enforcement warn) goes on
// to the capacity check; the answer carries both checks' warnings, and a
// full seed still refuses it.
func TestShootSeedValidatorKeepsWarnings(t *testing.T) {
	checks := newSeedChecks(t)
	checks.binding.Enforce = NewEnforcer(WebhookBinding, EnforceWarn, nil, nil, vLog(t))
	checks.capacity.Enforce = NewEnforcer(WebhookCapacity, EnforceWarn, nil, nil, vLog(t))
	v := &ShootSeedValidator{Binding: checks.binding, Capacity: checks.capacity}
	review := vReview{operation: admissionv1.Update, subResource: "binding", object: vShoot("full", nil), oldObject: vShoot("", nil)}

	resp := vServe(t, v, review.body(t))
	assert.True(t, resp.Allowed, vMessage(resp))
	require.Len(t, resp.Warnings, 2, "%q", resp.Warnings)
	assert.Contains(t, resp.Warnings[0], "binding enforcement is warn")
	assert.Contains(t, resp.Warnings[1], "capacity enforcement is warn")

	checks.capacity.Enforce = nil // deny
	review.uid = "another"
	resp = vServe(t, v, review.body(t))
	assert.False(t, resp.Allowed)
	assert.Contains(t, vMessage(resp), `seed "full" is full`)
	require.Len(t, resp.Warnings, 1, "%q", resp.Warnings)
	assert.Contains(t, resp.Warnings[0], "binding enforcement is warn")
}

// Each check's answers are counted under its own name, as when served
// apart; one the binding check refuses was not judged by capacity. With one
// check disabled the other alone decides and is counted.
func TestShootSeedValidatorMetrics(t *testing.T) {
	count := func(reg *prometheus.Registry, webhook, result string) float64 {
		return vCounter(t, reg, metrics.ValidationsTotalName, map[string]string{"webhook": webhook, "result": result})
	}
	reg := prometheus.NewRegistry()
	checks := newSeedChecks(t)
	v := &ShootSeedValidator{Binding: checks.binding, Capacity: checks.capacity, Metrics: metrics.New(reg)}
	vServe(t, v, vReview{uid: "1", object: vShoot("room", checks.own("room"))}.body(t))
	vServe(t, v, vReview{uid: "2", object: vShoot("full", nil)}.body(t))
	vServe(t, v, vReview{uid: "3", object: vShoot("full", nil), user: binderUser}.body(t))
	vServe(t, v, vReview{uid: "4"}.body(t))
	assert.Equal(t, 2.0, count(reg, WebhookBinding, metrics.ValidationAllowed))
	assert.Equal(t, 1.0, count(reg, WebhookBinding, metrics.ValidationDenied))
	assert.Equal(t, 1.0, count(reg, WebhookBinding, metrics.ValidationError))
	assert.Equal(t, 1.0, count(reg, WebhookCapacity, metrics.ValidationAllowed))
	assert.Equal(t, 1.0, count(reg, WebhookCapacity, metrics.ValidationDenied))
	assert.Equal(t, 1.0, count(reg, WebhookCapacity, metrics.ValidationError))

	for _, tc := range []struct {
		name     string
		v        func(c *seedChecks, m *metrics.Recorder) *ShootSeedValidator
		counted  string
		allowed  bool
		message  string
		review   vReview
		reserved bool
	}{
		{"binding alone", func(c *seedChecks, m *metrics.Recorder) *ShootSeedValidator {
			return &ShootSeedValidator{Binding: c.binding, Metrics: m}
		}, WebhookBinding, true, "", vReview{object: vShoot("full", nil), user: binderUser}, false},
		{"capacity alone", func(c *seedChecks, m *metrics.Recorder) *ShootSeedValidator {
			return &ShootSeedValidator{Capacity: c.capacity, Metrics: m}
		}, WebhookCapacity, false, `seed "full" is full`, vReview{object: vShoot("full", nil)}, false},
		{"capacity alone, room", func(c *seedChecks, m *metrics.Recorder) *ShootSeedValidator {
			return &ShootSeedValidator{Capacity: c.capacity, Metrics: m}
		}, WebhookCapacity, true, "", vReview{object: vShoot("room", nil)}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			checks := newSeedChecks(t)
			resp := vServe(t, tc.v(checks, metrics.New(reg)), tc.review.body(t))
			assert.Equal(t, tc.allowed, resp.Allowed, vMessage(resp))
			assert.Contains(t, vMessage(resp), tc.message)
			_, held := checks.store.Reservation(manualKey)
			assert.Equal(t, tc.reserved, held)
			result := metrics.ValidationAllowed
			if !tc.allowed {
				result = metrics.ValidationDenied
			}
			assert.Equal(t, 1.0, count(reg, tc.counted, result))
			other := map[string]string{WebhookBinding: WebhookCapacity, WebhookCapacity: WebhookBinding}[tc.counted]
			assert.Zero(t, count(reg, other, metrics.ValidationAllowed)+count(reg, other, metrics.ValidationDenied))
		})
	}
}

// FuzzShootSeedValidator: arbitrary object and old object bytes. The one
// registration never panics, always answers, and admits exactly what the
// two checks apart both admit.
func FuzzShootSeedValidator(f *testing.F) {
	f.Add([]byte(`{"kind":"Shoot","metadata":{"name":"a"},"spec":{"seedName":"full"}}`), []byte(`{"spec":{}}`), uint8(0))
	f.Add([]byte(`{"spec":{"seedName":"room"}}`), []byte(`{"spec":{}}`), uint8(5))
	f.Add([]byte(`{"spec":{"seedName":""}}`), []byte(`{"spec":{"seedName":"room"}}`), uint8(1))
	f.Add([]byte(`null`), []byte(`{`), uint8(2))
	ops := []admissionv1.Operation{admissionv1.Create, admissionv1.Update, admissionv1.Delete}

	f.Fuzz(func(t *testing.T, object, oldObject []byte, sel uint8) {
		if !json.Valid(object) || !json.Valid(oldObject) {
			return // the review would not decode: controller-runtime answers for both alike
		}
		r := vReview{operation: ops[int(sel)%len(ops)], object: string(object), oldObject: string(oldObject)}
		if sel&4 != 0 {
			r.subResource = "binding"
		}
		if sel&8 != 0 {
			r.user = binderUser
		}
		apart, together := newSeedChecks(t), newSeedChecks(t)
		b, c := vServe(t, apart.binding, r.body(t)), vServe(t, apart.capacity, r.body(t))
		got := vServe(t, &ShootSeedValidator{Binding: together.binding, Capacity: together.capacity}, r.body(t))
		if got.Allowed != (b.Allowed && c.Allowed) {
			t.Fatalf("together %v (%s), apart binding %v (%s), capacity %v (%s)",
				got.Allowed, vMessage(got), b.Allowed, vMessage(b), c.Allowed, vMessage(c))
		}
		if !got.Allowed && (got.Result == nil || got.Result.Message == "" || got.Result.Code < 400) {
			t.Fatalf("rejection without code and message: %+v", got.Result)
		}
	})
}
