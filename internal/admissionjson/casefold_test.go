package admissionjson

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/seedwarden/seedwarden/internal/api"
)

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
			var cv *CaseVariantError
			require.ErrorAs(t, err, &cv)
			assert.Equal(t, tt.wantKey, cv.key)
		})
	}
	// api.Shoot is what the webhooks check against; its metadata is
	// metav1.ObjectMeta, walked like any struct.
	assert.Error(t, caseVariant(json.RawMessage(`{"metadata":{"Labels":{}}}`), reflect.TypeFor[api.Shoot]()))
}
