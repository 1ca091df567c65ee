package admissionjson

// What DecodeShootReview must know of a review before it may read it
// itself: where the object is, and whether decoding could read it
// differently from controller-runtime (then the request goes the plain
// way).

// reviewShape is what inspectReview finds in a review.
type reviewShape struct {
	// object is request.object's JSON (nil when absent or not an object).
	object []byte
	// ambiguous: see inspectObject.
	ambiguous bool
}

// inspectReview walks the keys of a review the decoder has accepted, and
// reports false where the decoded review could differ from controller-
// runtime's decoding of it:
//   - a top-level key that is a case variant of apiVersion or kind, or could
//     be one (non-ASCII, escaped): controller-runtime reads those two with
//     encoding/json, which matches keys case-insensitively;
//   - a second request, or a request key that is or could be (escaped) a
//     second object: runtime.RawExtension keeps the last object, decoding
//     into a struct merges them.
//
// It also finds the object's JSON and whether it is ambiguous. Only the keys
// of the review, the request, the object and its metadata are looked at;
// other values are skipped, not decoded.
func inspectReview(body []byte) (shape reviewShape, ok bool) {
	w := walker{b: body}
	requests := 0
	ok = w.object(func(key []byte, escaped bool) bool {
		if escaped || !isASCII(key) {
			return false
		}
		switch string(key) {
		case "request":
			requests++
			if requests > 1 {
				return false
			}
			if w.peek() != '{' {
				return w.skip()
			}
			objects := 0
			return w.object(func(key []byte, escaped bool) bool {
				if escaped {
					return false
				}
				if string(key) != "object" {
					return w.skip()
				}
				objects++
				if objects > 1 {
					return false
				}
				if w.peek() != '{' {
					return w.skip()
				}
				start := w.i
				ambiguous, ok := w.shootObject()
				shape.object, shape.ambiguous = body[start:w.i], ambiguous
				return ok
			})
		case "apiVersion", "kind":
			return w.skip()
		}
		if asciiEqualFold(key, "apiVersion") || asciiEqualFold(key, "kind") {
			return false
		}
		return w.skip()
	})
	return shape, ok
}

// inspectObject reports whether the Shoot object raw (valid JSON) is
// ambiguous: a duplicate metadata, spec or metadata.annotations key, or a
// key with an escape in the object or its metadata (it could unescape to
// one of those). Decoding merges duplicates where a JSON patch sees the last
// one, so for those the patch shape is computed from raw (lastWinsShape).
func inspectObject(raw []byte) bool {
	w := walker{b: raw}
	ambiguous, ok := w.shootObject()
	return ambiguous || !ok
}

// shootObject steps through a Shoot object and reports whether it is
// ambiguous (inspectObject).
func (w *walker) shootObject() (ambiguous, ok bool) {
	metadata, spec := 0, 0
	ok = w.object(func(key []byte, escaped bool) bool {
		switch {
		case escaped:
			ambiguous = true
		case string(key) == "spec":
			spec++
		case string(key) == "metadata":
			metadata++
			if w.peek() == '{' {
				annotations := 0
				ok := w.object(func(key []byte, escaped bool) bool {
					if escaped {
						ambiguous = true
					} else if string(key) == "annotations" {
						annotations++
					}
					return w.skip()
				})
				if annotations > 1 {
					ambiguous = true
				}
				return ok
			}
		}
		return w.skip()
	})
	if metadata > 1 || spec > 1 {
		ambiguous = true
	}
	return ambiguous, ok
}
