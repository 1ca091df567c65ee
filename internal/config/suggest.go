package config

import (
	"reflect"
	"strings"

	"github.com/agnivade/levenshtein"
)

// Suggestions for unknown fields: the known name nearest to a misspelt one,
// among the fields at the same level of the configuration.

// suggestField returns the known field name nearest to the last element of
// path (a strict decoding field path such as "scoring.scorers[0].wieght"),
// or "" when no name is near enough to be a likely typo.
func suggestField(path string) string {
	return SuggestField(reflect.TypeFor[Config](), path)
}

// SuggestField is suggestField for the JSON type root (a struct): the
// manifests internal/landscape reads get the same suggestions as the
// configuration.
func SuggestField(root reflect.Type, path string) string {
	segments := strings.Split(path, ".")
	unknown := segments[len(segments)-1]
	known := fieldNamesAt(root, segments[:len(segments)-1])
	return nearest(unknown, known)
}

// fieldNamesAt walks the JSON path of parents (list indexes and map keys
// included) down from t and returns the JSON names of the struct found
// there; nil when the path leads to no struct.
func fieldNamesAt(t reflect.Type, parents []string) []string {
	for _, seg := range parents {
		t = element(t)
		switch t.Kind() {
		case reflect.Struct:
			name, _, _ := strings.Cut(seg, "[")
			f, ok := fieldByJSONName(t, name)
			if !ok {
				return nil
			}
			t = f
		case reflect.Map:
			// The segment is a key (which the path cannot tell from a
			// field name if it contains a dot; then there is no
			// suggestion).
			t = t.Elem()
		default:
			return nil
		}
	}
	t = element(t)
	if t.Kind() != reflect.Struct {
		return nil
	}
	var names []string
	eachJSONField(t, func(name string, _ reflect.Type) bool {
		names = append(names, name)
		return true
	})
	return names
}

// element looks through pointers, slices and arrays: a path index or a
// nil pointer does not change which fields are known.
func element(t reflect.Type) reflect.Type {
	for {
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array:
			t = t.Elem()
		default:
			return t
		}
	}
}

func fieldByJSONName(t reflect.Type, name string) (reflect.Type, bool) {
	var found reflect.Type
	eachJSONField(t, func(n string, ft reflect.Type) bool {
		if n == name {
			found = ft
			return false
		}
		return true
	})
	return found, found != nil
}

// eachJSONField calls fn with the JSON name and type of every field that
// encoding/json decodes into t, embedded structs' fields included, until fn
// returns false. It reports whether fn never did.
func eachJSONField(t reflect.Type, fn func(name string, ft reflect.Type) bool) bool {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if name == "" && f.Anonymous {
			if et := element(f.Type); et.Kind() == reflect.Struct && f.Type.Kind() != reflect.Slice {
				if !eachJSONField(et, fn) {
					return false
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if !fn(name, f.Type) {
			return false
		}
	}
	return true
}

// nearest is the known name closest to unknown by edit distance (letter
// case ignored, so "Strategy" suggests "strategy"), if close enough to be a
// typo: at most 2 edits, or a third of the name for longer names, and never
// a rewrite of the whole name. Ties go to the name first in sort order.
func nearest(unknown string, known []string) string {
	limit := max(2, len(unknown)/3)
	best, bestD := "", -1
	u := strings.ToLower(unknown)
	for _, k := range known {
		d := levenshtein.ComputeDistance(u, strings.ToLower(k))
		if d > limit || d >= len(unknown) {
			continue
		}
		if bestD < 0 || d < bestD || (d == bestD && k < best) {
			best, bestD = k, d
		}
	}
	return best
}
