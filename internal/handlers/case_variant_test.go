package handlers

import (
	"encoding/json"
	"net/http"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/placementtoken"
)

// Issue 14, defect 1 (and 7): the exact objects of the attack. Before the
// validating webhooks decoded like Kubernetes, encoding/json read "seedname"
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
		// Defect 7: Kubernetes stores no seed, so a reservation would hold
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

func TestCaseVariant(t *testing.T) {
	type inner struct {
		Type string `json:"type"`
	}
	type object struct {
		metav1.TypeMeta `json:",inline"`
		Items           []inner            `json:"items"`
		ByName          map[string]inner   `json:"byName"`
		Labels          map[string]string  `json:"labels"`
		Port            intstr.IntOrString `json:"port"`
		Skipped         string             `json:"-"`
	}
	tests := map[string]struct {
		raw     string
		wantKey string // "" for none
	}{
		"exact keys":                     {raw: `{"kind":"K","items":[{"type":"a"}],"byName":{"x":{"type":"b"}}}`},
		"inline field variant":           {raw: `{"Kind":"K"}`, wantKey: "Kind"},
		"slice element variant":          {raw: `{"items":[{"type":"a"},{"TYPE":"b"}]}`, wantKey: "items[1].TYPE"},
		"map value variant":              {raw: `{"byName":{"x":{"Type":"b"}}}`, wantKey: "byName.x.Type"},
		"map keys are data":              {raw: `{"labels":{"Type":"a","type":"b"}}`},
		"self-decoding types not walked": {raw: `{"port":{"Type":1}}`},
		"json:\"-\" is no field":         {raw: `{"skipped":"x","Skipped":"y"}`},
		"Kelvin sign folds to k":         {raw: "{\"\u212aind\":\"K\"}", wantKey: "\u212aind"},
		"wrong types left to the decode": {raw: `{"items":{"TYPE":1},"byName":[1]}`},
		"not an object":                  {raw: `[1]`},
		"escaped exact key":              {raw: `{"kin\u0064":"K","items":[]}`},
		"escaped variant":                {raw: `{"Kin\u0064":"K"}`, wantKey: "Kind"},
		"empty containers":               {raw: `{"items":[],"byName":{},"labels":{}}`},
		"nested arrays of objects":       {raw: `{"items":[{"type":"a"} , {"type":"b","TYPE":"c"}]}`, wantKey: "items[1].TYPE"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			err := caseVariant(json.RawMessage(tt.raw), reflect.TypeFor[object]())
			if tt.wantKey == "" {
				assert.NoError(t, err)
				return
			}
			var cv *caseVariantError
			require.ErrorAs(t, err, &cv)
			assert.Equal(t, tt.wantKey, cv.key)
		})
	}
	// api.Shoot is what the webhooks check against; its metadata is
	// metav1.ObjectMeta, walked like any struct.
	assert.Error(t, caseVariant(json.RawMessage(`{"metadata":{"Labels":{}}}`), reflect.TypeFor[api.Shoot]()))
}
