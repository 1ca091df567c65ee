package admissionjson

// A minimal JSON scanner (DecodeShootReview, ReviewType, caseVariant): it
// walks bytes that a decoder has already accepted to find
// keys and value boundaries, without decoding values. FuzzWalker holds it
// to encoding/json on the same bytes.

import "bytes"

// startsJSONObject: the first byte after JSON whitespace is "{".
func startsJSONObject(b []byte) bool {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\n', '\r':
		case '{':
			return true
		default:
			return false
		}
	}
	return false
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// asciiEqualFold is strings.EqualFold for ASCII b.
func asciiEqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		x, y := b[i], s[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// walker steps through JSON that a decoder has already accepted: it
// checks only what it needs to find its way, and reports false on anything
// unexpected (which callers treat as "cannot tell").
type walker struct {
	b []byte
	i int
}

func (w *walker) ws() {
	for w.i < len(w.b) {
		switch w.b[w.i] {
		case ' ', '\t', '\n', '\r':
			w.i++
		default:
			return
		}
	}
}

// peek is the next byte after whitespace (0 at the end).
func (w *walker) peek() byte {
	w.ws()
	if w.i < len(w.b) {
		return w.b[w.i]
	}
	return 0
}

// str steps over the string at w.i (a '"') and returns its raw contents and
// whether they hold an escape. Strings in a Shoot are short, and for those a
// plain loop beats searching; past shortStr bytes (a ConfigMap's data at the
// size webhook) it searches, which is an order of magnitude faster there.
func (w *walker) str() (s []byte, escaped, ok bool) {
	start := w.i + 1
	j := start
	for ; j < len(w.b) && j < start+shortStr; j++ {
		switch w.b[j] {
		case '"':
			w.i = j + 1
			return w.b[start:j], escaped, true
		case '\\':
			escaped = true
			j++
		}
	}
	for j < len(w.b) {
		q := bytes.IndexByte(w.b[j:], '"')
		if q < 0 {
			break
		}
		if e := bytes.IndexByte(w.b[j:j+q], '\\'); e >= 0 {
			escaped = true
			j += e + 2 // past the escaped byte, which may be a '"'
			continue
		}
		w.i = j + q + 1
		return w.b[start : j+q], escaped, true
	}
	return nil, false, false
}

// shortStr is how far str scans byte by byte before it searches.
const shortStr = 32

// structural marks the bytes skip looks at inside objects and arrays.
var structural = [256]bool{'"': true, '{': true, '}': true, '[': true, ']': true}

// skip steps over one value.
func (w *walker) skip() bool {
	switch w.peek() {
	case 0:
		return false
	case '"':
		_, _, ok := w.str()
		return ok
	case '{', '[':
		depth := 0
		for w.i < len(w.b) {
			if !structural[w.b[w.i]] {
				w.i++
				continue
			}
			switch w.b[w.i] {
			case '"':
				if _, _, ok := w.str(); !ok {
					return false
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					w.i++
					return true
				}
			}
			w.i++
		}
		return false
	default: // number, true, false, null
		for w.i < len(w.b) {
			switch w.b[w.i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return true
			}
			w.i++
		}
		return true
	}
}

// object steps through the object at w.i, calling member for each member
// with w.i at its value, which member must step over.
func (w *walker) object(member func(key []byte, escaped bool) bool) bool {
	if w.peek() != '{' {
		return false
	}
	w.i++
	if w.peek() == '}' {
		w.i++
		return true
	}
	for {
		if w.peek() != '"' {
			return false
		}
		key, escaped, ok := w.str()
		if !ok || w.peek() != ':' {
			return false
		}
		w.i++
		w.ws()
		if !member(key, escaped) {
			return false
		}
		switch w.peek() {
		case ',':
			w.i++
		case '}':
			w.i++
			return true
		default:
			return false
		}
	}
}
