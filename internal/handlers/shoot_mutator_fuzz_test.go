package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	admissionv1 "k8s.io/api/admission/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/placement"
	"github.com/seedwarden/seedwarden/internal/placementtoken"
)

// fuzzPlacer schedules most Shoots but declares those in regions ending in
// "x" unschedulable, with reasons built from Shoot fields, so warnings carry
// arbitrary input.
type fuzzPlacer struct{}

func (fuzzPlacer) Place(_ context.Context, shoot *api.Shoot, _ placement.Options, _, _ string) (placement.Decision, error) {
	if strings.HasSuffix(shoot.Spec.Region, "x") {
		return placement.Decision{Total: 2, Message: shoot.Spec.Region, Reasons: map[string]string{
			shoot.Name: shoot.Spec.Region, shoot.Spec.Provider.Type: shoot.Namespace,
		}}, nil
	}
	return placement.Decision{Seed: "fuzz-seed", Tied: []string{"fuzz-seed"}, Total: 1}, nil
}

// FuzzShootMutator: run with e.g. -fuzz=FuzzShootMutator -fuzztime=60s
// -fuzzminimizetime=5s; the seeds are kept small because minimizing a large
// input eats the whole default minimization budget (60s) without fuzzing.
func FuzzShootMutator(f *testing.F) {
	const shoot = `{"apiVersion":"core.gardener.cloud/v1beta1","kind":"Shoot","metadata":{"name":"a","annotations":{"a":"b"}},"spec":{"region":"eu"}}`
	f.Add([]byte(shoot), []byte(`{"request":{"uid":"u","kind":{"group":"core.gardener.cloud","version":"v1beta1","kind":"Shoot"},`+
		`"resource":{"group":"core.gardener.cloud","version":"v1beta1","resource":"shoots"},"operation":"CREATE","object":`+shoot+`}}`))
	f.Add([]byte(`{"metadata":{"Annotations":{}},"spec":null}`), []byte(`{"request":{"object":{"kind":"Shoot"},"dryRun":true}}`))
	f.Add([]byte(`{"spec":{"region":"eu-x","seedName":""},"metadata":{"name":"n\u0007"}}`), []byte(`{"request":{"object":{}}}`))
	f.Add([]byte(`null`), []byte(`{`))

	signer, err := placementtoken.NewSigner([][]byte{[]byte("0123456789abcdef0123456789abcdef")}, time.Minute, nil)
	if err != nil {
		f.Fatal(err)
	}
	m := &ShootMutator{Placer: fuzzPlacer{}, Options: placement.Options{Strategy: placement.SameRegion}, Signer: signer}
	wh := (&webhook.Admission{Handler: m}).WithRecoverPanic(false)

	f.Fuzz(func(t *testing.T, object, body []byte) {
		// The object straight into the handler: any bytes.
		for _, dryRun := range []bool{false, true} {
			req := webhook.AdmissionRequest{AdmissionRequest: admissionv1.AdmissionRequest{
				UID:       testUID,
				Kind:      metaGVK("core.gardener.cloud", "v1beta1", "Shoot"),
				Resource:  metaGVR("core.gardener.cloud", "v1beta1", "shoots"),
				Operation: admissionv1.Create,
				DryRun:    &dryRun,
			}}
			req.Object.Raw = object
			checkResponse(t, object, wh.Handle(t.Context(), req).AdmissionResponse)
		}

		// The object inside a real review, when it can be embedded.
		if json.Valid(object) {
			_, ar := serveFuzz(t, wh, review{object: string(object)}.body())
			if ar.Response != nil && !bytes.Equal(bytes.TrimSpace(object), []byte("null")) {
				checkResponse(t, object, *ar.Response)
			}
		}

		// Arbitrary bytes as the whole body.
		serveFuzz(t, wh, string(body))
	})
}

func serveFuzz(t *testing.T, wh *webhook.Admission, body string) (*http.Response, admissionv1.AdmissionReview) {
	req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/mutate-shoots", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	wh.ServeHTTP(rec, req)
	var ar admissionv1.AdmissionReview
	if rec.Code != http.StatusOK {
		return rec.Result(), ar // an HTTP error is an acceptable answer
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &ar); err != nil || ar.Response == nil {
		t.Fatalf("not an AdmissionReview response (%v): %s", err, rec.Body.String())
	}
	if !ar.Response.Allowed && (ar.Response.Result == nil || ar.Response.Result.Message == "") {
		t.Fatalf("rejection without a message: %s", rec.Body.String())
	}
	return rec.Result(), ar
}

// checkResponse asserts the invariants of any answer for object: errors say
// why; a patch applies to the object and places it; warnings survive the
// API server.
func checkResponse(t *testing.T, object []byte, resp admissionv1.AdmissionResponse) {
	t.Helper()
	for _, w := range resp.Warnings {
		assertValidWarning(t, w)
	}
	if !resp.Allowed {
		if resp.Result == nil || resp.Result.Message == "" || resp.Result.Code < 400 {
			t.Fatalf("rejection without code and message: %+v", resp.Result)
		}
		return
	}
	if len(resp.Patch) == 0 {
		return
	}
	p, err := jsonpatch.DecodePatch(resp.Patch)
	if err != nil {
		t.Fatalf("invalid patch %s: %v", resp.Patch, err)
	}
	patched, err := p.Apply(object)
	if err != nil {
		t.Fatalf("patch %s does not apply to %q: %v", resp.Patch, object, err)
	}
	// Exact keys, as the API server's decoding of the patched object uses.
	var got map[string]any
	if err := json.Unmarshal(patched, &got); err != nil {
		t.Fatalf("patched object %q: %v", patched, err)
	}
	places := bytes.Contains(resp.Patch, []byte(`"path":"/spec`))
	if spec, _ := got["spec"].(map[string]any); places && spec["seedName"] != "fuzz-seed" {
		t.Fatalf("patched object has no seedName: %s", patched)
	}
	// A placement token survives only where the webhook placed the Shoot
	// (and then it is the webhook's own).
	meta, _ := got["metadata"].(map[string]any)
	annotations, _ := meta["annotations"].(map[string]any)
	if token, ok := annotations[placementtoken.Annotation]; ok && (!places || !bytes.Contains(resp.Patch, []byte(fmt.Sprint(token)))) {
		t.Fatalf("placement annotation %v survives a patch that did not write it: %s", token, resp.Patch)
	}
}
