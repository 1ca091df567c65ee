package handlers

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seedwarden/seedwarden/internal/placementtoken"
)

// The mutating webhook's placement token: added to its own placements,
// removed wherever else a Shoot carries one.

func annotationsOf(t *testing.T, object map[string]any) map[string]any {
	t.Helper()
	meta, _ := object["metadata"].(map[string]any)
	ann, _ := meta["annotations"].(map[string]any)
	return ann
}

func TestShootMutatorSignsItsPlacement(t *testing.T) {
	clock := newVClock()
	signer := vSigner(t, clock)
	userToken := map[string]string{placementtoken.Annotation: "v1.9999999999.forged"}
	generated := strings.Replace(shootJSON("", ""), `"name": "crazy-botany",`, `"generateName": "crazy-",`, 1)

	tests := []struct {
		name      string
		review    review
		wantPatch string // the token value is written as TOKEN
		subject   placementtoken.Subject
	}{{
		name:   "no annotations",
		review: review{},
		wantPatch: `[{"op":"add","path":"/spec/seedName","value":"aws-eu2"},
			{"op":"add","path":"/metadata/annotations","value":{"seedwarden.io/reservation":"` + testUID + `","seedwarden.io/placement":"TOKEN"}}]`,
		subject: placementtoken.Subject{Namespace: vNamespace, Name: vName, Seed: "aws-eu2"},
	}, {
		name:   "with annotations",
		review: review{object: shootJSON(`"annotations": {"a": "b"},`, "")},
		wantPatch: `[{"op":"add","path":"/spec/seedName","value":"aws-eu2"},
			{"op":"add","path":"/metadata/annotations/seedwarden.io~1reservation","value":"` + testUID + `"},
			{"op":"add","path":"/metadata/annotations/seedwarden.io~1placement","value":"TOKEN"}]`,
		subject: placementtoken.Subject{Namespace: vNamespace, Name: vName, Seed: "aws-eu2"},
	}, {
		name:   "a user's token is replaced",
		review: review{object: vShoot("", userToken)},
		wantPatch: `[{"op":"add","path":"/spec/seedName","value":"aws-eu2"},
			{"op":"add","path":"/metadata/annotations/seedwarden.io~1reservation","value":"` + testUID + `"},
			{"op":"add","path":"/metadata/annotations/seedwarden.io~1placement","value":"TOKEN"}]`,
		subject: placementtoken.Subject{Namespace: vNamespace, Name: vName, Seed: "aws-eu2"},
	}, {
		// A dry run gets a dry-run token (so a dry run predicts the real
		// answer), without reservation; it never verifies for a real request.
		name:   "dry run is signed for dry runs only, without reservation",
		review: review{dryRun: true},
		wantPatch: `[{"op":"add","path":"/spec/seedName","value":"aws-eu2"},
			{"op":"add","path":"/metadata/annotations","value":{"seedwarden.io/placement":"TOKEN"}}]`,
		subject: placementtoken.Subject{Namespace: vNamespace, Name: vName, Seed: "aws-eu2", DryRun: true},
	}, {
		name:   "generateName: signed without a name",
		review: review{object: generated},
		wantPatch: `[{"op":"add","path":"/spec/seedName","value":"aws-eu2"},
			{"op":"add","path":"/metadata/annotations","value":{"seedwarden.io/reservation":"` + testUID + `","seedwarden.io/placement":"TOKEN"}}]`,
		subject: placementtoken.Subject{Namespace: vNamespace, Name: "crazy-q8x2z", GenerateName: "crazy-", Seed: "aws-eu2"},
	}, {
		name:   "namespace from the request",
		review: review{object: strings.Replace(shootJSON("", ""), `"namespace": "garden-dev",`, "", 1)},
		wantPatch: `[{"op":"add","path":"/spec/seedName","value":"aws-eu2"},
			{"op":"add","path":"/metadata/annotations","value":{"seedwarden.io/reservation":"` + testUID + `","seedwarden.io/placement":"TOKEN"}}]`,
		subject: placementtoken.Subject{Namespace: vNamespace, Name: vName, Seed: "aws-eu2"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newMutator(t, &fakePlacer{decision: scheduled}, nil)
			m.Signer = signer
			_, ar := serve(t, m, t.Context(), tc.review.body())
			resp := ar.Response
			require.True(t, resp.Allowed)
			object := tc.review.object
			if object == "" {
				object = shootJSON("", "")
			}
			patched := applyPatch(t, object, resp.Patch)
			token, _ := annotationsOf(t, patched)[placementtoken.Annotation].(string)
			require.NotEmpty(t, token)
			assert.JSONEq(t, tc.wantPatch, strings.Replace(string(resp.Patch), token, "TOKEN", 1))
			assert.NoError(t, signer.Verify(token, tc.subject), "the validating webhook accepts it")
			otherMode := tc.subject
			otherMode.DryRun = !otherMode.DryRun
			assert.ErrorIs(t, signer.Verify(token, otherMode), placementtoken.ErrMismatch, "dry-run and real tokens never stand in for each other")

			other := tc.subject
			other.Seed = "aws-eu1"
			assert.ErrorIs(t, signer.Verify(token, other), placementtoken.ErrMismatch)
			clock.Step(3 * time.Minute)
			assert.ErrorIs(t, signer.Verify(token, tc.subject), placementtoken.ErrExpired)
			clock.Step(-3 * time.Minute)
		})
	}
}

func TestShootMutatorRemovesForeignTokens(t *testing.T) {
	signer := vSigner(t, newVClock())
	userToken := map[string]string{placementtoken.Annotation: "copied-from-another-shoot", "keep": "me"}
	const remove = `[{"op":"remove","path":"/metadata/annotations/seedwarden.io~1placement"}]`

	tests := []struct {
		name      string
		review    review
		decision  placementDecision
		signer    bool
		wantPatch string
		wantSeed  string
	}{
		{name: "seed already set", review: review{object: vShoot("aws-eu1", userToken)}, signer: true, wantPatch: remove, wantSeed: "aws-eu1"},
		{name: "another scheduler", review: review{object: strings.Replace(vShoot("", userToken), `"region"`, `"schedulerName": "custom", "region"`, 1)}, signer: true, wantPatch: remove},
		{name: "unschedulable", review: review{object: vShoot("", userToken)}, decision: decideUnschedulable, signer: true, wantPatch: remove},
		{name: "dry run, unschedulable", review: review{object: vShoot("", userToken), dryRun: true}, decision: decideUnschedulable, signer: true, wantPatch: remove},
		{name: "placed without a signer", review: review{object: vShoot("", userToken)},
			wantPatch: `[{"op":"add","path":"/spec/seedName","value":"aws-eu2"},{"op":"remove","path":"/metadata/annotations/seedwarden.io~1placement"},
				{"op":"add","path":"/metadata/annotations/seedwarden.io~1reservation","value":"` + testUID + `"}]`,
			wantSeed: "aws-eu2"},
		{name: "dry run placed without a signer", review: review{object: vShoot("", userToken), dryRun: true},
			wantPatch: `[{"op":"add","path":"/spec/seedName","value":"aws-eu2"},{"op":"remove","path":"/metadata/annotations/seedwarden.io~1placement"}]`,
			wantSeed:  "aws-eu2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := scheduled
			if tc.decision == decideUnschedulable {
				d = unschedulable
			}
			m := newMutator(t, &fakePlacer{decision: d}, nil)
			if tc.signer {
				m.Signer = signer
			}
			_, ar := serve(t, m, t.Context(), tc.review.body())
			resp := ar.Response
			require.True(t, resp.Allowed)
			assert.JSONEq(t, tc.wantPatch, string(resp.Patch))
			patched := applyPatch(t, tc.review.object, resp.Patch)
			ann := annotationsOf(t, patched)
			assert.NotContains(t, ann, placementtoken.Annotation)
			assert.Equal(t, "me", ann["keep"])
			spec := patched["spec"].(map[string]any)
			if tc.wantSeed == "" {
				assert.NotContains(t, spec, "seedName")
			} else {
				assert.Equal(t, tc.wantSeed, spec["seedName"])
			}
		})
	}

	// Without a token nothing changes, as before.
	m := newMutator(t, &fakePlacer{decision: scheduled}, nil)
	m.Signer = signer
	_, ar := serve(t, m, t.Context(), review{object: vShoot("aws-eu1", nil)}.body())
	assert.Empty(t, ar.Response.Patch)
	assert.Nil(t, ar.Response.PatchType)

	// An update may not write a token either: it is removed.
	_, ar = serve(t, m, t.Context(), review{operation: "UPDATE", object: vShoot("aws-eu1", userToken)}.body())
	assert.True(t, ar.Response.Allowed)
	assert.JSONEq(t, `[{"op":"remove","path":"/metadata/annotations/seedwarden.io~1placement"}]`, string(ar.Response.Patch))
}

type placementDecision int

const (
	decideScheduled placementDecision = iota
	decideUnschedulable
)
