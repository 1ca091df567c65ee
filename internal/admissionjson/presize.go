package admissionjson

import "reflect"

// presize walks JSON a decoder has accepted (a pruned object) alongside v,
// the value it will be decoded into, and gives every slice and map the
// decoding will fill its final size (a slice its length, so that the
// elements' own slices are sized too), and every pointer to a struct the
// JSON holds an object for its struct. The decoder then fills them in place:
// it decodes into a slice's elements from the first and cuts it to the
// elements decoded, into a non-nil map or pointee as into a new one, and
// sets a pointer, slice or map to nil for a JSON null. What presize cannot
// tell (another type than v's) it leaves to the decoder.
//
// An object with a duplicate member of a field stops it (false): the decoder
// would decode the elements of both into one slice, where sizes taken from
// one could be left over in the other. The caller then zeroes v and decodes
// without sizes.
func presize(w *walker, v reflect.Value) bool {
	for v.Kind() == reflect.Pointer {
		if c := w.peek(); (c != '{' && c != '[') || selfDecoding(v.Type()) {
			return w.skip()
		}
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		v = v.Elem()
	}
	if selfDecoding(v.Type()) {
		return w.skip()
	}
	switch {
	case w.peek() == '{' && v.Kind() == reflect.Struct:
		return presizeStruct(w, v)
	case w.peek() == '{' && v.Kind() == reflect.Map:
		n, ok := count(*w, '{')
		if !ok {
			return false
		}
		if v.IsNil() {
			v.Set(reflect.MakeMapWithSize(v.Type(), n))
		}
		return w.skip()
	case w.peek() == '[' && v.Kind() == reflect.Slice && v.Type().Elem().Kind() != reflect.Uint8:
		return presizeSlice(w, v)
	}
	return w.skip()
}

// presizeStruct presizes the members of struct v that the object at w
// holds; a repeated or escaped key gives up (false), as the caller's
// decode then decides.
func presizeStruct(w *walker, v reflect.Value) bool {
	fields := jsonFieldsOf(v.Type())
	var seen [32][]byte
	n := 0
	return w.object(func(key []byte, escaped bool) bool {
		if escaped {
			return false // could unescape to any field's key
		}
		index, ok := fields.index[string(key)]
		if !ok {
			return w.skip()
		}
		for _, k := range seen[:n] {
			if string(k) == string(key) {
				return false
			}
		}
		if n == len(seen) {
			return false
		}
		seen[n], n = key, n+1
		f, err := v.FieldByIndexErr(index)
		if err != nil || !f.CanSet() {
			return w.skip()
		}
		return presize(w, f)
	})
}

// presizeSlice grows slice v to the length of the array at w, then
// presizes its elements where they hold slices or maps of their own.
func presizeSlice(w *walker, v reflect.Value) bool {
	n, ok := count(*w, '[')
	if !ok {
		return false
	}
	if v.Len() < n {
		grown := reflect.MakeSlice(v.Type(), n, n)
		reflect.Copy(grown, v)
		v.Set(grown)
	}
	if !needsWalk(v.Type().Elem()) && v.Type().Elem().Kind() != reflect.Pointer {
		return w.skip()
	}
	w.i++ // '['
	for i := 0; ; i++ {
		if w.peek() == ']' {
			w.i++
			return true
		}
		if i > 0 {
			if w.peek() != ',' {
				return false
			}
			w.i++
		}
		if i >= v.Len() || !presize(w, v.Index(i)) {
			return false
		}
	}
}

// selfDecoding: values of t decode themselves (times, quantities, a
// RawExtension).
func selfDecoding(t reflect.Type) bool {
	return t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType)
}

// count is how many members or elements the object or array at w holds
// (open is its first byte); w is a copy, not moved.
func count(w walker, open byte) (int, bool) {
	if w.peek() != open {
		return 0, false
	}
	n := 0
	if open == '{' {
		ok := w.object(func([]byte, bool) bool { n++; return w.skip() })
		return n, ok
	}
	w.i++
	if w.peek() == ']' {
		return 0, true
	}
	for {
		if !w.skip() {
			return 0, false
		}
		n++
		switch w.peek() {
		case ',':
			w.i++
		case ']':
			return n, true
		default:
			return 0, false
		}
	}
}
