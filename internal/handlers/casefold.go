package handlers

import (
	"encoding/json"
	"fmt"
	"reflect"
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
// values and a slice's elements are walked. Values that are not what t
// expects are left to the typed decode to report.
func caseVariant(raw json.RawMessage, t reflect.Type) error {
	return walkCase(raw, t, "")
}

func walkCase(raw json.RawMessage, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil // decodes itself (times, quantities, raw extensions)
	}
	switch t.Kind() {
	case reflect.Struct:
		return walkStructCase(raw, t, path)
	case reflect.Slice, reflect.Array:
		if !needsWalk(t.Elem()) {
			return nil
		}
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			return nil
		}
		for i, item := range items {
			if err := walkCase(item, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Map:
		if !needsWalk(t.Elem()) {
			return nil
		}
		var members map[string]json.RawMessage
		if json.Unmarshal(raw, &members) != nil {
			return nil
		}
		for k, v := range members {
			if err := walkCase(v, t.Elem(), join(path, k)); err != nil {
				return err
			}
		}
	}
	return nil
}

func walkStructCase(raw json.RawMessage, t reflect.Type, path string) error {
	var members map[string]json.RawMessage
	if json.Unmarshal(raw, &members) != nil {
		return nil
	}
	fields := jsonFieldsOf(t)
	for key, value := range members {
		if ft, ok := fields.exact[key]; ok {
			if err := walkCase(value, ft, join(path, key)); err != nil {
				return err
			}
			continue
		}
		if want, ok := fields.folded[fold(key)]; ok {
			return &caseVariantError{key: join(path, key), field: join(path, want)}
		}
	}
	return nil
}

// caseVariantError is an object refused for a key that differs from a
// field's only in case.
type caseVariantError struct{ key, field string }

func (e *caseVariantError) Error() string {
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

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
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
