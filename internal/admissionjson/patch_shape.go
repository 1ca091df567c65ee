package admissionjson

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/seedwarden/seedwarden/internal/api"
)

// PatchShape records which parents a JSON patch of the admitted object can
// rely on. A JSON pointer needs its parent to exist; the API server always
// sends metadata and spec, but a patch that fails to apply fails the
// request, so look rather than assume.
type PatchShape struct {
	HasSpec, HasMetadata, HasAnnotations bool
	// annotations holds seedwarden's own of metadata.annotations (the only
	// ones read) as a JSON patch sees them (for an ambiguous object, their
	// keys only).
	annotations map[string]string
}

// HasAnnotation reports whether metadata.annotations holds key, one of
// seedwarden's own, as a JSON patch sees the object.
func (s PatchShape) HasAnnotation(key string) bool {
	_, ok := s.annotations[key]
	return ok
}

// shape reads the patch shape off the decoded object.
func (o *shootObject) shape() PatchShape {
	s := PatchShape{HasSpec: o.Spec != nil, HasMetadata: o.Metadata != nil}
	if s.HasMetadata && o.Metadata.Annotations != nil {
		s.HasAnnotations = true
		s.annotations = o.Metadata.Annotations
	}
	return s
}

// lastWinsShape computes the patch shape of an ambiguous object (a duplicate
// or escaped metadata, spec or annotations key; the API server never sends
// one) the way a JSON patch sees it: exact keys, the last duplicate wins.
// Decoding into structs merges duplicates instead, so shape would be wrong.
func lastWinsShape(raw []byte) (PatchShape, error) {
	top, err := decodeMembers(raw)
	if err != nil {
		return PatchShape{}, fmt.Errorf("seedwarden: cannot decode object: %w", err)
	}
	shape := PatchShape{HasSpec: !isNull(top["spec"]), HasMetadata: !isNull(top["metadata"])}
	if shape.HasMetadata {
		meta, err := decodeMembers(top["metadata"])
		if err != nil {
			return PatchShape{}, fmt.Errorf("seedwarden: cannot decode object metadata: %w", err)
		}
		shape.HasAnnotations = !isNull(meta["annotations"])
		if shape.HasAnnotations {
			// Not an object: the decoding refuses that, so no annotation
			// either. Only seedwarden's own are looked at (their keys,
			// not decoded).
			shape.annotations = ownAnnotationKeys(meta["annotations"])
		}
	}
	return shape, nil
}

// ownAnnotationKeys are the keys of the annotations object raw (valid JSON)
// that start with api.OwnAnnotationPrefix; nil when raw is not an object.
func ownAnnotationKeys(raw []byte) map[string]string {
	keys := map[string]string{}
	w := walker{b: raw}
	var p pruner
	if !w.object(func(rawKey []byte, escaped bool) bool {
		key, ok := p.key(rawKey, escaped)
		if ok && bytes.HasPrefix(key, []byte(api.OwnAnnotationPrefix)) {
			keys[string(key)] = ""
		}
		return ok && w.skip()
	}) {
		return nil
	}
	return keys
}

// isNull reports whether a member is absent or JSON null.
func isNull(v json.RawMessage) bool {
	return len(v) == 0 || string(v) == "null"
}
