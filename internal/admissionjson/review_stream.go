package admissionjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strconv"

	admissionv1 "k8s.io/api/admission/v1"
)

// MaxStreamedFields bounds what StreamReview keeps of a review: all of it
// but request.object, request.oldObject and request.options, which it
// measures or skips. What the API server sends there (uid, kinds,
// resources, names, operation, userInfo) is a few KiB; past this the review
// is reduced to its type and uid (StreamedReview.Truncated).
const MaxStreamedFields = 64 << 10

// maxStreamedMember bounds each member kept for a truncated review.
const maxStreamedMember = 1 << 10

// StreamedReview is an AdmissionReview read as it arrived (StreamReview):
// the review without its objects, and what the resource-size webhook reads
// of each object.
type StreamedReview struct {
	// Review is the AdmissionReview as sent, with each member of each
	// "request" kept that an admissionv1.AdmissionRequest decodes, except
	// options (skipped) and object and oldObject, whose values (unless
	// null) are replaced by a reference to their measurement (Object).
	// Decoding it as controller-runtime decodes the body it came from gives
	// the same review, duplicates and all: the members kept are the same
	// bytes in the same order. Top-level members are kept that the review's
	// type is read from (apiVersion and kind in any case, as
	// controller-runtime reads them) or that decode into the review
	// (request, response).
	Review []byte
	// Truncated: the members to keep exceeded MaxStreamedFields; Review is
	// then the type members and the last request.uid only (each kept if at
	// most 1 KiB), for a refusal that names the request.
	Truncated bool

	objects []*ObjectMeasure
}

// Object is the measurement raw refers to: raw is request.object or
// request.oldObject as decoded from Review.
func (r *StreamedReview) Object(raw []byte) (*ObjectMeasure, bool) {
	if len(raw) < 3 || raw[0] != '[' || raw[len(raw)-1] != ']' {
		return nil, false
	}
	i, err := strconv.Atoi(string(raw[1 : len(raw)-1]))
	if err != nil || i < 0 || i >= len(r.objects) {
		return nil, false
	}
	return r.objects[i], true
}

// ErrNotJSONObject: a body StreamReview cannot read, since it does not start
// with "{". (controller-runtime would try it as YAML; the API server sends
// JSON.)
var ErrNotJSONObject = errors.New("the AdmissionReview is not a JSON object")

// StreamReview reads an AdmissionReview from r, holding at most a 16 KiB
// buffer, the members it keeps (MaxStreamedFields) and the names of the
// objects: the objects themselves are measured as they pass
// (ObjectMeasure), never held. It reads the whole stream and checks that it
// is one JSON value, as encoding/json would; an error is a read error of r,
// a *SyntaxError, or ErrNotJSONObject.
func StreamReview(r io.Reader) (*StreamedReview, error) {
	s := newStreamReader(r, MaxStreamedFields)
	if s.peek() != '{' {
		if !s.fill() {
			return nil, s.fail("looking for beginning of value")
		}
		return nil, ErrNotJSONObject
	}
	rv := &StreamedReview{}
	var typeMembers [][]byte
	var uid []byte
	members := memberWriter{s: s}
	s.emitString("{")
	err := s.object(0, func(k *streamKey) error {
		switch {
		case k.is("request"):
			if s.peek() != '{' {
				return members.keep(k, 1, nil)
			}
			members.key(k)
			return rv.request(s, 1, &uid)
		case k.is("response"):
			return members.keep(k, 1, nil)
		case k.folds("apiVersion"), k.folds("kind"):
			return members.keep(k, 1, func(m []byte) { typeMembers = append(typeMembers, m) })
		}
		return s.skip(1)
	})
	if err == nil {
		err = s.end()
	}
	if err != nil {
		return nil, err
	}
	s.emitString("}")
	if s.over {
		rv.Truncated = true
		rv.Review = truncatedReview(typeMembers, uid)
	} else {
		rv.Review = s.out
	}
	return rv, nil
}

// request reduces one request object (its '{' next) into the output.
func (rv *StreamedReview) request(s *streamReader, depth int, uid *[]byte) error {
	members := memberWriter{s: s}
	s.emitString("{")
	err := s.object(depth, func(k *streamKey) error {
		switch {
		case k.is("object"), k.is("oldObject"):
			if s.peek() == 'n' { // null: RawExtension keeps what it had
				return members.keep(k, depth+1, nil)
			}
			m, err := s.measure(depth + 1)
			if err != nil {
				return err
			}
			members.key(k)
			s.emitString("[" + strconv.Itoa(len(rv.objects)) + "]")
			rv.objects = append(rv.objects, m)
			return nil
		case k.is("uid"):
			return members.keep(k, depth+1, func(m []byte) { *uid = m })
		case k.is("options"):
			return s.skip(depth + 1)
		case requestFields[k.unquoted()]:
			return members.keep(k, depth+1, nil)
		}
		return s.skip(depth + 1)
	})
	s.emitString("}")
	return err
}

// requestFields are the members an AdmissionRequest decodes that
// StreamReview keeps as they are.
var requestFields = func() map[string]bool {
	f := map[string]bool{}
	for name := range jsonFieldsOf(reflect.TypeFor[admissionv1.AdmissionRequest]()).exact {
		f[name] = true
	}
	delete(f, "object")
	delete(f, "oldObject")
	delete(f, "options")
	return f
}()

// memberWriter writes the members of one object of the output, commas
// between them.
type memberWriter struct {
	s *streamReader
	n int
}

// key writes the member's key and returns where the member starts.
func (w *memberWriter) key(k *streamKey) int {
	if w.n > 0 {
		w.s.emitString(",")
	}
	w.n++
	start := len(w.s.out)
	w.s.emitString(`"`)
	w.s.emit(k.raw)
	w.s.emitString(`":`)
	return start
}

// keep writes the member whose value is next, as sent, and gives a copy to
// kept (when not nil) if it fits in maxStreamedMember.
func (w *memberWriter) keep(k *streamKey, depth int, kept func([]byte)) error {
	start := w.key(k)
	err := w.s.keep(depth)
	if kept != nil && !w.s.over && len(w.s.out)-start <= maxStreamedMember {
		kept(bytes.Clone(w.s.out[start:]))
	}
	return err
}

// truncatedReview is a review of the type members and the uid member.
func truncatedReview(typeMembers [][]byte, uid []byte) []byte {
	out := []byte{'{'}
	for _, m := range typeMembers {
		out = append(append(out, m...), ',')
	}
	out = append(out, `"request":{`...)
	out = append(append(out, uid...), "}}"...)
	return out
}

// is reports whether the key reads as name, as a case-sensitive decoder
// matches it.
func (k *streamKey) is(name string) bool {
	if k.long {
		return false
	}
	if !k.escaped {
		return string(k.raw) == name
	}
	return k.unquoted() == name
}

// folds reports whether the key reads as name in some case, as
// encoding/json matches it.
func (k *streamKey) folds(name string) bool {
	if k.long {
		return false
	}
	if !k.escaped && isASCII(k.raw) {
		return asciiEqualFold(k.raw, name)
	}
	return fold(k.unquoted()) == fold(name)
}

// unquoted is the key's text ("" for a long one).
func (k *streamKey) unquoted() string {
	if k.long {
		return ""
	}
	if !k.escaped {
		return string(k.raw)
	}
	var s string
	if json.Unmarshal(append(append([]byte{'"'}, k.raw...), '"'), &s) != nil {
		return ""
	}
	return s
}
