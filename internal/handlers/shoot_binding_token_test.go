package handlers

import (
	"encoding/json"
	"strings"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/seedwarden/seedwarden/internal/api"
)

// generatedShoot is the Shoot as the API server hands it to the validating
// webhooks: the name generated from generateName and the uid assigned
// (k8s.io/apiserver's Store.create, after mutating admission).
func generatedShoot(t *testing.T, object, name, uid string) string {
	t.Helper()
	var o map[string]any
	require.NoError(t, json.Unmarshal([]byte(object), &o))
	meta := o["metadata"].(map[string]any)
	meta["name"], meta["uid"] = name, uid
	b, err := json.Marshal(o)
	require.NoError(t, err)
	return string(b)
}

// mutateGenerateName sends a CREATE of a Shoot with generateName "web-" (no
// name yet, as the API server sends it) through mutator and returns the
// object as mutated.
func mutateGenerateName(t *testing.T, mutator admission.Handler) string {
	t.Helper()
	object := strings.Replace(vShoot("", nil), `"name": "crazy-botany",`, `"generateName": "web-",`, 1)
	resp := vServe(t, mutator, vReview{uid: "mutating-1", name: "-", object: object}.body(t))
	require.True(t, resp.Allowed, vMessage(resp))
	p, err := jsonpatch.DecodePatch(resp.Patch)
	require.NoError(t, err)
	out, err := p.Apply([]byte(object))
	require.NoError(t, err)
	return string(out)
}

// TestGenerateNameTokenIsSingleUse: the placement token of a generateName Shoot names no Shoot (the mutating webhook sees
// no name) and used to verify for every name with the prefix. Its copy on a
// second generateName Shoot (the mutating webhook skipped, failurePolicy
// Ignore) must not place that Shoot for a user without binding permission;
// the first Shoot keeps its placement through the API server's repeated
// calls and later UPDATEs.
func TestGenerateNameTokenIsSingleUse(t *testing.T) {
	store := vStore(vSeed("aws-eu1", 10), vSeed("aws-eu2", 10))
	c := newChain(t, store, &fakeAuthorizer{}) // nobody holds binding permission
	mutated := mutateGenerateName(t, c.mutator)
	require.Contains(t, mutated, `"seedwarden.io/placement":"v2.`)

	first := generatedShoot(t, mutated, "web-x7k2p", "uid-1")
	validate := func(uid, name, obj string) *admissionv1.AdmissionResponse {
		r := vReview{uid: uid, name: name, object: obj}
		if resp := vServe(t, c.binding, r.body(t)); !resp.Allowed {
			return resp
		}
		return vServe(t, c.capacity, r.body(t))
	}
	for i, call := range []string{"first call", "the API server calls again"} {
		resp := validate("validating-1", "web-x7k2p", first)
		require.True(t, resp.Allowed, "%s: %s", call, vMessage(resp))
		if i == 0 {
			assert.Contains(t, vMessage(resp), "holds a place for this Shoot", "the capacity webhook took the mutating webhook's reservation")
		}
	}

	// The attack: the same token on another generated name.
	copied := generatedShoot(t, mutated, "web-q9z4m", "uid-2")
	resp := vServe(t, c.binding, vReview{uid: "validating-2", name: "web-q9z4m", object: copied}.body(t))
	assert.False(t, resp.Allowed)
	assert.Contains(t, vMessage(resp), "may not set spec.seedName")
	assert.Contains(t, vMessage(resp), `placement token was already used by another Shoot: garden-dev/web-x7k2p (uid "uid-1")`)

	// Through the mutating webhook the copy never gets this far: a token it
	// did not write is removed, and the user then needs binding permission.
	_, ok, why := c.admitCreate(t, "mutating-3", "-", copied, nil)
	assert.False(t, ok)
	assert.Contains(t, why, "binding: seedwarden: user")

	// The first Shoot lives on: UPDATEs do not look at the token.
	resp = vServe(t, c.binding, vReview{uid: "validating-4", name: "web-x7k2p", operation: admissionv1.Update, object: first, oldObject: first}.body(t))
	assert.True(t, resp.Allowed, vMessage(resp))
	resp = validate("validating-5", "web-x7k2p", first)
	assert.True(t, resp.Allowed, "its own CREATE again: %s", vMessage(resp))
}

// Across replicas: the first Shoot's CREATE was validated by replica 1; the
// copy goes to replica 2, whose own memory of used tokens is empty. The
// watch has brought the first Shoot to replica 2's Store, which refuses the
// nonce it carries to any other Shoot.
func TestGenerateNameTokenIsSingleUseAcrossReplicas(t *testing.T) {
	seeds := func() []*api.Seed { return []*api.Seed{vSeed("aws-eu1", 10), vSeed("aws-eu2", 10)} }
	replica1 := newChain(t, vStore(seeds()...), &fakeAuthorizer{})
	store2 := vStore(seeds()...)
	replica2 := newChain(t, store2, &fakeAuthorizer{})
	replica2.binding.Signer.SetCarriers(store2.TokenCarriers)

	mutated := mutateGenerateName(t, replica1.mutator)
	first := generatedShoot(t, mutated, "web-x7k2p", "uid-1")
	resp := vServe(t, replica1.binding, vReview{uid: "validating-1", name: "web-x7k2p", object: first}.body(t))
	require.True(t, resp.Allowed, vMessage(resp))

	var stored api.Shoot
	require.NoError(t, json.Unmarshal([]byte(first), &stored))
	store2.Apply(&stored) // the watch event

	copied := generatedShoot(t, mutated, "web-q9z4m", "uid-2")
	resp = vServe(t, replica2.binding, vReview{uid: "validating-2", name: "web-q9z4m", object: copied}.body(t))
	assert.False(t, resp.Allowed)
	assert.Contains(t, vMessage(resp), `placement token was already used by another Shoot: garden-dev/web-x7k2p (uid "uid-1") carries it`)
}
