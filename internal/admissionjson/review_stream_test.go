package admissionjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/iotest"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
)

// crDecoder decodes a review as controller-runtime's webhook.Admission does
// (the universal deserializer into a review of a type no scheme knows, with
// the request preset).
var crDecoder = serializer.NewCodecFactory(runtime.NewScheme()).UniversalDeserializer()

func decodeAsControllerRuntime(body []byte) (admissionv1.AdmissionRequest, *schema.GroupVersionKind, error) {
	var req admissionv1.AdmissionRequest
	ar := admissionv1.AdmissionReview{Request: &req}
	ar.SetGroupVersionKind(AdmissionReviewV1)
	_, gvk, err := crDecoder.Decode(body, nil, &ar)
	return req, gvk, err
}

// measuredAs is what the size webhook reads of a MeasuredObject.
type measuredAs struct {
	Len                int64
	IsObject           bool
	Object, MF         int64
	SizesErr           string
	Name, GenerateName string
	NameErr            bool
}

func readMeasured(m MeasuredObject) measuredAs {
	out := measuredAs{Len: m.Len(), IsObject: m.IsObject()}
	s, err := m.Sizes()
	out.Object, out.MF = s.Object, s.ManagedFields
	if err != nil {
		out.SizesErr = err.Error()
	}
	var nerr error
	out.Name, out.GenerateName, nerr = m.Name()
	out.NameErr = nerr != nil
	return out
}

// assertStreamAgrees checks that StreamReview reads body as
// controller-runtime and the size webhook's buffered reading do: the same
// error or none, the same request (objects and options aside), the same
// measurements of object and oldObject.
func assertStreamAgrees(t *testing.T, body []byte) {
	t.Helper()
	// Through a reader that returns a byte at a time: no assumption on how
	// the stream arrives.
	rv, serr := StreamReview(iotest.OneByteReader(bytes.NewReader(body)))
	if !startsJSONObjectLoosely(body) {
		return // controller-runtime would try YAML; StreamReview refuses it
	}
	want, wantGVK, werr := decodeAsControllerRuntime(body)
	if serr != nil {
		assert.Error(t, werr, "StreamReview refused a review controller-runtime decodes: %v", serr)
		var syn *SyntaxError
		assert.True(t, errors.As(serr, &syn) || errors.Is(serr, ErrNotJSONObject), "error %v", serr)
		return
	}
	if !json.Valid(body) {
		t.Fatalf("StreamReview accepted invalid JSON %q", body)
	}
	if rv.Truncated {
		return
	}
	got, gotGVK, gerr := decodeAsControllerRuntime(rv.Review)
	if werr != nil {
		assert.Error(t, gerr, "the reduced review %s decodes, the original does not: %v", rv.Review, werr)
		return
	}
	require.NoError(t, gerr, "reduced review %s", rv.Review)
	assert.Equal(t, wantGVK, gotGVK)
	assert.Equal(t, readMeasured(RawObject(want.Object.Raw)), readMeasured(streamedObject(rv, got.Object.Raw)), "object of %s", rv.Review)
	assert.Equal(t, readMeasured(RawObject(want.OldObject.Raw)), readMeasured(streamedObject(rv, got.OldObject.Raw)), "oldObject")
	want.Object, want.OldObject, want.Options = runtime.RawExtension{}, runtime.RawExtension{}, runtime.RawExtension{}
	got.Object, got.OldObject, got.Options = runtime.RawExtension{}, runtime.RawExtension{}, runtime.RawExtension{}
	assert.Equal(t, want, got)
}

func streamedObject(rv *StreamedReview, raw []byte) MeasuredObject {
	if m, ok := rv.Object(raw); ok {
		return m
	}
	return RawObject(raw)
}

// startsJSONObjectLoosely is the universal deserializer's test for JSON.
func startsJSONObjectLoosely(b []byte) bool {
	return bytes.HasPrefix(bytes.TrimLeftFunc(b, unicode.IsSpace), []byte("{"))
}

// review is an AdmissionReview with the given request members.
func review(request string) string {
	return `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{` + request + `}}`
}

const head = `"uid":"u-1","kind":{"group":"","version":"v1","kind":"ConfigMap"},"resource":{"group":"","version":"v1","resource":"configmaps"},` +
	`"namespace":"garden-dev","operation":"CREATE","userInfo":{"username":"alice","groups":["system:authenticated"]}`

// The shapes of reviews the size webhook meets, and the ones a forger
// would try: StreamReview reads each as the buffered path does.
func TestStreamReviewReadsAsBuffered(t *testing.T) {
	big := strings.Repeat("x", 50_000)
	cases := map[string]string{
		"plain":                 review(head + `,"object":{"metadata":{"name":"a"},"data":{"k":"v"}}`),
		"uid last":              review(`"object":{"metadata":{"name":"a"}},"operation":"CREATE","uid":"late"`),
		"uid twice":             review(`"uid":"first",` + head[len(`"uid":"u-1",`):] + `,"uid":"second","object":{}`),
		"UID variant ignored":   review(head + `,"UID":"no","object":{}`),
		"escaped uid key":       review(`"\u0075id":"esc","object":{"metadata":{"name":"a"}}`),
		"status and mf":         review(head + `,"object":{"metadata":{"name":"a","managedFields":[{"manager":"` + big + `"}]},"status":{"s":"` + big + `"},"data":{}}`),
		"status twice":          review(head + `,"object":{"status":"` + big + `","data":1,"status":{}}`),
		"status null":           review(head + `,"object":{"status":null,"a":1}`),
		"Status variant counts": review(head + `,"object":{"Status":"` + big + `"}`),
		"escaped status key":    review(head + `,"object":{"st\u0061tus":"` + big + `"}`),
		"metadata twice":        review(head + `,"object":{"metadata":{"managedFields":[1,2,3],"name":"one"},"metadata":{"generateName":"g-"}}`),
		"metadata null":         review(head + `,"object":{"metadata":{"name":"n"},"metadata":null}`),
		"metadata string":       review(head + `,"object":{"metadata":"x"}`),
		"metadata number":       review(head + `,"object":{"metadata":-1.5e3,"metadata":[]}`),
		"metadata array":        review(head + `,"object":{"metadata":[{"name":"x"}]}`),
		"metadata bool":         review(head + `,"object":{"metadata":true}`),
		"name number":           review(head + `,"object":{"metadata":{"name":5}}`),
		"name null":             review(head + `,"object":{"metadata":{"name":"a","name":null}}`),
		"name escaped":          review(head + `,"object":{"metadata":{"name":"a\u00e9\n"}}`),
		"mf null":               review(head + `,"object":{"metadata":{"managedFields":null}}`),
		"mf twice":              review(head + `,"object":{"metadata":{"managedFields":[` + `"` + big + `"` + `],"managedFields":[]}}`),
		"object string":         review(head + `,"object":"` + big + `"`),
		"object array":          review(head + `,"object":[1,2]`),
		"object number":         review(head + `,"object":12`),
		"object null":           review(head + `,"object":null`),
		"object twice":          review(head + `,"object":{"a":"` + big + `"},"object":{"b":1}`),
		"object then null":      review(head + `,"object":{"a":"` + big + `"},"object":null`),
		"oldObject":             review(head + `,"operation":"UPDATE","object":{"metadata":{"managedFields":[1]}},"oldObject":{"metadata":{"managedFields":[1,2]}}`),
		"options":               review(head + `,"object":{},"options":{"kind":"CreateOptions","x":"` + big + `"}`),
		"no object":             review(head),
		"request twice":         `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"a","object":{"x":1}},"request":{"uid":"b"}}`,
		"request null between":  `{"request":{"uid":"a","object":{"x":1}},"request":null,"request":{"uid":"b","object":{}}}`,
		"request string":        `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":"x"}`,
		"request array":         `{"request":[1]}`,
		"kind variants":         `{"apiVersion":"admission.k8s.io/v1","KIND":"AdmissionReview","\u212aind":"Other","request":{"uid":"a"}}`,
		"apiVersion number":     `{"apiVersion":1,"request":{"uid":"a"}}`,
		"v1beta1":               `{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","request":{"uid":"a","object":{}}}`,
		"no type":               `{"request":{"uid":"a","object":{}}}`,
		"response":              `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"r","allowed":true},"request":{"uid":"a"}}`,
		"response number":       `{"response":5,"request":{"uid":"a"}}`,
		"uid number":            review(`"uid":5,"object":{}`),
		"operation object":      review(`"uid":"a","operation":{},"object":{}`),
		"dryRun":                review(head + `,"dryRun":true,"object":{}`),
		"userInfo extra":        review(head[:len(head)-1] + `,"extra":{"k":["v"]}},"object":{}`),
		"junk members":          `{"junk":"` + big + `","request":{"junk":{"a":[1,2,{"b":null}]},"uid":"a","object":{}},"more":[true,false,null]}`,
		"whitespace":            " \n\t{ \"request\" : { \"uid\" : \"a\" , \"object\" : { \"status\" : 1 , \"metadata\" : { \"managedFields\" : [ ] } } } } \r\n",
		"deep":                  review(head + `,"object":{"a":` + strings.Repeat("[", 9990) + strings.Repeat("]", 9990) + `}`),
		"too deep":              review(head + `,"object":{"a":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`),
		"trailing":              review(head) + ` {}`,
		"cut short":             review(head)[:40],
		"bad escape":            review(`"uid":"a\x"`),
		"control char":          review("\"uid\":\"a\x01\""),
		"invalid utf8":          review("\"uid\":\"a\xff\",\"object\":{\"n\xff\":1}"),
		"number forms":          review(`"uid":"a","object":{"a":[0,-0,1.5,-2e10,3E+2,4e-1]}`),
		"bad number":            review(`"uid":"a","object":{"a":01}`),
		"yaml":                  "apiVersion: admission.k8s.io/v1\nkind: AdmissionReview\n",
		"empty":                 "",
		"nul after":             review(head) + "\x00",
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) { assertStreamAgrees(t, []byte(body)) })
	}
}

// A review whose fields besides its objects exceed MaxStreamedFields keeps
// its type and uid only, and still reads whole.
func TestStreamReviewTruncatesHugeFields(t *testing.T) {
	groups := strings.Repeat(`"g",`, MaxStreamedFields/4)
	body := review(`"uid":"u-9","userInfo":{"groups":[` + groups + `"g"]},"object":{}`)
	rv, err := StreamReview(strings.NewReader(body))
	require.NoError(t, err)
	assert.True(t, rv.Truncated)
	assert.Equal(t, `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u-9"}}`, string(rv.Review))
}

// A read error of the body is StreamReview's error, not a syntax error.
func TestStreamReviewReportsReadErrors(t *testing.T) {
	cut := errors.New("connection reset")
	_, err := StreamReview(iotest.DataErrReader(&failAfter{data: []byte(review(head)[:60]), err: cut}))
	assert.ErrorIs(t, err, cut)
}

type failAfter struct {
	data []byte
	err  error
}

func (f *failAfter) Read(p []byte) (int, error) {
	if len(f.data) == 0 {
		return 0, f.err
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

// FuzzStreamReview holds StreamReview to controller-runtime's decoding and
// the buffered measurement on any bytes, and never panics.
func FuzzStreamReview(f *testing.F) {
	for _, s := range []string{
		review(head + `,"object":{"metadata":{"name":"a","managedFields":[{}]},"status":{},"data":{"k":"v"}}`),
		review(`"object":{"metadata":"x"},"uid":"z","oldObject":{"metadata":{"managedFields":null}}`),
		`{"request":{"uid":"a","object":{"x":1}},"request":null,"request":{"\u0075id":"b","object":[1]}}`,
		`{"KIND":"AdmissionReview","request":{"object":{"st\u0061tus":1,"metadata":{"name":null,"generateName":"g"}}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		assertStreamAgrees(t, body)
	})
}

// FuzzStreamGrammar holds the stream reader's grammar to encoding/json's.
func FuzzStreamGrammar(f *testing.F) {
	for _, s := range []string{`{}`, `[1,"a",true,null,{"b":-0.5e1}]`, `"\u00e9\n"`, `01`, `{"a":}`, `[1,]`, " 1 ", `"\x01"`, `1e`, `-`, `"\ud800"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s := newStreamReader(bytes.NewReader(b), 0)
		err := s.skip(0)
		if err == nil {
			err = s.end()
		}
		if json.Valid(b) != (err == nil) {
			t.Fatalf("%q: encoding/json valid %v, stream reader: %v", b, json.Valid(b), err)
		}
	})
}

func ExampleStreamReview() {
	body := review(`"uid":"u-1","object":{"metadata":{"name":"big","managedFields":[{}]},"data":{"k":"` + strings.Repeat("v", 1000) + `"}}`)
	rv, _ := StreamReview(strings.NewReader(body))
	req, _, _ := decodeAsControllerRuntime(rv.Review)
	m, _ := rv.Object(req.Object.Raw)
	sizes, _ := m.Sizes()
	fmt.Println(string(rv.Review))
	fmt.Println(sizes.Object, sizes.ManagedFields)
	// Output:
	// {"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u-1","object":[0]}}
	// 1043 4
}
