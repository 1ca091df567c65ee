package admissionjson

import (
	"encoding/json"
	"fmt"
)

// PatchShape records which parents a JSON patch of the admitted object can
// rely on. A JSON pointer needs its parent to exist; the API server always
// sends metadata and spec, but a patch that fails to apply fails the
// request, so look rather than assume.
type PatchShape struct {
	HasSpec, HasMetadata, HasAnnotations bool
	// annotations holds metadata.annotations as a JSON patch sees them (for
	// an ambiguous object, its keys only).
	annotations map[string]string
}

// HasAnnotation reports whether metadata.annotations holds key, as a JSON
// patch sees the object.
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
			// either.
			if annotations, err := decodeMembers(meta["annotations"]); err == nil {
				shape.annotations = make(map[string]string, len(annotations))
				for k := range annotations {
					shape.annotations[k] = ""
				}
			}
		}
	}
	return shape, nil
}

// isNull reports whether a member is absent or JSON null.
func isNull(v json.RawMessage) bool {
	return len(v) == 0 || string(v) == "null"
}
