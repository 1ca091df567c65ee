package handlers

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/authz"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/metrics"
	"github.com/seedwarden/seedwarden/internal/placementtoken"
)

const vBinder = "binder@example.com"

var binderUser = &authenticationv1.UserInfo{Username: vBinder, UID: "b1", Groups: []string{"system:authenticated"}}

// bindingLandscape: seeds that take shootJSON's Shoot (aws-eu1, aws-eu2,
// no-backup, other-domain as targets), and one per seed rule it breaks.
func bindingLandscape() []*api.Seed {
	return []*api.Seed{
		vSeed("aws-eu1", 10),
		vSeed("aws-eu2", 10),
		vSeed("deleting", 10, func(s *api.Seed) { s.DeletionTimestamp = &metav1.Time{Time: time.Unix(1e9, 0)} }),
		vSeed("tainted", 10, func(s *api.Seed) {
			v := "infra"
			s.Spec.Taints = append(s.Spec.Taints, api.SeedTaint{Key: "dedicated", Value: &v})
		}),
		vSeed("gcp-eu1", 10, func(s *api.Seed) { s.Spec.Provider.Type = "gcp" }),
		vSeed("two-zones", 10, func(s *api.Seed) { s.Spec.Provider.Zones = s.Spec.Provider.Zones[:2] }),
		vSeed("no-access", 10, func(s *api.Seed) { s.Spec.AccessRestrictions = nil }),
		vSeed("no-backup", 10, func(s *api.Seed) { s.Spec.Backup = nil }),
		vSeed("other-domain", 10, func(s *api.Seed) { s.Spec.DNS.Internal.Domain = "internal.other.example.com" }),
		vSeed("not-ready", 10, func(s *api.Seed) { s.Status.Conditions = nil }),
		vSeed("labelled", 10, func(s *api.Seed) { s.Labels = map[string]string{"env": "prod"} }),
		vSeed("overlapping", 10, func(s *api.Seed) { s.Spec.Networks.Pods = "10.250.0.0/16" }),
		vSeed("other-defaults", 10, func(s *api.Seed) { s.Spec.DNS.Defaults = []api.SeedDNSProviderConfig{{Domain: "other.example.com"}} }),
	}
}

type bindingFixture struct {
	v      *ShootBindingValidator
	auth   *fakeAuthorizer
	clock  *clocktesting.FakeClock
	signer *placementtoken.Signer
}

func newBindingFixture(t *testing.T) *bindingFixture {
	clock := newVClock()
	signer := vSigner(t, clock)
	auth := &fakeAuthorizer{allowed: map[string]bool{vBinder: true}, reason: "RBAC: no rule"}
	return &bindingFixture{
		v: &ShootBindingValidator{
			Landscape:  vStore(bindingLandscape()...),
			Authorizer: auth,
			Signer:     signer,
			Log:        vLog(t),
		},
		auth: auth, clock: clock, signer: signer,
	}
}

// token signs a placement for the default Shoot on seed, as the mutating
// webhook does.
func (f *bindingFixture) token(ns, name, generateName, seed string) string {
	return f.signer.Sign(placementtoken.Subject{Namespace: ns, Name: name, GenerateName: generateName, Seed: seed})
}

func placed(token string) map[string]string {
	return map[string]string{placementtoken.Annotation: token, cache.AnnotationReservation: "mutating-uid"}
}

// selfHosted is vShoot whose worker pool runs the control plane.
func selfHosted(seed string, annotations map[string]string) string {
	return strings.Replace(vShoot(seed, annotations), `"name": "worker-k3x9q",`, `"name": "worker-k3x9q", "controlPlane": {},`, 1)
}

// bindingCase is a request to the binding webhook and its expected answer.
type bindingCase struct {
	name        string
	review      vReview
	advance     time.Duration // of the clock before validating
	authErr     error
	wantAllowed bool
	wantMessage []string // substrings
	wantAuth    int32    // authorizer calls
	// bindThroughShoots: Shoots from a CRD (no binding subresource).
	bindThroughShoots bool
	providerTypes     []string // of the CloudProfile's seedSelector
}

func reviewCreate(seed string, ann map[string]string) vReview {
	return vReview{object: vShoot(seed, ann)}
}

func reviewUpdate(oldSeed, newSeed string, ann map[string]string) vReview {
	return vReview{operation: admissionv1.Update, object: vShoot(newSeed, ann), oldObject: vShoot(oldSeed, nil)}
}

func reviewBinding(oldSeed, newSeed string) vReview {
	return vReview{operation: admissionv1.Update, subResource: "binding", object: vShoot(newSeed, nil), oldObject: vShoot(oldSeed, nil)}
}

func asUser(r vReview, u *authenticationv1.UserInfo) vReview { r.user = u; return r }

// runBindingCases serves each case to its own fixture.
func runBindingCases(t *testing.T, tests []bindingCase) {
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newBindingFixture(t)
			f.v.BindThroughShoots = tc.bindThroughShoots
			if tc.providerTypes != nil {
				f.v.Landscape.(*cache.Store).Apply(&api.CloudProfile{
					TypeMeta:   metav1.TypeMeta{APIVersion: "core.gardener.cloud/v1beta1", Kind: "CloudProfile"},
					ObjectMeta: metav1.ObjectMeta{Name: "aws"},
					Spec:       api.CloudProfileSpec{Type: "aws", SeedSelector: &api.SeedSelector{ProviderTypes: tc.providerTypes}},
				})
			}
			f.auth.err = tc.authErr
			f.clock.Step(tc.advance)
			resp := vServe(t, f.v, tc.review.body(t))
			assert.Equal(t, testUID, string(resp.UID))
			assert.Equal(t, tc.wantAllowed, resp.Allowed, vMessage(resp))
			for _, m := range tc.wantMessage {
				assert.Contains(t, vMessage(resp), m)
			}
			if !resp.Allowed {
				assert.Equal(t, int32(http.StatusForbidden), resp.Result.Code, "a denial, so the user sees the message")
			}
			assert.Empty(t, resp.Patch)
			assert.Equal(t, tc.wantAuth, f.auth.calls.Load(), "authorizer calls")
		})
	}
}

func TestShootBindingValidator(t *testing.T) {
	f0 := newBindingFixture(t) // only for signing tokens; every case gets its own fixture with the same key and clock
	own := f0.token(vNamespace, vName, "", "aws-eu1")
	otherShoot := f0.token(vNamespace, "other-shoot", "", "aws-eu1")
	otherSeed := f0.token(vNamespace, vName, "", "aws-eu2")
	otherNamespace := f0.token("garden-other", vName, "", "aws-eu1")
	ownOnDeleting := f0.token(vNamespace, vName, "", "deleting")
	ownOnTainted := f0.token(vNamespace, vName, "", "tainted")
	dryRunOwn := f0.signer.Sign(placementtoken.Subject{Namespace: vNamespace, Name: vName, Seed: "aws-eu1", DryRun: true})
	dryRun := func(r vReview) vReview { r.dryRun = true; return r }
	forgedMAC := "v1." + strconv.FormatInt(f0.clock.Now().Add(time.Minute).Unix(), 10) + "." +
		base64.RawURLEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))

	create, update, binding, as := reviewCreate, reviewUpdate, reviewBinding, asUser

	tests := []bindingCase{
		// CREATE
		{name: "create without seed", review: create("", nil), wantAllowed: true, wantMessage: []string{"unchanged"}},
		{name: "create with seed, no binding permission", review: create("aws-eu1", nil), wantAuth: 1,
			wantMessage: []string{`seedwarden: user "jane.doe@example.com" may not set spec.seedName to "aws-eu1": that needs permission to update shoots/binding (core.gardener.cloud) in namespace "garden-dev" (RBAC: no rule)`}},
		{name: "create with seed, binding permission", review: as(create("aws-eu1", nil), binderUser), wantAuth: 1, wantAllowed: true},
		{name: "create with seed, permission, seed unusable", review: as(create("deleting", nil), binderUser), wantAuth: 1,
			wantMessage: []string{`seedwarden: Shoot "garden-dev/crazy-botany" cannot be placed on seed "deleting": seed "deleting" is being deleted`}},
		{name: "create on a not-ready seed chosen with permission", review: as(create("not-ready", nil), binderUser), wantAuth: 1, wantAllowed: true},

		// Placement tokens
		{name: "own placement", review: create("aws-eu1", placed(own)), wantAllowed: true, wantMessage: []string{`placed on seed "aws-eu1" by seedwarden`}},
		// A token minted by a dry run, and a token
		// carried onto a seed the (changed) spec does not suit.
		{name: "dry-run token on a real CREATE", review: create("aws-eu1", placed(dryRunOwn)), wantAuth: 1,
			wantMessage: []string{"may not set spec.seedName", "placement token was not issued for this shoot and seed"}},
		{name: "dry-run token on a dry-run CREATE", review: dryRun(create("aws-eu1", placed(dryRunOwn))), wantAllowed: true},
		{name: "real token on a dry-run CREATE", review: dryRun(create("aws-eu1", placed(own))), wantAuth: 1,
			wantMessage: []string{"may not set spec.seedName"}},
		{name: "own token on a seed the spec does not suit", review: create("tainted", placed(ownOnTainted)),
			wantMessage: []string{`cannot be placed on seed "tainted"`, "dedicated"}},
		// The token needs no permission, but the seed's rules still hold
		// too: a seed deleted since placing takes nothing.
		{name: "own placement on a seed deleting since is refused", review: create("deleting", placed(ownOnDeleting)),
			wantMessage: []string{`cannot be placed on seed "deleting"`, "is being deleted"}},
		{name: "own placement just before expiry", review: create("aws-eu1", placed(own)), advance: 2 * time.Minute, wantAllowed: true},
		{name: "forged token", review: create("aws-eu1", placed("I-promise-seedwarden-chose-this")), wantAuth: 1,
			wantMessage: []string{"may not set spec.seedName", "the seedwarden.io/placement annotation was not accepted: placement token is malformed"}},
		{name: "forged well-formed token", review: create("aws-eu1", placed(forgedMAC)), wantAuth: 1,
			wantMessage: []string{"not accepted: placement token was not issued for this shoot and seed"}},
		{name: "token replayed from another Shoot", review: create("aws-eu1", placed(otherShoot)), wantAuth: 1,
			wantMessage: []string{"not accepted: placement token was not issued for this shoot and seed"}},
		{name: "token for another seed", review: create("aws-eu1", placed(otherSeed)), wantAuth: 1,
			wantMessage: []string{"not accepted: placement token was not issued for this shoot and seed"}},
		{name: "token from another namespace", review: create("aws-eu1", placed(otherNamespace)), wantAuth: 1,
			wantMessage: []string{"not accepted: placement token was not issued for this shoot and seed"}},
		{name: "expired token", review: create("aws-eu1", placed(own)), advance: 2*time.Minute + 2*time.Second, wantAuth: 1,
			wantMessage: []string{"not accepted: placement token has expired"}},
		{name: "invalid token with binding permission still needs a fitting seed", review: as(create("aws-eu1", placed("junk")), binderUser), wantAuth: 1, wantAllowed: true},
		{name: "token on update is ignored", review: update("", "aws-eu1", placed(own)), wantAuth: 1, bindThroughShoots: true,
			wantMessage: []string{`may not set spec.seedName to "aws-eu1"`}},
		{name: "token on binding is ignored", review: func() vReview {
			r := binding("", "aws-eu1")
			r.object = vShoot("aws-eu1", placed(own))
			return r
		}(), wantAuth: 1, wantMessage: []string{`may not set spec.seedName to "aws-eu1"`}},

		// UPDATE through the main resource
		{name: "update without change", review: update("aws-eu1", "aws-eu1", nil), wantAllowed: true},
		{name: "update without seed", review: update("", "", nil), wantAllowed: true},
		{name: "update changes seed", review: as(update("aws-eu1", "aws-eu2", nil), binderUser),
			wantMessage: []string{`seedwarden: spec.seedName: changing the seed from "aws-eu1" to "aws-eu2" through the shoots resource is not allowed; use the shoots/binding subresource`}},
		{name: "update unsets seed", review: as(update("aws-eu1", "", nil), binderUser),
			wantMessage: []string{`seedwarden: spec.seedName: unsetting the seed ("aws-eu1") is not allowed`}},

		// Binding subresource
		{name: "binding to same seed", review: as(binding("aws-eu1", "aws-eu1"), binderUser),
			wantMessage: []string{`seedwarden: the binding does not change the seed (spec.seedName is "aws-eu1" already)`}},
		{name: "binding to no seed", review: as(binding("", ""), binderUser), wantMessage: []string{"the binding sets no seed"}},
		{name: "binding unsets seed", review: as(binding("aws-eu1", ""), binderUser), wantMessage: []string{`unsetting the seed ("aws-eu1") is not allowed`}},
		{name: "binding without permission", review: binding("", "aws-eu1"), wantAuth: 1,
			wantMessage: []string{`user "jane.doe@example.com" may not set spec.seedName to "aws-eu1"`}},
		{name: "binding first seed", review: as(binding("", "aws-eu1"), binderUser), wantAuth: 1, wantAllowed: true},
		{name: "binding first seed without backup", review: as(binding("", "no-backup"), binderUser), wantAuth: 1, wantAllowed: true},
		{name: "rescheduling", review: as(binding("aws-eu1", "aws-eu2"), binderUser), wantAuth: 1, wantAllowed: true},
		{name: "binding to deleting seed", review: as(binding("", "deleting"), binderUser), wantAuth: 1,
			wantMessage: []string{`seed "deleting" is being deleted (metadata.deletionTimestamp is set)`}},
		{name: "binding to tainted seed", review: as(binding("", "tainted"), binderUser), wantAuth: 1,
			wantMessage: []string{`spec.tolerations ["seed.gardener.cloud/protected", "team=platform"] do not tolerate the taints ["seed.gardener.cloud/protected", "dedicated=infra"] of seed "tainted"`}},
		{name: "binding to two-zone seed", review: as(binding("", "two-zones"), binderUser), wantAuth: 1,
			wantMessage: []string{`spec.controlPlane.highAvailability.failureTolerance.type "zone" needs a seed with at least 3 zones, seed "two-zones" has 2 ["eu-west-1a", "eu-west-1b"]`}},
		{name: "binding to seed without access restriction", review: as(binding("", "no-access"), binderUser), wantAuth: 1,
			wantMessage: []string{`spec.accessRestrictions: seed "no-access" does not support ["eu-access-only"] (it supports [])`}},
		{name: "binding to unknown seed", review: as(binding("", "nope"), binderUser), wantAuth: 1,
			wantMessage: []string{`cannot be placed on seed "nope": seed "nope" not found`}},
		{name: "rescheduling to seed without backup", review: as(binding("aws-eu1", "no-backup"), binderUser), wantAuth: 1,
			wantMessage: []string{`rescheduling from seed "aws-eu1" to seed "no-backup" needs backup on both seeds, seed "no-backup" has no spec.backup`}},
		{name: "rescheduling from seed without backup", review: as(binding("no-backup", "aws-eu1"), binderUser), wantAuth: 1,
			wantMessage: []string{`rescheduling from seed "no-backup" to seed "aws-eu1" needs backup on both seeds, seed "no-backup" has no spec.backup`}},
		{name: "rescheduling to another internal domain", review: as(binding("aws-eu1", "other-domain"), binderUser), wantAuth: 1,
			wantMessage: []string{`rescheduling needs the same spec.dns.internal.domain on both seeds: seed "aws-eu1" has "internal.example.com", seed "other-domain" has "internal.other.example.com"`}},
		{name: "rescheduling from unknown seed", review: as(binding("gone", "aws-eu1"), binderUser), wantAuth: 1,
			wantMessage: []string{`the current seed "gone" is not found`}},
		{name: "several violations in one message", review: as(binding("no-backup", "two-zones"), binderUser), wantAuth: 1,
			wantMessage: []string{`cannot be placed on seed "two-zones": spec.controlPlane.highAvailability.failureTolerance.type "zone" needs a seed with at least 3 zones, seed "two-zones" has 2 ["eu-west-1a", "eu-west-1b"]; rescheduling from seed "no-backup" to seed "two-zones" needs backup on both seeds, seed "no-backup" has no spec.backup`}},

		// Self-hosted Shoots get no seed, whoever asks.
		{name: "self-hosted create without seed", review: vReview{object: selfHosted("", nil)}, wantAllowed: true},
		{name: "self-hosted create with seed and permission", review: as(vReview{object: selfHosted("aws-eu1", nil)}, binderUser),
			wantMessage: []string{`seedwarden: spec.seedName: Invalid value: "aws-eu1": cannot set seedName for self-hosted shoots (worker pool "worker-k3x9q" has controlPlane)`}},
		{name: "self-hosted create with a valid token", review: vReview{object: selfHosted("aws-eu1", placed(own))},
			wantMessage: []string{"cannot set seedName for self-hosted shoots"}},
		{name: "self-hosted binding", review: as(vReview{operation: admissionv1.Update, subResource: "binding", object: selfHosted("aws-eu1", nil), oldObject: selfHosted("", nil)}, binderUser),
			wantMessage: []string{"cannot set seedName for self-hosted shoots"}},
		{name: "self-hosted update without seed", review: vReview{operation: admissionv1.Update, object: selfHosted("", nil), oldObject: selfHosted("", nil)}, wantAllowed: true},

		// Authorizer errors fail closed.
		{name: "SubjectAccessReview error", review: binding("", "aws-eu1"), authErr: errors.New("SubjectAccessReview: connection refused"), wantAuth: 1,
			wantMessage: []string{"seedwarden: cannot verify binding permission: SubjectAccessReview: connection refused"}},
		{name: "SubjectAccessReview error on create", review: as(create("aws-eu1", nil), binderUser), authErr: errors.New("timeout"), wantAuth: 1,
			wantMessage: []string{"cannot verify binding permission: timeout"}},
		{name: "SubjectAccessReview error does not matter for own placement", review: create("aws-eu1", placed(own)), authErr: errors.New("down"), wantAllowed: true},

		// Other operations
		{name: "delete", review: vReview{operation: admissionv1.Delete, oldObject: vShoot("aws-eu1", nil)}, wantAllowed: true},
		{name: "connect", review: vReview{operation: admissionv1.Connect}, wantAllowed: true},
	}
	runBindingCases(t, tests)
}

// The SubjectAccessReview is about the request's user and the Shoot.
func TestShootBindingValidatorAsksAboutTheShoot(t *testing.T) {
	f := newBindingFixture(t)
	r := vReview{operation: admissionv1.Update, subResource: "binding", namespace: "garden-ops",
		object:    strings.Replace(vShoot("aws-eu1", nil), `"namespace": "garden-dev"`, `"namespace": "garden-ops"`, 1),
		oldObject: strings.Replace(vShoot("", nil), `"namespace": "garden-dev"`, `"namespace": "garden-ops"`, 1)}
	vServe(t, f.v, r.body(t))
	assert.Equal(t, []string{vUser, "garden-ops", vName}, f.auth.last)

	// A create with generateName: the validating webhook sees the generated name.
	f = newBindingFixture(t)
	obj := strings.Replace(vShoot("aws-eu1", nil), `"name": "crazy-botany",`, `"name": "crazy-x7k2p", "generateName": "crazy-",`, 1)
	vServe(t, f.v, vReview{name: "-", object: obj}.body(t))
	assert.Equal(t, []string{vUser, vNamespace, "crazy-x7k2p"}, f.auth.last)
}

// generateName: the mutating webhook signs before the name exists.
func TestShootBindingValidatorGenerateName(t *testing.T) {
	f := newBindingFixture(t)
	token := f.token(vNamespace, "", "crazy-", "aws-eu1")
	withName := func(name string) string {
		return strings.Replace(vShoot("aws-eu1", placed(token)), `"name": "crazy-botany",`, `"name": "`+name+`", "generateName": "crazy-",`, 1)
	}
	resp := vServe(t, f.v, vReview{name: "-", object: withName("crazy-x7k2p")}.body(t))
	assert.True(t, resp.Allowed, vMessage(resp))

	// The token binds the prefix: a name outside it is not this placement.
	resp = vServe(t, f.v, vReview{name: "-", object: withName("other-x7k2p")}.body(t))
	assert.False(t, resp.Allowed)
	assert.Contains(t, vMessage(resp), "not accepted")
}

func TestShootBindingValidatorWithoutSignerOrAuthorizer(t *testing.T) {
	f := newBindingFixture(t)
	token := f.token(vNamespace, vName, "", "aws-eu1")
	f.v.Signer = nil
	resp := vServe(t, f.v, vReview{object: vShoot("aws-eu1", placed(token))}.body(t))
	assert.False(t, resp.Allowed, "no key: every seed choice is a user's")
	assert.Contains(t, vMessage(resp), "no placement key is configured")

	f.v.Authorizer = nil
	resp = vServe(t, f.v, vReview{object: vShoot("aws-eu1", nil), user: binderUser}.body(t))
	assert.False(t, resp.Allowed)
	assert.Contains(t, vMessage(resp), "cannot verify binding permission: no authorizer configured")
}

// Landscape mode: the listed subjects may bind, nobody else.
func TestShootBindingValidatorSubjectsAuthorizer(t *testing.T) {
	f := newBindingFixture(t)
	f.v.Authorizer = SubjectsAuthorizer{Subjects: Subjects{{Kind: SubjectGroup, Name: "operators"}}}
	resp := vServe(t, f.v, vReview{object: vShoot("aws-eu1", nil)}.body(t))
	assert.False(t, resp.Allowed)
	assert.Contains(t, vMessage(resp), "landscape mode: only binding.landscapeAllowedSubjects may bind Shoots")
	resp = vServe(t, f.v, vReview{object: vShoot("aws-eu1", nil), user: &authenticationv1.UserInfo{Username: "op", Groups: []string{"operators"}}}.body(t))
	assert.True(t, resp.Allowed, vMessage(resp))
}

func TestShootBindingValidatorMalformed(t *testing.T) {
	tests := []struct {
		name     string
		body     string
		review   vReview
		wantCode int32
		wantMsg  string
	}{
		{name: "status subresource", review: vReview{operation: admissionv1.Update, subResource: "status", object: vShoot("a", nil), oldObject: vShoot("a", nil)},
			wantCode: http.StatusBadRequest, wantMsg: `got "shoots/status"`},
		{name: "wrong kind", review: vReview{kind: metaGVK("core.gardener.cloud", "v1beta1", "Seed"), object: "{}"},
			wantCode: http.StatusBadRequest, wantMsg: `expected kind core.gardener.cloud/v1beta1 Shoot`},
		{name: "wrong resource", review: vReview{resource: metaGVR("core.gardener.cloud", "v1beta1", "seeds"), object: "{}"},
			wantCode: http.StatusBadRequest, wantMsg: `expected resource shoots or shoots/binding`},
		{name: "no object", review: vReview{}, wantCode: http.StatusBadRequest, wantMsg: "carries no object"},
		{name: "object not a shoot", review: vReview{object: `{"kind": "Seed"}`}, wantCode: http.StatusBadRequest, wantMsg: `object has kind "Seed"`},
		{name: "object of wrong type", review: vReview{object: `{"spec": {"seedName": 1}}`}, wantCode: http.StatusBadRequest, wantMsg: "cannot decode object as a Shoot"},
		{name: "update without old object", review: vReview{operation: admissionv1.Update, object: vShoot("a", nil)},
			wantCode: http.StatusBadRequest, wantMsg: "old object: seedwarden: admission request carries no object"},
		{name: "binding without old object", review: vReview{operation: admissionv1.Update, subResource: "binding", object: vShoot("a", nil)},
			wantCode: http.StatusBadRequest, wantMsg: "old object: seedwarden: admission request carries no object"},
		{name: "update with broken old object", review: vReview{operation: admissionv1.Update, object: vShoot("a", nil), oldObject: `[1]`},
			wantCode: http.StatusBadRequest, wantMsg: "old object: seedwarden: cannot decode object as a Shoot"},
		{name: "not JSON", body: `{"request": `, wantCode: http.StatusBadRequest, wantMsg: "unexpected end of JSON input"},
		{name: "no request", body: `{"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1"}`, wantCode: http.StatusBadRequest, wantMsg: "expected kind"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newBindingFixture(t)
			body := tc.body
			if body == "" {
				body = tc.review.body(t)
			}
			resp := vServe(t, f.v, body)
			assert.False(t, resp.Allowed)
			require.NotNil(t, resp.Result)
			assert.Equal(t, tc.wantCode, resp.Result.Code)
			assert.Contains(t, resp.Result.Message, tc.wantMsg)
			assert.Zero(t, f.auth.calls.Load())
		})
	}
}

func TestShootBindingValidatorMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	f := newBindingFixture(t)
	h := Observed(WebhookBinding, metrics.New(reg), f.v)
	vServe(t, h, vReview{object: vShoot("", nil)}.body(t))
	vServe(t, h, vReview{object: vShoot("aws-eu1", nil)}.body(t))
	vServe(t, h, vReview{kind: metaGVK("x", "v1", "Y"), object: "{}"}.body(t))
	for _, result := range []string{"allowed", "denied", "error"} {
		assert.Equal(t, 1.0, vCounter(t, reg, metrics.ValidationsTotalName, map[string]string{"webhook": "binding", "result": result}), result)
	}
}

// vCounter returns the value of the counter with exactly these labels.
func vCounter(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			got := map[string]string{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			if assert.ObjectsAreEqual(labels, got) {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// FuzzShootBindingValidator: arbitrary object and old object bytes, through
// the handler and inside real reviews. The handler must never panic, must
// always answer, and must never let a seed choice through without the
// binding permission unless the token verifies (which random bytes cannot
// achieve without the key).
func FuzzShootBindingValidator(f *testing.F) {
	f.Add([]byte(`{"kind":"Shoot","metadata":{"name":"a"},"spec":{"seedName":"aws-eu1"}}`), []byte(`{"spec":{}}`), uint8(0))
	f.Add([]byte(`{"metadata":{"annotations":{"seedwarden.io/placement":"v1.99999999999.AAAA"}},"spec":{"seedName":"aws-eu1"}}`), []byte(`null`), uint8(1))
	f.Add([]byte(`{"spec":{"seedName":""}}`), []byte(`{"spec":{"seedName":"aws-eu1"}}`), uint8(2))
	f.Add([]byte(`{"spec":{"seedName":"deleting","controlPlane":{"highAvailability":{"failureTolerance":{"type":"zone"}}}}}`), []byte(`{"spec":{"seedName":"no-backup"}}`), uint8(3))
	f.Add([]byte(`null`), []byte(`{`), uint8(4))

	clock := newVClock()
	signer, err := placementtoken.NewSigner([][]byte{vKey}, 2*time.Minute, clock.Now)
	if err != nil {
		f.Fatal(err)
	}
	auth := &fakeAuthorizer{allowed: map[string]bool{vBinder: true}}
	v := &ShootBindingValidator{Landscape: vStore(bindingLandscape()...), Authorizer: auth, Signer: signer}
	wh := (&webhook.Admission{Handler: v}).WithRecoverPanic(false)
	ops := []admissionv1.Operation{admissionv1.Create, admissionv1.Update, admissionv1.Delete}

	f.Fuzz(func(t *testing.T, object, oldObject []byte, sel uint8) {
		op := ops[int(sel)%len(ops)]
		sub := ""
		if sel&4 != 0 {
			sub = "binding"
		}
		for _, user := range []string{vUser, vBinder} {
			req := webhook.AdmissionRequest{AdmissionRequest: admissionv1.AdmissionRequest{
				UID: testUID, Kind: metaGVK("core.gardener.cloud", "v1beta1", "Shoot"), Resource: metaGVR("core.gardener.cloud", "v1beta1", "shoots"),
				SubResource: sub, Operation: op, Namespace: vNamespace, Name: vName,
				UserInfo: authenticationv1.UserInfo{Username: user},
			}}
			req.Object.Raw, req.OldObject.Raw = object, oldObject
			before := auth.calls.Load()
			resp := wh.Handle(t.Context(), req)
			if !resp.Allowed && (resp.Result == nil || resp.Result.Message == "" || resp.Result.Code < 400) {
				t.Fatalf("rejection without code and message: %+v", resp.Result)
			}
			if resp.Allowed && user == vUser && auth.calls.Load() > before {
				t.Fatalf("a user without binding permission was admitted after the permission check: %s", statusMessage(resp))
			}
		}
		if json.Valid(object) && json.Valid(oldObject) {
			r := vReview{operation: op, subResource: sub, object: string(object), oldObject: string(oldObject)}
			serveFuzz(t, wh, r.body(t))
		}
	})
}

// reviewCounter answers SubjectAccessReviews as the API server would, or
// fails while down, and counts them.
type reviewCounter struct {
	down  atomic.Bool
	calls atomic.Int32
	last  atomic.Pointer[authorizationv1.ResourceAttributes]
}

func (r *reviewCounter) Create(_ context.Context, sar *authorizationv1.SubjectAccessReview, _ metav1.CreateOptions) (*authorizationv1.SubjectAccessReview, error) {
	r.calls.Add(1)
	r.last.Store(sar.Spec.ResourceAttributes)
	if r.down.Load() {
		return nil, errors.New("etcd is down")
	}
	out := sar.DeepCopy()
	out.Status.Allowed = sar.Spec.User == vBinder
	return out, nil
}

// The binding webhook with the real SARAuthorizer: a denied review denies,
// an unreachable API server fails closed, and repeated requests use the cache.
func TestShootBindingValidatorWithSARAuthorizer(t *testing.T) {
	s := &reviewCounter{}
	f := newBindingFixture(t)
	f.v.Authorizer = authz.NewSARAuthorizer(s, BindingPermission, time.Minute, time.Second, nil)

	r := vReview{object: vShoot("aws-eu1", nil), user: binderUser}
	for range 3 {
		resp := vServe(t, f.v, r.body(t))
		assert.True(t, resp.Allowed, vMessage(resp))
	}
	assert.Equal(t, int32(1), s.calls.Load())
	assert.Equal(t, &authorizationv1.ResourceAttributes{
		Namespace: vNamespace, Verb: "update", Group: "core.gardener.cloud",
		Resource: "shoots", Subresource: "binding", Name: vName,
	}, s.last.Load(), "asks for update on shoots/binding")

	resp := vServe(t, f.v, vReview{object: vShoot("aws-eu1", nil)}.body(t))
	assert.False(t, resp.Allowed)
	assert.Contains(t, vMessage(resp), `user "jane.doe@example.com" may not set spec.seedName to "aws-eu1"`)

	s.down.Store(true)
	other := vReview{object: vShoot("aws-eu1", nil), user: &authenticationv1.UserInfo{Username: vBinder, Groups: []string{"new-group"}}}
	resp = vServe(t, f.v, other.body(t))
	assert.False(t, resp.Allowed)
	assert.Equal(t, int32(http.StatusForbidden), resp.Result.Code)
	assert.Contains(t, vMessage(resp), "seedwarden: cannot verify binding permission: SubjectAccessReview: etcd is down")
}
