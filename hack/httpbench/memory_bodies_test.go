package main

import (
	"encoding/json"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"

	"github.com/seedwarden/seedwarden/internal/admissionjson"
)

// Every shape makes a v1 AdmissionReview of a Shoot just under the size
// asked for, which the placing webhook's decoder reads.
func TestMaxSizeReviews(t *testing.T) {
	const n = 3145000
	for _, shape := range bodyShapes {
		body, err := maxSizeReview(shape, n)
		if err != nil {
			t.Fatal(err)
		}
		if len(body) > n || len(body) < n*95/100 {
			t.Errorf("%s: %d bytes", shape.name, len(body))
		}
		var rv admissionv1.AdmissionReview
		if err := json.Unmarshal(body, &rv); err != nil || rv.Request == nil || rv.Request.Kind.Kind != "Shoot" {
			t.Errorf("%s: not a Shoot review: %v", shape.name, err)
		}
		if _, err := admissionjson.DecodeShootReview(body); err != nil {
			t.Errorf("%s: %v", shape.name, err)
		}
	}
}
