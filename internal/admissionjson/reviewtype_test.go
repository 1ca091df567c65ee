package admissionjson

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestIsReviewV1(t *testing.T) {
	long := strings.Repeat("x", 100)
	tests := []struct {
		name, body string
		want       bool
	}{
		{name: "as the API server sends it", body: `{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"u"}}`, want: true},
		{name: "other order, whitespace, other keys", body: " {\n\"request\" : {\"object\":{\"a\":\"" + long + "\\\"}\"}} , \"apiVersion\":\"admission.k8s.io/v1\",\"x\":[1,{}],\"kind\" :\"AdmissionReview\"}", want: true},
		{name: "v1beta1", body: `{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1beta1"}`},
		{name: "other kind", body: `{"kind":"Foo","apiVersion":"admission.k8s.io/v1"}`},
		{name: "no kind", body: `{"apiVersion":"admission.k8s.io/v1"}`},
		{name: "duplicate apiVersion", body: `{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","apiVersion":"admission.k8s.io/v1beta1"}`},
		{name: "case variant of apiVersion after it", body: `{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","APIVERSION":"admission.k8s.io/v1beta1"}`},
		{name: "case variant of kind", body: `{"Kind":"Foo","kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1"}`},
		{name: "escaped key", body: `{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","\u0061piVersion":"admission.k8s.io/v1beta1"}`},
		{name: "escaped value", body: `{"kind":"AdmissionReview","apiVersion":"admission.k8s.io\/v1"}`},
		{name: "non-ASCII key", body: `{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","ä":1}`},
		{name: "value not a string", body: `{"kind":"AdmissionReview","apiVersion":1}`},
		{name: "YAML", body: "kind: AdmissionReview\napiVersion: admission.k8s.io/v1\n"},
		{name: "truncated", body: `{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"a":"b`},
		{name: "array", body: `[]`},
		{name: "empty", body: ``},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, isReviewV1([]byte(tc.body)))
			gvk, ok := ReviewType([]byte(tc.body))
			wantGVK, wantOK := reviewType([]byte(tc.body))
			assert.Equal(t, []any{wantGVK, wantOK}, []any{gvk, ok}, "ReviewType is the full decoder's answer")
			if tc.want {
				gvk, ok := reviewType([]byte(tc.body))
				require.True(t, ok)
				assert.Equal(t, AdmissionReviewV1, gvk, "the full decoder agrees")
			}
		})
	}
}

// FuzzIsReviewV1: whatever isReviewV1 accepts cheaply, controller-runtime's
// decoder reads as admission.k8s.io/v1 AdmissionReview too (or cannot read
// at all, and answers with its own error).
func FuzzIsReviewV1(f *testing.F) {
	f.Add([]byte(`{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"u","object":{"a":"b"}}}`))
	f.Add([]byte(`{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","APIVERSION":"admission.k8s.io/v1beta1"}`))
	f.Add([]byte(`{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","x":"` + strings.Repeat("y", 40) + `\"}"}`))
	f.Add([]byte("kind: AdmissionReview\napiVersion: admission.k8s.io/v1\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		if !isReviewV1(body) {
			return
		}
		if gvk, ok := reviewType(body); ok && gvk != AdmissionReviewV1 {
			t.Fatalf("isReviewV1 accepts %q, which controller-runtime reads as %v", body, gvk)
		}
	})
}
