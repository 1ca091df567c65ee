package handlers

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	admissionv1 "k8s.io/api/admission/v1"

	"github.com/seedwarden/seedwarden/internal/placementtoken"
)

// Objects that smuggle a seed past the webhooks in a case variant of a key.
// Before the validating webhooks decoded like Kubernetes, encoding/json read "seedname"
// or "SEEDNAME" as spec.seedName, so these webhooks judged another seed than
// the API server stores.

func TestShootBindingValidatorRefusesCaseVariants(t *testing.T) {
	f0 := newBindingFixture(t)
	own := f0.token(vNamespace, vName, "", "aws-eu1")
	variant := "seedwarden: object has key "
	runBindingCases(t, []bindingCase{
		{
			// Kubernetes stores seedName "aws-eu1": a seed chosen without
			// permission, which the webhook must not read as "no seed".
			name:        "CREATE with seedName and a null seedname",
			review:      vReview{object: shootJSON("", `"seedName": "aws-eu1", "seedname": null,`)},
			wantMessage: []string{variant + `"spec.seedname" where Kubernetes reads only "spec.seedName"`},
		},
		{
			name: "UPDATE moving the seed under a SEEDNAME variant",
			review: vReview{operation: admissionv1.Update, oldObject: vShoot("aws-eu1", nil),
				object: shootJSON("", `"seedName": "aws-eu1", "SEEDNAME": "aws-eu2",`)},
			wantMessage: []string{variant + `"spec.SEEDNAME"`},
		},
		{
			// The token under "Annotations" is not an annotation to the API
			// server (nor to the mutating webhook, which reads exactly).
			name:        "placement token under metadata.Annotations",
			review:      vReview{object: shootJSON(`"Annotations": {"`+placementtoken.Annotation+`": "`+own+`"},`, `"seedName": "aws-eu1",`)},
			wantMessage: []string{variant + `"metadata.Annotations" where Kubernetes reads only "metadata.annotations"`},
		},
		{
			name:        "only a SeedName variant, allowed as no seed by Kubernetes too, is still refused",
			review:      vReview{object: shootJSON("", `"SeedName": "aws-eu1",`)},
			wantMessage: []string{variant + `"spec.SeedName"`},
		},
		{
			// The stored object is read exactly: its variant is ignored, as
			// the API server ignores it, and the request is judged as usual.
			name: "a variant only in the old object does not block an UPDATE",
			review: asUser(vReview{operation: admissionv1.Update, object: vShoot("aws-eu1", nil),
				oldObject: shootJSON("", `"seedName": "aws-eu1", "SEEDNAME": "aws-eu2",`)}, binderUser),
			wantAllowed: true,
		},
	})
}

func TestShootCapacityValidatorRefusesCaseVariants(t *testing.T) {
	for name, spec := range map[string]string{
		// Kubernetes stores no seed, so a reservation would hold
		// a place nobody uses until it expires.
		"only SeedName":             `"SeedName": "small",`,
		"seedName and null variant": `"seedName": "small", "seedname": null,`,
	} {
		t.Run(name, func(t *testing.T) {
			f := newCapacityFixture(t)
			resp := vServe(t, f.v, vReview{object: shootJSON("", spec), user: binderUser}.body(t))
			assert.False(t, resp.Allowed)
			assert.Equal(t, int32(http.StatusForbidden), resp.Result.Code)
			assert.Contains(t, vMessage(resp), "where Kubernetes reads only \"spec.seedName\"")
			assert.Empty(t, f.reservation(manualKey), "no place reserved")
			assert.Equal(t, int64(1), f.store.Usage("small"), "usage unchanged")
		})
	}
}
