package handlers

import (
	"context"
	"testing"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// BenchmarkShootBindingValidator measures the binding webhook's decision on
// the three paths a real request takes: a binder choosing a seed on CREATE
// (permission, then the seed's rules), a move through shoots/binding (also
// the rescheduling rules) and an UPDATE that keeps the seed (the kept-seed
// rules). Requests are decoded from their raw objects, as served.
func BenchmarkShootBindingValidator(b *testing.B) {
	cases := []struct {
		name   string
		review vReview
	}{
		{"create with seed", asUser(reviewCreate("aws-eu1", nil), binderUser)},
		{"move by binding", asUser(reviewBinding("aws-eu1", "aws-eu2"), binderUser)},
		{"update keeping seed", vReview{operation: admissionv1.Update, object: vShoot("aws-eu1", map[string]string{"a": "b"}), oldObject: vShoot("aws-eu1", nil)}},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			clock := newVClock()
			v := &ShootBindingValidator{
				Landscape:  vStore(bindingLandscape()...),
				Authorizer: &fakeAuthorizer{allowed: map[string]bool{vBinder: true}},
				Signer:     vSigner(b, clock),
				Log:        logr.Discard(),
			}
			req := admission.Request{AdmissionRequest: tc.review.request()}
			require.True(b, v.Handle(context.Background(), req).Allowed, "the benchmark measures an allowed request")
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				v.Handle(context.Background(), req)
			}
		})
	}
}
