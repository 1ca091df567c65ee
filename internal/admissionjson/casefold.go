package admissionjson

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
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
// accepted; it is walked once (prune.go), never decoded.
func caseVariant(raw []byte, t reflect.Type) error {
	_, err := prune(raw, t, true)
	return err
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
	index  map[string][]int
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
	f := &structFields{exact: map[string]reflect.Type{}, index: map[string][]int{}, folded: map[string]string{}}
	collectFields(t, nil, f)
	fieldsCache.Store(t, f)
	return f
}

// collectFields adds t's fields, those of embedded structs without a JSON
// name (inline, as ObjectMeta's TypeMeta) as its own unless t has a field
// of the name itself (Go's rule: the shallower field wins).
func collectFields(t reflect.Type, index []int, f *structFields) {
	var inline []reflect.StructField
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
				inline = append(inline, sf)
				continue
			}
		}
		if name == "" {
			name = sf.Name
		}
		f.exact[name] = sf.Type
		f.index[name] = append(slices.Clip(index), i)
		f.folded[fold(name)] = name
	}
	for _, sf := range inline {
		sub := &structFields{exact: map[string]reflect.Type{}, index: map[string][]int{}, folded: map[string]string{}}
		et := sf.Type
		for et.Kind() == reflect.Pointer {
			et = et.Elem()
		}
		collectFields(et, append(slices.Clip(index), sf.Index...), sub)
		for name, ft := range sub.exact {
			if _, ok := f.exact[name]; !ok {
				f.exact[name], f.index[name], f.folded[fold(name)] = ft, sub.index[name], name
			}
		}
	}
}
