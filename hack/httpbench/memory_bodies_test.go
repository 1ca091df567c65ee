package main

import (
	"encoding/json"
	goruntime "runtime"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"

	"github.com/seedwarden/seedwarden/internal/admissionjson"
	"github.com/seedwarden/seedwarden/internal/objsize"
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

// BenchmarkDecodeMaxSizeReview: what each decoder on the webhook paths
// allocates for a maximum-size review of each shape, in bytes and as a
// multiple of the body ("x-body"): the amplification the default of
// server.maxRequestBytesInFlight accounts for.
func BenchmarkDecodeMaxSizeReview(b *testing.B) {
	scheme := runtime.NewScheme()
	if err := admissionv1.AddToScheme(scheme); err != nil {
		b.Fatal(err)
	}
	deserializer := serializer.NewCodecFactory(scheme).UniversalDeserializer()
	for _, shape := range bodyShapes {
		body, err := maxSizeReview(shape, 3145000)
		if err != nil {
			b.Fatal(err)
		}
		var rv admissionv1.AdmissionReview
		if err := json.Unmarshal(body, &rv); err != nil {
			b.Fatal(err)
		}
		object := rv.Request.Object.Raw
		decoders := []struct {
			name   string
			decode func() error
		}{
			{"mutating", func() error { _, err := admissionjson.DecodeShootReview(body); return err }},
			{"controller-runtime", func() error {
				var ar admissionv1.AdmissionReview
				_, _, err := deserializer.Decode(body, nil, &ar)
				return err
			}},
			{"DecodeShoot", func() error { _, err := admissionjson.DecodeShoot(object); return err }},
			{"objsize", func() error { _, err := objsize.Measure(object); return err }},
		}
		for _, d := range decoders {
			b.Run(shape.name+"/"+d.name, func(b *testing.B) {
				var before, after goruntime.MemStats
				goruntime.ReadMemStats(&before)
				for b.Loop() {
					if err := d.decode(); err != nil {
						b.Fatal(err)
					}
				}
				goruntime.ReadMemStats(&after)
				b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/float64(len(body)), "x-body")
			})
		}
	}
}
