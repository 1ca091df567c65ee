package landscape

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	kjson "sigs.k8s.io/json"
)

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// locate finds the innermost field of t whose value in raw does not decode and
// returns its path (status.allocatable.shoots, spec.taints[0].key) and error.
// Only used after decoding failed, so its cost does not matter.
func locate(t reflect.Type, raw json.RawMessage) (string, error) {
	err := kjson.UnmarshalCaseSensitivePreserveInts(raw, reflect.New(t).Interface())
	if err == nil {
		return "", nil
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType) {
		return "", err // a leaf such as a Quantity or Time: its own error says it all
	}
	switch t.Kind() {
	case reflect.Struct:
		fields := jsonFields(t)
		return locateIn(raw, err, func(k string) (reflect.Type, bool) { ft, ok := fields[k]; return ft, ok }, dotted)
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return "", err
		}
		return locateIn(raw, err, func(string) (reflect.Type, bool) { return t.Elem(), true }, dotted)
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return "", err
		}
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			return "", err
		}
		for i, it := range items {
			if p, e := locate(t.Elem(), it); e != nil {
				return fmt.Sprintf("[%d]", i) + sep(p) + p, e
			}
		}
	}
	return "", err
}

// locateIn searches the members of a JSON object in key order.
func locateIn(raw json.RawMessage, err error, typeOf func(string) (reflect.Type, bool), join func(k, p string) string) (string, error) {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return "", err
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		ft, ok := typeOf(k)
		if !ok {
			continue
		}
		if p, e := locate(ft, m[k]); e != nil {
			return join(k, p), e
		}
	}
	return "", err
}

func dotted(k, p string) string { return k + sep(p) + p }

func sep(p string) string {
	if p == "" || p[0] == '[' {
		return ""
	}
	return "."
}

// jsonFields maps JSON member names to field types the way encoding/json
// does for our structs: tag names, and fields of untagged embedded structs
// promoted unless a shallower field has the name.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	var embedded []reflect.Type
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			et := f.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				embedded = append(embedded, et)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	for _, et := range embedded {
		for k, v := range jsonFields(et) {
			if _, ok := out[k]; !ok {
				out[k] = v
			}
		}
	}
	return out
}
