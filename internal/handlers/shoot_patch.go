package handlers

import (
	"encoding/json"
	"fmt"
	"strings"

	"gomodules.xyz/jsonpatch/v2"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/placementtoken"
)

// The mutating webhook's JSON patch, written member by member.

// patchShape records which parents the placement patch can rely on. A JSON
// pointer needs its parent to exist; the API server always sends metadata
// and spec, but a patch that fails to apply fails the request, so look rather
// than assume.
type patchShape struct {
	hasSpec, hasMetadata, hasAnnotations bool
	// hasPlacementToken: metadata.annotations holds placementtoken.Annotation.
	hasPlacementToken bool
	// claim, when set, is written into spec.schedulerName (api.NeedsClaim).
	claim string
}

// shape reads the patch shape off the decoded object.
func (o *shootObject) shape() patchShape {
	s := patchShape{hasSpec: o.Spec != nil, hasMetadata: o.Metadata != nil}
	if s.hasMetadata && o.Metadata.Annotations != nil {
		s.hasAnnotations = true
		_, s.hasPlacementToken = o.Metadata.Annotations[placementtoken.Annotation]
	}
	return s
}

// lastWinsShape computes the patch shape of an ambiguous object (a duplicate
// or escaped metadata, spec or annotations key; the API server never sends
// one) the way a JSON patch sees it: exact keys, the last duplicate wins.
// Decoding into structs merges duplicates instead, so shape would be wrong.
func lastWinsShape(raw []byte) (patchShape, error) {
	top, err := decodeMembers(raw)
	if err != nil {
		return patchShape{}, fmt.Errorf("seedwarden: cannot decode object: %w", err)
	}
	shape := patchShape{hasSpec: !isNull(top["spec"]), hasMetadata: !isNull(top["metadata"])}
	if shape.hasMetadata {
		meta, err := decodeMembers(top["metadata"])
		if err != nil {
			return patchShape{}, fmt.Errorf("seedwarden: cannot decode object metadata: %w", err)
		}
		shape.hasAnnotations = !isNull(meta["annotations"])
		if shape.hasAnnotations {
			// Not an object: the decoding refuses that, so no token either.
			if annotations, err := decodeMembers(meta["annotations"]); err == nil {
				_, shape.hasPlacementToken = annotations[placementtoken.Annotation]
			}
		}
	}
	return shape, nil
}

// unchanged admits the Shoot without placing it, removing a placement token
// it carries (which the webhook did not write).
func (s patchShape) unchanged(message string) admission.Response {
	var ops []jsonpatch.JsonPatchOperation
	if s.claim != "" {
		ops = append(ops, s.specOp("schedulerName", s.claim))
	}
	if s.hasPlacementToken {
		ops = append(ops, removeTokenOp())
	}
	if len(ops) == 0 {
		return admission.Allowed(message)
	}
	return admission.Patched(message, ops...)
}

// specOp sets one member of spec, creating spec when the object has none.
func (s patchShape) specOp(member, value string) jsonpatch.JsonPatchOperation {
	if s.hasSpec {
		return jsonpatch.NewOperation("add", "/spec/"+member, value)
	}
	return jsonpatch.NewOperation("add", "/spec", map[string]string{member: value})
}

func removeTokenOp() jsonpatch.JsonPatchOperation {
	return jsonpatch.NewOperation("remove", "/metadata/annotations/"+escapeJSONPointer(placementtoken.Annotation), nil)
}

// placementRecord is what a placement writes into the Shoot.
type placementRecord struct {
	seed, reservationKey, token string
	// announce records the seed in placementtoken.SeedAnnotation instead
	// of spec.seedName (ShootMutator.Announce).
	announce bool
}

// patches writes the JSON patch directly instead of diffing a re-marshalled
// object: api.Shoot models only a few fields, so a diff would drop all the
// others. An "add" on an existing member replaces it, so an explicit
// `seedName: ""` or a user-written reservation or placement annotation is
// overwritten too. An empty reservationKey (dry-run) adds no reservation
// annotation; an empty token (no Signer) adds no placement annotation and
// removes one the object carries.
func (s patchShape) patches(p placementRecord) []jsonpatch.JsonPatchOperation {
	ops := make([]jsonpatch.JsonPatchOperation, 0, 5)
	spec := map[string]string{}
	if !p.announce {
		spec["seedName"] = p.seed
	}
	if s.claim != "" {
		spec["schedulerName"] = s.claim
	}
	switch {
	case len(spec) == 0:
	case s.hasSpec:
		for _, member := range []string{"seedName", "schedulerName"} {
			if v, ok := spec[member]; ok {
				ops = append(ops, jsonpatch.NewOperation("add", "/spec/"+member, v))
			}
		}
	default:
		ops = append(ops, jsonpatch.NewOperation("add", "/spec", spec))
	}
	annotations := map[string]string{}
	var keys []string // in a fixed order: reservation, token, seed
	if p.reservationKey != "" {
		annotations[cache.AnnotationReservation] = p.reservationKey
		keys = append(keys, cache.AnnotationReservation)
	}
	if p.token != "" {
		annotations[placementtoken.Annotation] = p.token
		keys = append(keys, placementtoken.Annotation)
	} else if s.hasPlacementToken {
		ops = append(ops, removeTokenOp())
	}
	if p.announce {
		annotations[placementtoken.SeedAnnotation] = p.seed
		keys = append(keys, placementtoken.SeedAnnotation)
	}
	if len(keys) == 0 {
		return ops
	}
	switch {
	case !s.hasMetadata:
		return append(ops, jsonpatch.NewOperation("add", "/metadata", map[string]any{"annotations": annotations}))
	case !s.hasAnnotations:
		// Absent or null: adding the whole map works for both.
		return append(ops, jsonpatch.NewOperation("add", "/metadata/annotations", annotations))
	default:
		for _, k := range keys {
			ops = append(ops, jsonpatch.NewOperation("add", "/metadata/annotations/"+escapeJSONPointer(k), annotations[k]))
		}
		return ops
	}
}

// isNull reports whether a member is absent or JSON null.
func isNull(v json.RawMessage) bool {
	return len(v) == 0 || string(v) == "null"
}

var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// escapeJSONPointer escapes one reference token (RFC 6901).
func escapeJSONPointer(s string) string { return pointerEscaper.Replace(s) }
