package handlers

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// seedwarden.io/ annotations are seedwarden's alone: a user's CREATE or
// UPDATE that writes them has them removed or reverted, so that no key a
// user wrote can release or claim another Shoot's reservation, and no seed
// or token a user wrote survives.
func TestForgedOwnAnnotations(t *testing.T) {
	victim := map[string]string{"seedwarden.io/reservation": "0a8c1c2e-victim-admission-uid"}
	forgedAll := map[string]string{
		"seedwarden.io/reservation": "0a8c1c2e-victim-admission-uid",
		"seedwarden.io/seed":        "aws-eu1",
		"seedwarden.io/placement":   "v2.1999999999.forged.mac",
		"team":                      "a",
	}
	tests := []struct {
		name      string
		review    review
		wantPatch string
	}{{
		// The exact input of the finding: an annotation-only UPDATE of the
		// tenant's own Shoot naming another Shoot's reservation key.
		name: "annotation-only update naming another Shoot's key",
		review: review{operation: "UPDATE", object: vShoot("aws-eu1", victim),
			oldObject: vShoot("aws-eu1", nil)},
		wantPatch: `[{"op":"remove","path":"/metadata/annotations/seedwarden.io~1reservation"}]`,
	}, {
		name: "update changing the announced seed gets the old one back",
		review: review{operation: "UPDATE", object: vShoot("", map[string]string{"seedwarden.io/seed": "aws-eu2"}),
			oldObject: vShoot("", map[string]string{"seedwarden.io/seed": "aws-eu1"})},
		wantPatch: `[{"op":"add","path":"/metadata/annotations/seedwarden.io~1seed","value":"aws-eu1"}]`,
	}, {
		name: "update removing one, or leaving them alone, passes",
		review: review{operation: "UPDATE", object: vShoot("", map[string]string{"team": "b"}),
			oldObject: vShoot("", map[string]string{"seedwarden.io/seed": "aws-eu1", "team": "a"})},
	}, {
		// A CREATE the mutator does not place (the user chose the seed).
		name:   "create with a seed keeps none of the forged annotations",
		review: review{object: vShoot("aws-eu1", forgedAll)},
		wantPatch: `[{"op":"remove","path":"/metadata/annotations/seedwarden.io~1placement"},` +
			`{"op":"remove","path":"/metadata/annotations/seedwarden.io~1reservation"},` +
			`{"op":"remove","path":"/metadata/annotations/seedwarden.io~1seed"}]`,
	}, {
		// Placed in mode patch: the webhook writes the reservation and the
		// token; the forged announcement goes.
		name:   "placed create overwrites its own and drops the rest",
		review: review{object: vShoot("", forgedAll)},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newMutator(t, &fakePlacer{decision: scheduled}, nil)
			m.Signer = vSigner(t, newVClock())
			_, ar := serve(t, m, t.Context(), tc.review.body())
			require.NotNil(t, ar.Response)
			assert.True(t, ar.Response.Allowed, "the write itself is never refused")
			if tc.wantPatch != "" {
				assert.JSONEq(t, tc.wantPatch, string(ar.Response.Patch))
				return
			}
			if tc.review.operation == "UPDATE" {
				assert.Empty(t, ar.Response.Patch)
				return
			}
			var ops []struct{ Op, Path string }
			require.NoError(t, json.Unmarshal(ar.Response.Patch, &ops))
			written := map[string]string{}
			for _, op := range ops {
				written[op.Path] = op.Op
			}
			assert.Equal(t, "add", written["/metadata/annotations/seedwarden.io~1reservation"], "the webhook's own key replaces the forged one")
			assert.Equal(t, "add", written["/metadata/annotations/seedwarden.io~1placement"], "and its own token")
			assert.Equal(t, "remove", written["/metadata/annotations/seedwarden.io~1seed"], "a forged announcement goes")
			assert.NotContains(t, written, "/metadata/annotations/team")
		})
	}
}
