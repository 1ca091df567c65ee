package handlers

import (
	"testing"

	"github.com/stretchr/testify/assert"
	admissionv1 "k8s.io/api/admission/v1"
)

// A PUT to shoots/binding (options UpdateOptions) reaches admission only after
// the API server authorized update on shoots/binding for its user: the
// binding webhook asks no SubjectAccessReview then. A PATCH to the binding
// (PatchOptions) was authorized for patch, not update, and a seed set on
// CREATE for create: both are still asked. Only the review is spared; the
// seed's rules are checked as ever.
func TestBindingAuthorizedByTheAPIServerAsksNoSubjectAccessReview(t *testing.T) {
	const (
		update = `{"kind":"UpdateOptions","apiVersion":"meta.k8s.io/v1"}`
		patch  = `{"kind":"PatchOptions","apiVersion":"meta.k8s.io/v1","fieldManager":"kubectl-patch"}`
		create = `{"kind":"CreateOptions","apiVersion":"meta.k8s.io/v1"}`
	)
	withOptions := func(r vReview, options string) vReview { r.options = options; return r }
	tests := []struct {
		name      string
		review    vReview
		allowed   bool
		wantCalls int32
		message   string
	}{
		{name: "PUT to shoots/binding", review: withOptions(reviewBinding("", "aws-eu1"), update), allowed: true},
		{name: "PUT to shoots/binding onto a seed whose taints the Shoot does not tolerate",
			review: withOptions(reviewBinding("", "tainted"), update), message: "taints"},
		{name: "PATCH to shoots/binding", review: withOptions(reviewBinding("", "aws-eu1"), patch), wantCalls: 1,
			message: "needs permission to update shoots/binding"},
		{name: "shoots/binding without options", review: reviewBinding("", "aws-eu1"), wantCalls: 1,
			message: "needs permission to update shoots/binding"},
		{name: "CREATE naming a seed", review: withOptions(reviewCreate("aws-eu1", nil), create), wantCalls: 1,
			message: "needs permission to update shoots/binding"},
		{name: "UpdateOptions on the shoots resource itself",
			review:  withOptions(vReview{operation: admissionv1.Update, object: vShoot("aws-eu1", nil), oldObject: vShoot("", nil)}, update),
			message: "use the shoots/binding subresource"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newBindingFixture(t) // vUser holds no binding permission
			resp := vServe(t, f.v, tc.review.body(t))
			assert.Equal(t, tc.allowed, resp.Allowed, vMessage(resp))
			assert.Contains(t, vMessage(resp), tc.message)
			assert.Equal(t, tc.wantCalls, f.auth.calls.Load(), "SubjectAccessReviews asked")
		})
	}
}
