package handlers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"unicode"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"

	"github.com/seedwarden/seedwarden/internal/admissionjson"
)

// streamingSizeValidator is newSizeValidator with the e2e suite's Shoot
// limit (managedFields limited too) in front and a ConfigMap limit of 1 MiB.
func streamingSizeValidator(mode string) *ResourceSizeValidator {
	v := newSizeValidator(logr.Discard(), mode, prometheus.NewRegistry())
	configMaps := SizeLimit{ResourceRule: ResourceRule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
		Size: "1Mi", Bytes: 1 << 20, ManagedFieldsSize: "64Ki", ManagedFieldsBytes: 64 << 10}
	v.Limits = append([]SizeLimit{shootLimit8Ki(), configMaps}, v.Limits...)
	return v
}

// sizeChains are the resource-size webhook as cmd/webhook serves it: the
// chain reading whole bodies, and the same chain behind StreamSizeReviews.
func sizeChains(v *ResourceSizeValidator) (buffered, streamed http.Handler) {
	chain := RequireAdmissionReviewV1(NewAdmissionWebhook(Observed(WebhookResourceSize, nil, v)))
	return chain, StreamSizeReviews(chain)
}

func serveReview(h http.Handler, body []byte) (int, string) {
	r := httptest.NewRequest(http.MethodPost, WebhookResourceSizePath, bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Code, w.Body.String()
}

// assertStreamedAnswersAsBuffered: both ways answer body byte for byte
// alike, or, for a body that is no JSON object, both refuse it without a
// uid (the messages say why in their own words).
func assertStreamedAnswersAsBuffered(t *testing.T, v *ResourceSizeValidator, body []byte) {
	t.Helper()
	buffered, streamed := sizeChains(v)
	wantCode, want := serveReview(buffered, body)
	gotCode, got := serveReview(streamed, body)
	require.Equal(t, wantCode, gotCode)
	if rv, err := admissionjson.StreamReview(bytes.NewReader(body)); err == nil && rv.Truncated {
		// Too much besides the objects to keep (MaxStreamedFields): refused,
		// naming the request, whatever the buffered answer.
		gotResp := responseOf(t, got)
		assert.False(t, gotResp.Allowed, got)
		assert.Equal(t, int32(http.StatusBadRequest), gotResp.Result.Code)
		assert.Equal(t, responseOf(t, want).UID, gotResp.UID)
		return
	}
	if json.Valid(body) && bytes.HasPrefix(bytes.TrimLeftFunc(body, unicode.IsSpace), []byte("{")) {
		assert.Equal(t, want, got, "review %.300s", body)
		return
	}
	wantResp, gotResp := responseOf(t, want), responseOf(t, got)
	assert.False(t, gotResp.Allowed, "streamed answer %s", got)
	assert.Equal(t, wantResp.Allowed, gotResp.Allowed, "buffered %s, streamed %s", want, got)
	assert.Equal(t, wantResp.UID, gotResp.UID)
	assert.Equal(t, wantResp.Result.Code, gotResp.Result.Code)
}

func responseOf(t *testing.T, answer string) *admissionv1.AdmissionResponse {
	t.Helper()
	var rv admissionv1.AdmissionReview
	require.NoError(t, json.Unmarshal([]byte(answer), &rv), answer)
	require.NotNil(t, rv.Response, answer)
	return rv.Response
}

// sizeReviewShapes are reviews over the resources, operations, users and
// object shapes the size webhook judges, each as the API server writes it
// and with the uid at the end.
func sizeReviewShapes(t testing.TB) [][]byte {
	type resource struct{ group, version, resource, kind string }
	resources := []resource{
		{"core.gardener.cloud", "v1beta1", "shoots", "Shoot"},
		{"", "v1", "configmaps", "ConfigMap"},
		{"", "v1", "secrets", "Secret"},
		{"core.gardener.cloud", "v1beta1", "seeds", "Seed"},
		{"core.gardener.cloud", "v1beta1", "projects", "Project"},
		{"example.com", "v1", "widgets", "Widget"},
		{"", "v1", "pods", "Pod"},
	}
	users := []string{
		`{"username":"alice","groups":["system:authenticated"]}`,
		`{"username":"admin@example.com"}`,
		`{"username":"bob","groups":["system:authenticated","garden:operators"]}`,
		`{"username":"system:serviceaccount:kube-system:generic-garbage-collector","groups":["system:serviceaccounts"]}`,
	}
	mf := func(n int) string { return `[{"manager":"m","fieldsV1":{"f:x":"` + strings.Repeat("f", n) + `"}}]` }
	objects := []string{
		`{"metadata":{"name":"small"},"data":{"k":"v"}}`,
		sized(t, "Shoot", "at-8ki", 8<<10),
		sized(t, "Shoot", "over-8ki", 8<<10+1),
		sized(t, "ConfigMap", "cm-200k", 200_000),
		sized(t, "ConfigMap", "cm-1m", 1_100_000),
		`{"metadata":{"generateName":"gen-","managedFields":` + mf(20_000) + `},"spec":{}}`,
		`{"metadata":{"name":"mf-70k","managedFields":` + mf(70_000) + `}}`,
		`{"metadata":{"name":"status"},"status":{"big":"` + strings.Repeat("s", 300_000) + `"}}`,
		`{"metadata":"not an object","spec":"` + strings.Repeat("x", 20_000) + `"}`,
		`"a string of ` + strings.Repeat("x", 9000) + `"`,
		`{"metadata":{"name":"dup","managedFields":` + mf(30_000) + `},"metadata":{"generateName":"d-"},"Status":"` + strings.Repeat("S", 9000) + `"}`,
	}
	var out [][]byte
	ops := []string{"CREATE", "UPDATE", "DELETE"}
	for ri, r := range resources {
		for oi, obj := range objects {
			op, user := ops[(ri+oi)%len(ops)], users[(ri+2*oi)%len(users)]
			name := `"name":"obj",`
			if oi%3 == 0 {
				name = "" // a CREATE of a generated name
			}
			req := fmt.Sprintf(`"kind":{"group":%q,"version":%q,"kind":%q},"resource":{"group":%q,"version":%q,"resource":%q},%s"namespace":"garden-dev","operation":%q,"userInfo":%s,"object":%s`,
				r.group, r.version, r.kind, r.group, r.version, r.resource, name, op, user, obj)
			if op == "UPDATE" {
				req += `,"oldObject":{"metadata":{"name":"obj","managedFields":` + mf(25_000) + `}}`
			}
			if (ri+oi)%2 == 0 {
				out = append(out, []byte(`{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"u-first",`+req+`}}`))
			} else {
				out = append(out, []byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{`+req+`,"uid":"u-last"}}`))
			}
		}
	}
	return append(out,
		[]byte(`{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","request":{"uid":"old","object":{}}}`),
		[]byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"sub","subResource":"status","operation":"UPDATE","resource":{"group":"core.gardener.cloud","version":"v1beta1","resource":"shoots"},"object":`+sized(t, "Shoot", "s", 20_000)+`}}`),
		[]byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"huge-user","operation":"CREATE","resource":{"group":"","version":"v1","resource":"configmaps"},"userInfo":{"groups":[`+strings.Repeat(`"g",`, 20_000)+`"g"]},"object":{}}}`),
		[]byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"cut","object":{`),
		[]byte(`not json at all`),
	)
}

// Every shape, in both modes, gets the same answer streamed as buffered;
// the shapes reach every kind of answer.
func TestStreamedSizeReviewsAnswerAsBuffered(t *testing.T) {
	shapes := sizeReviewShapes(t)
	kinds := map[string]int{}
	for _, mode := range []string{OperationModeBlock, OperationModeLog} {
		v := streamingSizeValidator(mode)
		buffered, _ := sizeChains(v)
		for i, body := range shapes {
			t.Run(fmt.Sprintf("%s/%d", mode, i), func(t *testing.T) { assertStreamedAnswersAsBuffered(t, v, body) })
			_, answer := serveReview(buffered, body)
			kinds[mode+" "+answerKind(responseOf(t, answer))]++
		}
	}
	for _, k := range []string{"block allowed", "block size", "block managedFields", "block count", "block error", "log warned"} {
		assert.Positive(t, kinds[k], "answers of kind %q among %v", k, kinds)
	}
}

func answerKind(r *admissionv1.AdmissionResponse) string {
	switch {
	case r.Allowed && len(r.Warnings) > 0:
		return "warned"
	case r.Allowed:
		return "allowed"
	case r.Result.Code != http.StatusForbidden:
		return "error"
	case strings.Contains(r.Result.Message, "metadata.managedFields"):
		return "managedFields"
	case strings.Contains(r.Result.Message, "resource size"):
		return "size"
	case strings.Contains(r.Result.Message, "exist, the limit is"):
		return "count"
	}
	return "other denial"
}

// The verdicts the stream gives matter most when the object is over a
// limit: a denial naming the request, never an error or an admission.
func TestStreamedOversizedReviewIsDenied(t *testing.T) {
	_, streamed := sizeChains(streamingSizeValidator(OperationModeBlock))
	body := `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"7d1c","kind":{"group":"core.gardener.cloud","version":"v1beta1","kind":"Shoot"},` +
		`"resource":{"group":"core.gardener.cloud","version":"v1beta1","resource":"shoots"},"name":"big","namespace":"garden-dev","operation":"CREATE","userInfo":{"username":"tenant"},` +
		`"object":` + sized(t, "Shoot", "big", 1_200_000) + `}}`
	code, answer := serveReview(streamed, []byte(body))
	require.Equal(t, http.StatusOK, code)
	resp := responseOf(t, answer)
	assert.Equal(t, "7d1c", string(resp.UID))
	assert.False(t, resp.Allowed)
	assert.Equal(t, int32(http.StatusForbidden), resp.Result.Code)
	assert.Equal(t, `seedwarden: resource size 1200000 bytes exceeds the limit of 8Ki (8192 bytes) for shoots.core.gardener.cloud/v1beta1 "garden-dev/big"`, resp.Result.Message)
	assert.Contains(t, answer, `{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1",`, "the review's type")
}

// A review whose small fields are too large to keep is refused with its uid.
func TestStreamedReviewWithHugeFieldsIsRefusedByUID(t *testing.T) {
	_, streamed := sizeChains(streamingSizeValidator(OperationModeBlock))
	body := `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u-77","operation":"CREATE",` +
		`"resource":{"group":"","version":"v1","resource":"configmaps"},"userInfo":{"groups":[` + strings.Repeat(`"g",`, 20_000) + `"g"]},"object":{}}}`
	_, answer := serveReview(streamed, []byte(body))
	resp := responseOf(t, answer)
	assert.Equal(t, "u-77", string(resp.UID))
	assert.False(t, resp.Allowed)
	assert.Equal(t, "seedwarden: the review's fields other than its objects exceed 65536 bytes", resp.Result.Message)
}

// FuzzStreamedSizeReview holds the streamed answer to the buffered one on
// any body.
func FuzzStreamedSizeReview(f *testing.F) {
	for _, body := range sizeReviewShapes(f)[:40] {
		f.Add(body)
	}
	f.Add([]byte(`{"request":{"uid":"a","operation":"CREATE","resource":{"group":"","version":"v1","resource":"configmaps"},"object":{"metadata":{"name":"x"}},"object":null}}`))
	v := streamingSizeValidator(OperationModeBlock)
	f.Fuzz(func(t *testing.T, body []byte) {
		assertStreamedAnswersAsBuffered(t, v, body)
	})
}

// BenchmarkSizeReview: the size webhook's answer to one review, read whole
// (the chain as the budget lets it run) and streamed, for the oversized
// Shoot of the finding and a ConfigMap of everyday large size. B/body-byte
// is what one answer allocates per byte of the review.
func BenchmarkSizeReview(b *testing.B) {
	bodies := []struct {
		name string
		body []byte
	}{
		{"shoot-1.2MB", []byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"7d1c","kind":{"group":"core.gardener.cloud","version":"v1beta1","kind":"Shoot"},` +
			`"resource":{"group":"core.gardener.cloud","version":"v1beta1","resource":"shoots"},"name":"big","namespace":"garden-dev","operation":"CREATE","userInfo":{"username":"tenant"},` +
			`"object":` + sized(b, "Shoot", "big", 1_200_000) + `}}`)},
		{"configmap-200KB", []byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"cm","kind":{"group":"","version":"v1","kind":"ConfigMap"},` +
			`"resource":{"group":"","version":"v1","resource":"configmaps"},"name":"cm","namespace":"garden-dev","operation":"CREATE","userInfo":{"username":"tenant"},` +
			`"object":` + sized(b, "ConfigMap", "cm", 200_000) + `}}`)},
	}
	buffered, streamed := sizeChains(streamingSizeValidator(OperationModeBlock))
	for _, tc := range bodies {
		for _, way := range []struct {
			name string
			h    http.Handler
		}{{"buffered", buffered}, {"streamed", streamed}} {
			b.Run(tc.name+"/"+way.name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(tc.body)))
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				for b.Loop() {
					if code, _ := serveReview(way.h, tc.body); code != http.StatusOK {
						b.Fatal(code)
					}
				}
				runtime.ReadMemStats(&after)
				b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/float64(len(tc.body)), "B/body-byte")
			})
		}
	}
}

// However large the review, streaming it allocates the same: its buffer
// and the members it keeps, not its objects (the buffered path allocates a
// multiple of the body).
func TestStreamedSizeReviewMemoryDoesNotGrowWithTheBody(t *testing.T) {
	_, streamed := sizeChains(streamingSizeValidator(OperationModeBlock))
	allocated := func(body []byte) uint64 {
		least := uint64(math.MaxUint64)
		for range 5 {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			code, _ := serveReview(streamed, body)
			runtime.ReadMemStats(&after)
			require.Equal(t, http.StatusOK, code)
			least = min(least, after.TotalAlloc-before.TotalAlloc)
		}
		return least
	}
	review := func(n int) []byte {
		return []byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","operation":"CREATE",` +
			`"resource":{"group":"","version":"v1","resource":"configmaps"},"name":"cm","object":` + sized(t, "ConfigMap", "cm", n) + `}}`)
	}
	small, large := review(100_000), review(10_000_000)
	smallBytes, largeBytes := allocated(small), allocated(large)
	t.Logf("allocated: %d bytes for a %d-byte review, %d for %d bytes", smallBytes, len(small), largeBytes, len(large))
	assert.Less(t, largeBytes, smallBytes+64<<10, "100 times the body, at most 64 KiB more allocated")
	assert.Less(t, largeBytes, uint64(len(large))/50)
}
