package admissionjson

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// fastReview and fastRequest decode every member as the AdmissionReview
// types do (same JSON names, same Go types), but the request's objects.
func TestFastReviewMirrorsAdmissionReview(t *testing.T) {
	var fields func(t reflect.Type) map[string]reflect.Type
	fields = func(t reflect.Type) map[string]reflect.Type {
		out := map[string]reflect.Type{}
		for f := range t.Fields() {
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if f.Anonymous && name == "" {
				for k, v := range fields(f.Type) {
					out[k] = v
				}
				continue
			}
			out[name] = f.Type
		}
		return out
	}
	review := fields(reflect.TypeFor[admissionv1.AdmissionReview]())
	review["request"] = reflect.TypeFor[*fastRequest]()
	assert.Equal(t, review, fields(reflect.TypeFor[fastReview]()))

	request := fields(reflect.TypeFor[admissionv1.AdmissionRequest]())
	assert.Equal(t, reflect.TypeFor[runtime.RawExtension](), request["object"])
	assert.Equal(t, reflect.TypeFor[runtime.RawExtension](), request["oldObject"])
	assert.Equal(t, reflect.TypeFor[runtime.RawExtension](), request["options"])
	info := fields(reflect.TypeFor[authenticationv1.UserInfo]())
	info["extra"] = reflect.TypeFor[extraValues]()
	assert.Equal(t, info, fields(reflect.TypeFor[userInfo]()))
	assert.True(t, reflect.TypeFor[extraValues]().ConvertibleTo(reflect.TypeFor[map[string]authenticationv1.ExtraValue]()))
	request["userInfo"] = reflect.TypeFor[userInfo]()
	assert.Equal(t, request, fields(reflect.TypeFor[plainRequest]()), "DecodeReview's request")
	review["request"] = reflect.TypeFor[*plainRequest]()
	assert.Equal(t, review, fields(reflect.TypeFor[plainReview]()), "DecodeReview's review")
	request["object"] = reflect.TypeFor[*shootObject]()
	request["oldObject"] = reflect.TypeFor[anyJSON]()
	request["options"] = reflect.TypeFor[anyJSON]()
	assert.Equal(t, request, fields(reflect.TypeFor[fastRequest]()))
}

func TestInspectReview(t *testing.T) {
	tests := []struct {
		name, body    string
		ok, ambiguous bool
		object        string
	}{
		{name: "plain", body: `{"request":{"object":{"a":1}}}`, ok: true, object: `{"a":1}`},
		{name: "strings with structure", body: `{"x":"}{\"][","request":{"y":["{","\\",{"z":"\\\""}],"object":{"s":"\"}"}, "n": -1.5e3, "t": true}}`, ok: true, object: `{"s":"\"}"}`},
		{name: "empty objects", body: `{"request":{"object":{}}}`, ok: true, object: `{}`},
		{name: "empty review", body: `{ }`, ok: true},
		{name: "object null", body: `{"request":{"object":null}}`, ok: true},
		{name: "whitespace", body: " {\n\"request\" :\t{ \"object\" : { \"metadata\" : { \"annotations\" : { } } } } } ", ok: true, object: `{ "metadata" : { "annotations" : { } } }`},
		{name: "duplicate spec", body: `{"request":{"object":{"spec":{},"spec":null}}}`, ok: true, ambiguous: true, object: `{"spec":{},"spec":null}`},
		{name: "duplicate metadata", body: `{"request":{"object":{"metadata":{},"metadata":{}}}}`, ok: true, ambiguous: true, object: `{"metadata":{},"metadata":{}}`},
		{name: "duplicate annotations", body: `{"request":{"object":{"metadata":{"annotations":{},"annotations":null}}}}`, ok: true, ambiguous: true, object: `{"metadata":{"annotations":{},"annotations":null}}`},
		{name: "escaped object key", body: `{"request":{"object":{"m\u0065tadata":{}}}}`, ok: true, ambiguous: true, object: `{"m\u0065tadata":{}}`},
		{name: "escaped metadata key", body: `{"request":{"object":{"metadata":{"\"":1}}}}`, ok: true, ambiguous: true, object: `{"metadata":{"\"":1}}`},
		{name: "annotations elsewhere", body: `{"request":{"object":{"spec":{"annotations":{},"annotations":{}}}}}`, ok: true, object: `{"spec":{"annotations":{},"annotations":{}}}`},
		{name: "two objects", body: `{"request":{"object":{},"object":{}}}`},
		{name: "two requests", body: `{"request":{},"request":{}}`},
		{name: "escaped request key", body: `{"request":{"\u006fbject":{}}}`},
		{name: "case variant", body: `{"Kind":"x"}`},
		{name: "non-ASCII key", body: `{"ä":1}`},
		{name: "other keys in other cases", body: `{"Request":{"object":{}},"KINDS":1}`, ok: true},
		{name: "truncated", body: `{"request":{"object":{"a":"b`},
		{name: "not an object", body: `[]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			shape, ok := inspectReview([]byte(tc.body))
			assert.Equal(t, tc.ok, ok)
			if !ok {
				return
			}
			assert.Equal(t, tc.ambiguous, shape.ambiguous)
			assert.Equal(t, tc.object, string(shape.object))
		})
	}
}

// BenchmarkInspectReview walks testdata/review.json, a CREATE review of
// about 9 KB as hack/httpbench sends: a Shoot with thirteen worker pools,
// labels, annotations and managedFields.
func BenchmarkInspectReview(b *testing.B) {
	body, err := os.ReadFile("testdata/review.json")
	require.NoError(b, err)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := inspectReview(body); !ok {
			b.Fatal("not ok")
		}
	}
}
