package admissionjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"reflect"
	"strconv"
	"strings"

	"github.com/seedwarden/seedwarden/internal/api"
)

// Decoding only what is read. A request object can spend its bytes on
// members the webhooks never read (metadata.managedFields, ownerReferences,
// labels, unknown spec fields) or on repeating elements of those they do
// read (worker pools `{}`, zones `""`); decoded into Go values, each 3-byte
// element costs a 16- to 56-byte value, and a slice grown one element at a
// time allocates about five times its final size on the way. So an object
// is decoded in three steps, each over JSON a decoder has already accepted:
//
//  1. prune copies the object keeping only the members decoding into its Go
//     type reads (keys exactly a field's, as the API server matches them;
//     a key differing from a field's only in case is refused, or for a
//     stored object dropped as the API server drops it), of annotations
//     only seedwarden's own, and of every array read only the first of
//     elements that are the same after pruning: each array the webhooks
//     read is read as a set (zones, worker pools by their zones and
//     controlPlane, tolerations, selector requirements, provider types,
//     access restrictions, CIDRs, IP families);
//  2. presize allocates every slice and map the decoding will fill at its
//     final size;
//  3. the decoder (unmarshal) reads the pruned copy as it would have read
//     the object: duplicate members are all kept, in order, so the last
//     still wins.

// prune copies raw (a JSON value a decoder has accepted) keeping what
// decoding into t reads. refuse makes a case variant of a field's key a
// *CaseVariantError.
func prune(raw []byte, t reflect.Type, refuse bool) ([]byte, error) {
	p := pruner{w: walker{b: raw}, refuse: refuse, out: make([]byte, 0, min(len(raw), 4<<10))}
	if !p.value(t) {
		if p.err != nil {
			return nil, p.err
		}
		// FuzzWalker holds the scanner to encoding/json, so this is a bug:
		// refuse rather than read the object unchecked.
		return nil, fmt.Errorf("seedwarden: cannot check the object's keys (offset %d)", p.w.i)
	}
	return p.out, nil
}

// pruner steps through a value alongside its Go type, writing what is read
// to out. path holds the keys and indexes down to the value, joined only
// for an error.
type pruner struct {
	w      walker
	out    []byte
	refuse bool
	path   []pathStep
	err    error
	buf    [64]byte
}

// pathStep is a key (index < 0) or an index of an array.
type pathStep struct {
	key   []byte
	index int
}

var (
	ownAnnotationsType = reflect.TypeFor[ownAnnotations]()
	dedupSeed          = maphash.MakeSeed()
)

// ownAnnotations are metadata.annotations as the webhooks read them: only
// seedwarden's own (api.OwnAnnotationPrefix) are kept.
type ownAnnotations map[string]string

// emit appends b to out, at least doubling out's room when it grows (append
// grows a large slice by a quarter, which would copy a long object several
// times), never past the length of the input.
func (p *pruner) emit(b ...byte) {
	if len(p.out)+len(b) > cap(p.out) {
		grown := make([]byte, len(p.out), min(max(2*cap(p.out), len(p.out)+len(b)), max(len(p.w.b), len(p.out)+len(b))))
		copy(grown, p.out)
		p.out = grown
	}
	p.out = append(p.out, b...)
}

// copyValue steps over the value at the walker and writes it as it is.
func (p *pruner) copyValue() bool {
	start := p.w.i
	if !p.w.skip() {
		return false
	}
	p.emit(p.w.b[start:p.w.i]...)
	return true
}

// value steps over the value at the walker, writing what decoding into t
// reads; false stops the walk (err set for a case variant).
func (p *pruner) value(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return p.copyValue() // decodes itself (times, quantities)
	}
	switch p.w.peek() {
	case '{':
		switch {
		case t == ownAnnotationsType:
			return p.ownAnnotations()
		case t.Kind() == reflect.Struct:
			return p.structure(t)
		case t.Kind() == reflect.Map && needsWalk(t.Elem()):
			return p.mapValues(t.Elem())
		}
	case '[':
		if t.Kind() == reflect.Slice && (t.Elem().Kind() == reflect.String || needsWalk(t.Elem())) {
			return p.set(t.Elem())
		}
	}
	return p.copyValue() // a value without fields, or another type than t: the decoding judges it
}

// member writes a member's key (a map's: every member is kept, and the
// decoder lets the last of duplicates win); first is whether it is the
// object's first.
func (p *pruner) member(key []byte, escaped bool, first *bool) {
	if !*first {
		p.emit(',')
	}
	*first = false
	p.emitKey(key, escaped)
}

func (p *pruner) structure(t reflect.Type) bool {
	fields := jsonFieldsOf(t)
	// written: the members written so far, by key, where in out (from the
	// key, after the comma).
	type member struct {
		key        []byte
		start, end int
	}
	var written [32]member
	n := 0
	p.emit('{')
	object := len(p.out)
	ok := p.w.object(func(rawKey []byte, escaped bool) bool {
		key, ok := p.key(rawKey, escaped)
		if !ok {
			return false
		}
		ft, ok := fields.exact[string(key)]
		if !ok {
			if p.refuse {
				if want, ok := fields.folded[string(p.fold(key))]; ok {
					p.err = &CaseVariantError{key: p.join(string(key)), field: p.join(want)}
					return false
				}
			}
			return p.w.skip()
		}
		// The last of duplicate members wins, as the API server reads
		// them: an earlier one is taken out.
		for i := range n {
			if bytes.Equal(written[i].key, key) {
				size := p.cut(object, written[i].start, written[i].end)
				for j := i + 1; j < n; j++ {
					written[j].start -= size
					written[j].end -= size
				}
				copy(written[i:], written[i+1:n])
				n--
				break
			}
		}
		if n == len(written) {
			return false // more fields than any type read has
		}
		if len(p.out) > object {
			p.emit(',')
		}
		start := len(p.out)
		p.emitKey(key, escaped)
		if !p.descend(pathStep{key: key, index: -1}, ft) {
			return false
		}
		written[n] = member{key, start, len(p.out)}
		n++
		return true
	})
	p.emit('}')
	return ok
}

// cut takes the member out[start:end] of the object whose members start at
// object out of out, with one comma, and returns how many bytes it took.
func (p *pruner) cut(object, start, end int) int {
	switch {
	case start > object:
		start-- // its leading comma
	case end < len(p.out):
		end++ // the first member: the next one's leading comma
	}
	p.out = append(p.out[:start], p.out[end:]...)
	return end - start
}

// emitKey writes a member's key: unescaped, so that what reads the pruned
// copy sees each key as it is.
func (p *pruner) emitKey(key []byte, escaped bool) {
	if escaped {
		quoted, _ := json.Marshal(string(key)) // a string always marshals
		p.emit(quoted...)
	} else {
		p.emit('"')
		p.emit(key...)
		p.emit('"')
	}
	p.emit(':')
}

func (p *pruner) mapValues(elem reflect.Type) bool {
	p.emit('{')
	first := true
	ok := p.w.object(func(rawKey []byte, escaped bool) bool {
		key, ok := p.key(rawKey, escaped)
		if !ok {
			return false
		}
		p.member(key, escaped, &first)
		return p.descend(pathStep{key: key, index: -1}, elem)
	})
	p.emit('}')
	return ok
}

// ownAnnotations writes the members whose key starts with
// api.OwnAnnotationPrefix.
func (p *pruner) ownAnnotations() bool {
	p.emit('{')
	first := true
	ok := p.w.object(func(rawKey []byte, escaped bool) bool {
		key, ok := p.key(rawKey, escaped)
		if !ok {
			return false
		}
		if !bytes.HasPrefix(key, []byte(api.OwnAnnotationPrefix)) {
			return p.w.skip()
		}
		p.member(key, escaped, &first)
		return p.copyValue()
	})
	p.emit('}')
	return ok
}

// dedupSlots is how many distinct elements of an array set remembers: an
// element equal to one of them (after pruning) is dropped.
const dedupSlots = 256

// set writes an array the webhooks read as a set of elem: each element
// pruned, and dropped when it equals a remembered earlier one.
func (p *pruner) set(elem reflect.Type) bool {
	type kept struct {
		hash       uint64
		start, end int
	}
	var seen [dedupSlots]kept
	w := &p.w
	w.i++ // '['
	p.emit('[')
	if w.peek() == ']' {
		w.i++
		p.emit(']')
		return true
	}
	for n := 0; ; n++ {
		mark := len(p.out)
		if mark > 0 && p.out[mark-1] != '[' {
			p.emit(',')
		}
		start := len(p.out)
		if !p.descend(pathStep{index: n}, elem) {
			return false
		}
		e := p.out[start:]
		h := maphash.Bytes(dedupSeed, e)
		slot := &seen[h%dedupSlots]
		if slot.end > 0 && slot.hash == h && bytes.Equal(p.out[slot.start:slot.end], e) {
			p.out = p.out[:mark]
		} else {
			*slot = kept{hash: h, start: start, end: len(p.out)}
		}
		switch w.peek() {
		case ',':
			w.i++
		case ']':
			w.i++
			p.emit(']')
			return true
		default:
			return false
		}
	}
}

func (p *pruner) descend(step pathStep, t reflect.Type) bool {
	p.path = append(p.path, step)
	ok := p.value(t)
	p.path = p.path[:len(p.path)-1]
	return ok
}

// key is a member's key, unescaped.
func (p *pruner) key(raw []byte, escaped bool) ([]byte, bool) {
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
func (p *pruner) fold(key []byte) []byte {
	if len(key) > len(p.buf) || !isASCII(key) {
		return []byte(fold(string(key)))
	}
	out := p.buf[:len(key)]
	for i, b := range key {
		if 'a' <= b && b <= 'z' {
			b -= 'a' - 'A'
		}
		out[i] = b
	}
	return out
}

// join is the path of key below the current value, for messages.
func (p *pruner) join(key string) string {
	var b strings.Builder
	for _, s := range p.path {
		if s.index >= 0 {
			b.WriteString("[" + strconv.Itoa(s.index) + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.Write(s.key)
	}
	if b.Len() > 0 {
		b.WriteByte('.')
	}
	b.WriteString(key)
	return b.String()
}
