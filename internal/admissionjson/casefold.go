package admissionjson

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode"
)

// Kubernetes matches JSON keys to fields exactly; encoding/json (and many
// clients and tools) also accept a key that differs only in case. An object
// from a CRD that keeps unknown fields can carry both "seedName" and
// "SeedName", and every reader that matches case-insensitively then sees a
// different object than the API server stores. seedwarden decodes exactly
// (decode.go) and refuses such objects outright, so that no reader of the
// Shoot, ours or another admission plugin's, can be told apart from the
// API server's.

// caseVariant reports the first key in raw that names a field of t (a struct
// type with json tags) in another case than the field's own, at any depth
// of the fields t models: a map's keys are data and are not compared, its
// values and a slice's elements are walked. raw must be JSON a decoder has
// accepted; it is walked once, with the scanner of jsonscan.go,
// never decoded again.
func caseVariant(raw []byte, t reflect.Type) error {
	c := caseWalk{w: walker{b: raw}}
	if !c.value(t) && c.err == nil {
		// FuzzWalker holds the scanner to encoding/json, so this is a bug:
		// refuse rather than let the object through unchecked.
		return fmt.Errorf("seedwarden: cannot check the object's keys (offset %d)", c.w.i)
	}
	return c.err
}

// caseWalk steps through a value alongside its Go type. path holds the keys
// (and indexes) down to the value, joined only for an error.
type caseWalk struct {
	w    walker
	path []string
	err  error
	buf  [64]byte
}

// value steps over the value at the walker, checking it against t; false
// stops the walk (err set for a case variant).
func (c *caseWalk) value(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) || !needsWalk(t) {
		return c.w.skip() // decodes itself (times, quantities), or holds no fields
	}
	switch c.w.peek() {
	case '{':
		if t.Kind() == reflect.Struct {
			return c.structure(t)
		}
		if t.Kind() == reflect.Map {
			return c.mapValues(t.Elem())
		}
	case '[':
		if t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			return c.array(t.Elem())
		}
	}
	return c.w.skip() // another type than t: the typed decode judged it
}

func (c *caseWalk) structure(t reflect.Type) bool {
	fields := jsonFieldsOf(t)
	return c.w.object(func(rawKey []byte, escaped bool) bool {
		key, ok := c.key(rawKey, escaped)
		if !ok {
			return false
		}
		if ft, ok := fields.exact[string(key)]; ok {
			return c.descend(string(key), ft)
		}
		if want, ok := fields.folded[string(c.fold(key))]; ok {
			c.err = &CaseVariantError{key: c.join(string(key)), field: c.join(want)}
			return false
		}
		return c.w.skip()
	})
}

func (c *caseWalk) mapValues(elem reflect.Type) bool {
	return c.w.object(func(rawKey []byte, escaped bool) bool {
		key, ok := c.key(rawKey, escaped)
		return ok && c.descend(string(key), elem)
	})
}

func (c *caseWalk) array(elem reflect.Type) bool {
	w := &c.w
	w.i++ // '['
	if w.peek() == ']' {
		w.i++
		return true
	}
	for n := 0; ; n++ {
		if !c.descend("["+strconv.Itoa(n)+"]", elem) {
			return false
		}
		switch w.peek() {
		case ',':
			w.i++
		case ']':
			w.i++
			return true
		default:
			return false
		}
	}
}

func (c *caseWalk) descend(step string, t reflect.Type) bool {
	c.path = append(c.path, step)
	ok := c.value(t)
	c.path = c.path[:len(c.path)-1]
	return ok
}

// key is a member's key, unescaped.
func (c *caseWalk) key(raw []byte, escaped bool) ([]byte, bool) {
	if !escaped {
		return raw, true
	}
	var s string
	if json.Unmarshal(append(append([]byte{'"'}, raw...), '"'), &s) != nil {
		return nil, false
	}
	return []byte(s), true
}

// fold is fold(key) without allocating for short ASCII keys, whose folding
// orbit's smallest rune is the upper-case letter ('K' below the Kelvin sign,
// 'S' below the long s).
func (c *caseWalk) fold(key []byte) []byte {
	if len(key) > len(c.buf) || !isASCII(key) {
		return []byte(fold(string(key)))
	}
	out := c.buf[:len(key)]
	for i, b := range key {
		if 'a' <= b && b <= 'z' {
			b -= 'a' - 'A'
		}
		out[i] = b
	}
	return out
}

// join is the path of key below the current value, for messages.
func (c *caseWalk) join(key string) string {
	var b strings.Builder
	for _, p := range c.path {
		if b.Len() > 0 && !strings.HasPrefix(p, "[") {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	if b.Len() > 0 {
		b.WriteByte('.')
	}
	b.WriteString(key)
	return b.String()
}

// CaseVariantError is an object refused for a key that differs from a
// field's only in case.
type CaseVariantError struct{ key, field string }

func (e *CaseVariantError) Error() string {
	return fmt.Sprintf("seedwarden: object has key %q where Kubernetes reads only %q (keys are case-sensitive); "+
		"remove the variant: readers that ignore case would see another value than the API server stores", e.key, e.field)
}

// needsWalk reports whether values of t can hold struct fields.
func needsWalk(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		return true
	case reflect.Slice, reflect.Array, reflect.Map:
		return needsWalk(t.Elem())
	}
	return false
}

// structFields are a struct type's JSON field names: exact ones with their
// types, and each folded one (fold) with its exact spelling.
type structFields struct {
	exact  map[string]reflect.Type
	folded map[string]string
}

var (
	fieldsCache     sync.Map // reflect.Type -> *structFields
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
)

// fold maps every rune to the smallest rune of its case-folding orbit, so
// that two keys fold alike exactly when encoding/json would match them to
// the same field ("ſ" and "s", the Kelvin sign and "k" included).
func fold(s string) string {
	return strings.Map(func(r rune) rune {
		lowest := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			lowest = min(lowest, f)
		}
		return lowest
	}, s)
}

func jsonFieldsOf(t reflect.Type) *structFields {
	if f, ok := fieldsCache.Load(t); ok {
		return f.(*structFields)
	}
	f := &structFields{exact: map[string]reflect.Type{}, folded: map[string]string{}}
	collectFields(t, f)
	fieldsCache.Store(t, f)
	return f
}

// collectFields adds t's fields, those of embedded structs without a JSON
// name (inline, as ObjectMeta's TypeMeta) as its own.
func collectFields(t reflect.Type, f *structFields) {
	for i := range t.NumField() {
		sf := t.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "-" || (!sf.IsExported() && !sf.Anonymous) {
			continue
		}
		if name == "" && sf.Anonymous {
			et := sf.Type
			for et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				collectFields(et, f)
				continue
			}
		}
		if name == "" {
			name = sf.Name
		}
		f.exact[name] = sf.Type
		f.folded[fold(name)] = name
	}
}
