package handlers

import (
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/cache"
)

func TestShootMutatorPlaces(t *testing.T) {
	withSeed := func(object map[string]any, seed string) map[string]any {
		object["spec"].(map[string]any)["seedName"] = seed
		return object
	}
	withAnnotations := func(object map[string]any, annotations map[string]any) map[string]any {
		object["metadata"].(map[string]any)["annotations"] = annotations
		return object
	}
	createdBy := `"annotations": {"gardener.cloud/created-by": "jane.doe@example.com"},`

	tests := []struct {
		name      string
		review    review
		wantKey   string
		wantPatch string
		want      func() map[string]any
	}{{
		name:    "annotations present",
		review:  review{object: shootJSON(createdBy, "")},
		wantKey: testUID,
		wantPatch: `[{"op":"add","path":"/spec/seedName","value":"aws-eu2"},
			{"op":"add","path":"/metadata/annotations/seedwarden.io~1reservation","value":"` + testUID + `"}]`,
		want: func() map[string]any {
			o := withSeed(decodeJSON(t, shootJSON("", "")), "aws-eu2")
			return withAnnotations(o, map[string]any{"gardener.cloud/created-by": "jane.doe@example.com", cache.AnnotationReservation: testUID})
		},
	}, {
		name:    "annotations absent",
		review:  review{},
		wantKey: testUID,
		wantPatch: `[{"op":"add","path":"/spec/seedName","value":"aws-eu2"},
			{"op":"add","path":"/metadata/annotations","value":{"seedwarden.io/reservation":"` + testUID + `"}}]`,
		want: func() map[string]any {
			return withAnnotations(withSeed(decodeJSON(t, shootJSON("", "")), "aws-eu2"), map[string]any{cache.AnnotationReservation: testUID})
		},
	}, {
		name:    "annotations empty",
		review:  review{object: shootJSON(`"annotations": {},`, "")},
		wantKey: testUID,
		wantPatch: `[{"op":"add","path":"/spec/seedName","value":"aws-eu2"},
			{"op":"add","path":"/metadata/annotations/seedwarden.io~1reservation","value":"` + testUID + `"}]`,
		want: func() map[string]any {
			return withAnnotations(withSeed(decodeJSON(t, shootJSON("", "")), "aws-eu2"), map[string]any{cache.AnnotationReservation: testUID})
		},
	}, {
		name:    "annotations null",
		review:  review{object: shootJSON(`"annotations": null,`, "")},
		wantKey: testUID,
		wantPatch: `[{"op":"add","path":"/spec/seedName","value":"aws-eu2"},
			{"op":"add","path":"/metadata/annotations","value":{"seedwarden.io/reservation":"` + testUID + `"}}]`,
		want: func() map[string]any {
			return withAnnotations(withSeed(decodeJSON(t, shootJSON("", "")), "aws-eu2"), map[string]any{cache.AnnotationReservation: testUID})
		},
	}, {
		name:    "user-written reservation annotation is overwritten",
		review:  review{object: shootJSON(`"annotations": {"seedwarden.io/reservation": "forged"},`, "")},
		wantKey: testUID,
		wantPatch: `[{"op":"add","path":"/spec/seedName","value":"aws-eu2"},
			{"op":"add","path":"/metadata/annotations/seedwarden.io~1reservation","value":"` + testUID + `"}]`,
		want: func() map[string]any {
			return withAnnotations(withSeed(decodeJSON(t, shootJSON("", "")), "aws-eu2"), map[string]any{cache.AnnotationReservation: testUID})
		},
	}, {
		name:    "empty seedName is replaced",
		review:  review{object: shootJSON("", `"seedName": "",`)},
		wantKey: testUID,
		wantPatch: `[{"op":"add","path":"/spec/seedName","value":"aws-eu2"},
			{"op":"add","path":"/metadata/annotations","value":{"seedwarden.io/reservation":"` + testUID + `"}}]`,
		want: func() map[string]any {
			return withAnnotations(withSeed(decodeJSON(t, shootJSON("", "")), "aws-eu2"), map[string]any{cache.AnnotationReservation: testUID})
		},
	}, {
		name:    "our schedulerName",
		review:  review{object: shootJSON("", `"schedulerName": "default-scheduler",`)},
		wantKey: testUID,
		wantPatch: `[{"op":"add","path":"/spec/seedName","value":"aws-eu2"},
			{"op":"add","path":"/metadata/annotations","value":{"seedwarden.io/reservation":"` + testUID + `"}}]`,
		want: func() map[string]any {
			o := withSeed(decodeJSON(t, shootJSON("", `"schedulerName": "default-scheduler",`)), "aws-eu2")
			return withAnnotations(o, map[string]any{cache.AnnotationReservation: testUID})
		},
	}, {
		name:      "dry-run reserves nothing",
		review:    review{dryRun: true, object: shootJSON(createdBy, "")},
		wantKey:   "",
		wantPatch: `[{"op":"add","path":"/spec/seedName","value":"aws-eu2"}]`,
		want: func() map[string]any {
			return withSeed(decodeJSON(t, shootJSON(createdBy, "")), "aws-eu2")
		},
	}, {
		name:    "admission.k8s.io/v1beta1 review",
		review:  review{apiVersion: "admission.k8s.io/v1beta1"},
		wantKey: testUID,
		wantPatch: `[{"op":"add","path":"/spec/seedName","value":"aws-eu2"},
			{"op":"add","path":"/metadata/annotations","value":{"seedwarden.io/reservation":"` + testUID + `"}}]`,
		want: func() map[string]any {
			return withAnnotations(withSeed(decodeJSON(t, shootJSON("", "")), "aws-eu2"), map[string]any{cache.AnnotationReservation: testUID})
		},
	}, {
		name:    "no spec, no metadata",
		review:  review{object: `{"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot"}`},
		wantKey: testUID,
		wantPatch: `[{"op":"add","path":"/spec","value":{"seedName":"aws-eu2"}},
			{"op":"add","path":"/metadata","value":{"annotations":{"seedwarden.io/reservation":"` + testUID + `"}}}]`,
		want: func() map[string]any {
			return decodeJSON(t, `{"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
				"spec": {"seedName": "aws-eu2"}, "metadata": {"annotations": {"seedwarden.io/reservation": "`+testUID+`"}}}`)
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			placer := &fakePlacer{decision: scheduled}
			m := newMutator(t, placer, prometheus.NewRegistry())
			httpResp, ar := serve(t, m, t.Context(), tt.review.body())
			resp := ar.Response

			assert.Equal(t, http.StatusOK, httpResp.StatusCode)
			wantAPIVersion := tt.review.apiVersion
			if wantAPIVersion == "" {
				wantAPIVersion = "admission.k8s.io/v1"
			}
			assert.Equal(t, wantAPIVersion, ar.APIVersion)
			assert.Equal(t, testUID, string(resp.UID))
			assert.True(t, resp.Allowed)
			require.NotNil(t, resp.PatchType)
			assert.Equal(t, admissionv1.PatchTypeJSONPatch, *resp.PatchType)
			assert.JSONEq(t, tt.wantPatch, string(resp.Patch))
			assert.Empty(t, resp.Warnings)

			object := tt.review.object
			if object == "" {
				object = shootJSON("", "")
			}
			assert.Equal(t, tt.want(), applyPatch(t, object, resp.Patch))

			calls := placer.Calls()
			require.Len(t, calls, 1)
			assert.Equal(t, tt.wantKey, calls[0].key)
			assert.Equal(t, m.Options, calls[0].opts)
			assert.Equal(t, "jane.doe@example.com", calls[0].user, "the request's user, for reservations.maxPerUser")
		})
	}
}

// The Placer sees the Shoot as the API server sent it.
func TestShootMutatorDecodesShoot(t *testing.T) {
	placer := &fakePlacer{decision: scheduled}
	m := newMutator(t, placer, nil)
	_, ar := serve(t, m, t.Context(), review{}.body())
	require.True(t, ar.Response.Allowed)

	calls := placer.Calls()
	require.Len(t, calls, 1)
	s := calls[0].shoot
	assert.Equal(t, "crazy-botany", s.Name)
	assert.Equal(t, "garden-dev", s.Namespace)
	assert.Equal(t, "eu-west-1", s.Spec.Region)
	assert.Equal(t, &api.CloudProfileReference{Kind: "CloudProfile", Name: "aws"}, s.Spec.CloudProfile)
	assert.Equal(t, "aws", s.Spec.Provider.Type)
	require.Len(t, s.Spec.Provider.Workers, 1)
	assert.Equal(t, []string{"eu-west-1a"}, s.Spec.Provider.Workers[0].Zones)
	require.NotNil(t, s.Spec.Networking)
	assert.Equal(t, "10.250.0.0/16", *s.Spec.Networking.Nodes)
	assert.Equal(t, []string{"IPv4"}, s.Spec.Networking.IPFamilies)
	assert.Equal(t, "evaluation", *s.Spec.Purpose)
	assert.Len(t, s.Spec.Tolerations, 2)
	assert.Equal(t, "zone", s.Spec.ControlPlane.HighAvailability.FailureTolerance.Type)
	assert.Equal(t, "eu-access-only", s.Spec.AccessRestrictions[0].Name)
	assert.Equal(t, "crazy-botany.dev.shoot.example.com", *s.Spec.DNS.Domain)
	assert.Nil(t, s.Spec.SeedName)
}

func TestShootMutatorDoesNotPlace(t *testing.T) {
	tests := []struct {
		name        string
		review      review
		body        string // overrides review
		wantAllowed bool
		wantCode    int32
		wantMessage string // substring
	}{{
		name:        "already seeded",
		review:      review{object: shootJSON("", `"seedName": "gcp-eu1",`)},
		wantAllowed: true, wantCode: http.StatusOK, wantMessage: `spec.seedName already set to "gcp-eu1"`,
	}, {
		name:        "foreign schedulerName",
		review:      review{object: shootJSON("", `"schedulerName": "custom-scheduler",`)},
		wantAllowed: true, wantCode: http.StatusOK, wantMessage: `spec.schedulerName "custom-scheduler" is not ours`,
	}, {
		name:        "update",
		review:      review{operation: "UPDATE"},
		wantAllowed: true, wantCode: http.StatusOK, wantMessage: `not a create (operation "UPDATE")`,
	}, {
		name:        "delete",
		review:      review{operation: "DELETE", object: "null"},
		wantAllowed: true, wantCode: http.StatusOK, wantMessage: `not a create (operation "DELETE")`,
	}, {
		name:     "wrong kind",
		review:   review{kind: "core.gardener.cloud/v1beta1/Seed", resource: "core.gardener.cloud/v1beta1/seeds"},
		wantCode: http.StatusBadRequest, wantMessage: `expected kind core.gardener.cloud/v1beta1 Shoot, got "core.gardener.cloud/v1beta1, Kind=Seed" (operation "CREATE")`,
	}, {
		name:     "wrong kind version",
		review:   review{kind: "core.gardener.cloud/v1/Shoot"},
		wantCode: http.StatusBadRequest, wantMessage: `got "core.gardener.cloud/v1, Kind=Shoot"`,
	}, {
		name:     "wrong resource",
		review:   review{resource: "core.gardener.cloud/v1beta1/seeds"},
		wantCode: http.StatusBadRequest, wantMessage: `expected resource shoots in group core.gardener.cloud without subresource, got "seeds" in group "core.gardener.cloud"`,
	}, {
		name:     "binding subresource",
		review:   review{subResource: "binding"},
		wantCode: http.StatusBadRequest, wantMessage: `got "shoots/binding"`,
	}, {
		name:     "status subresource on update",
		review:   review{subResource: "status", operation: "UPDATE"},
		wantCode: http.StatusBadRequest, wantMessage: `got "shoots/status" in group "core.gardener.cloud" (operation "UPDATE")`,
	}, {
		name:     "missing request",
		body:     `{"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1"}`,
		wantCode: http.StatusBadRequest, wantMessage: `expected kind core.gardener.cloud/v1beta1 Shoot, got "/, Kind=" (operation "")`,
	}, {
		name:     "missing uid",
		body:     strings.Replace(review{}.body(), `"uid": "`+testUID+`"`, `"uid": ""`, 1),
		wantCode: http.StatusBadRequest, wantMessage: "admission request has no uid",
	}, {
		name:     "empty object",
		review:   review{object: "null"},
		wantCode: http.StatusBadRequest, wantMessage: "admission request carries no object",
	}, {
		name:     "no object",
		body:     strings.Replace(review{}.body(), `"object": `, `"objectX": `, 1),
		wantCode: http.StatusBadRequest, wantMessage: "admission request carries no object",
	}, {
		name:     "object of wrong kind",
		review:   review{object: `{"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Seed", "metadata": {"name": "aws-eu1"}, "spec": {}}`},
		wantCode: http.StatusBadRequest, wantMessage: `object has kind "Seed", expected "Shoot"`,
	}, {
		name:     "object of wrong apiVersion",
		review:   review{object: strings.Replace(shootJSON("", ""), "core.gardener.cloud/v1beta1", "core.gardener.cloud/v1", 1)},
		wantCode: http.StatusBadRequest, wantMessage: `object has apiVersion "core.gardener.cloud/v1", expected "core.gardener.cloud/v1beta1"`,
	}, {
		name:     "object not an object",
		review:   review{object: `"crazy-botany"`},
		wantCode: http.StatusBadRequest, wantMessage: "cannot decode object as a Shoot: json: cannot unmarshal string",
	}, {
		name:     "object field of wrong type",
		review:   review{object: `{"kind": "Shoot", "spec": {"seedName": 42}}`},
		wantCode: http.StatusBadRequest, wantMessage: "cannot decode object as a Shoot",
	}, {
		name:     "malformed JSON body",
		body:     `{"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1", "request": {"uid": `,
		wantCode: http.StatusBadRequest, wantMessage: "unexpected end of JSON input",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			placer := &fakePlacer{decision: scheduled}
			m := newMutator(t, placer, nil)
			body := tt.body
			if body == "" {
				body = tt.review.body()
			}
			httpResp, ar := serve(t, m, t.Context(), body)
			resp := ar.Response

			assert.Equal(t, http.StatusOK, httpResp.StatusCode, "errors travel inside the AdmissionReview")
			assert.Equal(t, tt.wantAllowed, resp.Allowed)
			require.NotNil(t, resp.Result)
			assert.Equal(t, tt.wantCode, resp.Result.Code)
			assert.Contains(t, resp.Result.Message, tt.wantMessage)
			assert.Nil(t, resp.PatchType)
			assert.Empty(t, resp.Patch)
			assert.Empty(t, resp.Warnings)
			assert.Empty(t, placer.Calls())
		})
	}
}
