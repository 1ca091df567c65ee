package admissionjson

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	kjson "sigs.k8s.io/json"

	"github.com/seedwarden/seedwarden/internal/api"
)

// reviewBody is a v1 AdmissionReview of a Shoot request.
func reviewBody(operation, object string) []byte {
	return []byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u1",` +
		`"kind":{"group":"core.gardener.cloud","version":"v1beta1","kind":"Shoot"},` +
		`"resource":{"group":"core.gardener.cloud","version":"v1beta1","resource":"shoots"},` +
		`"name":"n","namespace":"garden-dev","operation":"` + operation + `","userInfo":{"username":"jane"},` +
		`"object":` + object + `,"oldObject":{"any":"thing"},"dryRun":true,"options":{}}}`)
}

// crRequest is the request as controller-runtime's webhook.Admission
// decodes it.
func crRequest(t *testing.T, body []byte) admissionv1.AdmissionRequest {
	t.Helper()
	var ar admissionv1.AdmissionReview
	require.NoError(t, kjson.UnmarshalCaseSensitivePreserveInts(body, &ar))
	require.NotNil(t, ar.Request)
	return *ar.Request
}

// The two entries read a request alike: the request without its objects,
// and for a CREATE only the Shoot, its shape and the error of an object the
// webhook cannot judge.
func TestShootReviewEntriesAgree(t *testing.T) {
	tests := []struct {
		name, operation, object string
		wantShoot               bool
		wantErr                 string
		wantShape               PatchShape
		wantToken               bool
	}{
		{name: "create", operation: "CREATE", object: `{"kind":"Shoot","metadata":{"name":"n","annotations":{"seedwarden.io/placement":"t"}},"spec":{"region":"eu"}}`,
			wantShoot: true, wantShape: PatchShape{HasSpec: true, HasMetadata: true, HasAnnotations: true}, wantToken: true},
		{name: "create without metadata and spec", operation: "CREATE", object: `{"kind":"Shoot"}`, wantShoot: true},
		{name: "create, ambiguous: the last metadata counts for the patch", operation: "CREATE",
			object:    `{"metadata":{"annotations":{"seedwarden.io/placement":"t"}},"metadata":{"name":"n"},"spec":{},"spec":null}`,
			wantShoot: true, wantShape: PatchShape{HasMetadata: true}},
		{name: "create of null", operation: "CREATE", object: `null`, wantErr: "carries no object"},
		{name: "create of another kind", operation: "CREATE", object: `{"kind":"Seed"}`, wantErr: `object has kind "Seed"`},
		{name: "connect: the object is not read", operation: "CONNECT", object: `{"kind":"Seed"}`},
		{name: "delete without object", operation: "DELETE", object: `null`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := reviewBody(tc.operation, tc.object)
			rv, err := DecodeShootReview(body)
			require.NoError(t, err)
			assert.Equal(t, AdmissionReviewV1, rv.Type)
			slow := DecodeShootRequest(crRequest(t, body))
			for name, r := range map[string]*ShootRequest{"from the body": &rv.ShootRequest, "from controller-runtime": slow} {
				assert.Equal(t, "u1", string(r.Request.UID), name)
				assert.Equal(t, admissionv1.Operation(tc.operation), r.Request.Operation, name)
				assert.Equal(t, "jane", r.Request.UserInfo.Username, name)
				assert.True(t, ptr.Deref(r.Request.DryRun, false), name)
				assert.Equal(t, runtime.RawExtension{}, r.Request.Object, name)
				assert.Equal(t, runtime.RawExtension{}, r.Request.OldObject, name)
				assert.Equal(t, runtime.RawExtension{}, r.Request.Options, name)
				if tc.wantErr != "" {
					assert.ErrorContains(t, r.ObjectErr, tc.wantErr, name)
				} else {
					assert.NoError(t, r.ObjectErr, name)
				}
				assert.Equal(t, tc.wantShoot, r.Shoot != nil, name)
				if r.Shoot != nil {
					assert.Equal(t, "garden-dev", r.Shoot.Namespace, "%s: the request's namespace", name)
				}
				assert.Equal(t, tc.wantToken, r.Shape.HasAnnotation("seedwarden.io/placement"), name)
				r.Shape.annotations = nil
				assert.Equal(t, tc.wantShape, r.Shape, name)
			}
			assert.Equal(t, slow.Shoot, rv.Shoot)
		})
	}
}

// A request controller-runtime decoded is not read beyond the request
// unless it is a CREATE or an UPDATE: an object that does not decode is no
// error then.
func TestDecodeShootRequestReadsTheObjectOfACreateOrUpdateOnly(t *testing.T) {
	req := admissionv1.AdmissionRequest{Operation: admissionv1.Delete, Object: runtime.RawExtension{Raw: []byte(`[1]`)}}
	r := DecodeShootRequest(req)
	assert.NoError(t, r.ObjectErr)
	assert.Nil(t, r.Shoot)
	assert.Equal(t, []byte(`[1]`), req.Object.Raw, "the caller's request is left alone")

	for _, op := range []admissionv1.Operation{admissionv1.Create, admissionv1.Update} {
		req.Operation = op
		assert.ErrorContains(t, DecodeShootRequest(req).ObjectErr, "cannot decode object as a Shoot", op)
	}
}

// An UPDATE is judged by what it does to seedwarden's own annotations: the
// body's one pass skips the old object, so it is left to controller-runtime,
// whose request yields every own annotation added or changed.
func TestUpdateOwnAnnotationChanges(t *testing.T) {
	tests := []struct {
		name, object, oldObject string
		want                    []AnnotationChange
	}{
		{name: "added and changed; other annotations and removals are no change",
			object:    `{"metadata":{"annotations":{"seedwarden.io/reservation":"victim-uid","seedwarden.io/seed":"b","team":"x"}}}`,
			oldObject: `{"metadata":{"annotations":{"seedwarden.io/seed":"a","seedwarden.io/placement":"t","team":"y"}}}`,
			want: []AnnotationChange{
				{Key: "seedwarden.io/reservation"},
				{Key: "seedwarden.io/seed", Old: "a", Existed: true},
			}},
		{name: "unchanged", object: `{"metadata":{"annotations":{"seedwarden.io/seed":"a"}}}`,
			oldObject: `{"metadata":{"annotations":{"seedwarden.io/seed":"a"}}}`},
		{name: "no old object", object: `{"metadata":{"annotations":{"seedwarden.io/seed":"a"}}}`, oldObject: `null`,
			want: []AnnotationChange{{Key: "seedwarden.io/seed"}}},
		{name: "the retry controller's reasons are informational: written by update",
			object:    `{"metadata":{"annotations":{"seedwarden.io/unschedulable-reasons":"{\"step\":\"Candidates\"}"}}}`,
			oldObject: `{"metadata":{"annotations":{"seedwarden.io/unschedulable-reasons":"{}"}}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := []byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u1",` +
				`"kind":{"group":"core.gardener.cloud","version":"v1beta1","kind":"Shoot"},` +
				`"resource":{"group":"core.gardener.cloud","version":"v1beta1","resource":"shoots"},` +
				`"name":"n","namespace":"garden-dev","operation":"UPDATE","userInfo":{"username":"jane"},` +
				`"object":` + tc.object + `,"oldObject":` + tc.oldObject + `}}`)
			_, err := DecodeShootReview(body)
			require.ErrorIs(t, err, errNeedsOldObject)
			r := DecodeShootRequest(crRequest(t, body))
			require.NoError(t, r.ObjectErr)
			assert.Equal(t, tc.want, r.OwnChanges)
		})
	}
}

// DecodeShootReview fails where controller-runtime could read the body
// otherwise, and reads the review's type as it does where it does not.
func TestDecodeShootReview(t *testing.T) {
	create := string(reviewBody("CREATE", `{"kind":"Shoot"}`))
	tests := []struct {
		name, body string
		fails      bool
		wantType   schema.GroupVersionKind
	}{
		{name: "v1", body: create, wantType: AdmissionReviewV1},
		{name: "v1beta1", body: `{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","request":{}}`,
			wantType: schema.GroupVersionKind{Group: "admission.k8s.io", Version: "v1beta1", Kind: "AdmissionReview"}},
		{name: "no type", body: `{"request":{}}`},
		{name: "YAML", body: "apiVersion: admission.k8s.io/v1\nkind: AdmissionReview\n", fails: true},
		{name: "object undecodable", body: string(reviewBody("UPDATE", `[1]`)), fails: true},
		{name: "unparsable apiVersion", body: `{"apiVersion":"a/b/c","kind":"AdmissionReview","request":{}}`, fails: true},
		{name: "case variant of kind", body: `{"Kind":"AdmissionReview","request":{}}`, fails: true},
		{name: "object twice", body: `{"request":{"object":{},"object":null}}`, fails: true},
		{name: "trailing garbage", body: create + "x", fails: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rv, err := DecodeShootReview([]byte(tc.body))
			if tc.fails {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.wantType, rv.Type)
		})
	}
}

// The Shoot placement reads off the realistic review.
func TestDecodeShootReviewRealistic(t *testing.T) {
	body, err := os.ReadFile("testdata/review.json")
	require.NoError(t, err)
	rv, err := DecodeShootReview(body)
	require.NoError(t, err)
	require.NoError(t, rv.ObjectErr)
	assert.Equal(t, "crazy-botany", rv.Shoot.Name)
	assert.Equal(t, "eu-west-1", rv.Shoot.Spec.Region)
	assert.Len(t, rv.Shoot.Spec.Provider.Workers, 13)
	assert.Equal(t, DecodeShootRequest(crRequest(t, body)).Shoot, rv.Shoot)
	var want api.Shoot
	require.NoError(t, kjson.UnmarshalCaseSensitivePreserveInts(crRequest(t, body).Object.Raw, &want))
	assert.Equal(t, want.Spec, rv.Shoot.Spec, "a real Shoot's arrays hold no repeated elements")
	assert.NotEmpty(t, want.Annotations)
	assert.Empty(t, rv.Shoot.Annotations, "only seedwarden's own annotations are read; it has none")
}
