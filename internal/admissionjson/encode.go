package admissionjson

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var outBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// WriteReview writes the AdmissionReview answering with resp as
// controller-runtime's webhook.Admission does (its writeResponseTyped, or
// writeResponse when gvk is nil): the same encoding/json Encoder output in
// one Write.
func WriteReview(w io.Writer, resp *admissionv1.AdmissionResponse, gvk *schema.GroupVersionKind) error {
	ar := admissionv1.AdmissionReview{Response: resp}
	if gvk != nil {
		if *gvk == (schema.GroupVersionKind{}) {
			ar.SetGroupVersionKind(AdmissionReviewV1)
		} else {
			ar.SetGroupVersionKind(*gvk)
		}
	}
	buf := outBuffers.Get().(*bytes.Buffer)
	defer outBuffers.Put(buf)
	buf.Reset()
	if err := json.NewEncoder(buf).Encode(ar); err != nil {
		// Unreachable: an AdmissionReview always encodes.
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}
