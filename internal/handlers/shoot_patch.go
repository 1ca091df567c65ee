package handlers

import (
	"strings"

	"gomodules.xyz/jsonpatch/v2"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/seedwarden/seedwarden/internal/admissionjson"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/placementtoken"
)

// The mutating webhook's JSON patch, written member by member.

// shootPatch is the JSON patch of the mutating webhook's answer: written
// onto the object's shape, with the schedulerName claim when the webhook
// takes the Shoot on.
type shootPatch struct {
	admissionjson.PatchShape
	// claim, when set, is written into spec.schedulerName (api.NeedsClaim).
	claim string
	// own are the object's seedwarden.io/ annotations, read once
	// (newShootPatch): the answer keeps only those the webhook writes.
	own []string
}

func newShootPatch(shape admissionjson.PatchShape) shootPatch {
	return shootPatch{PatchShape: shape, own: shape.OwnAnnotationKeys()}
}

// unchanged admits the Shoot without placing it, removing every one of
// seedwarden's own annotations it carries (the webhook wrote none of them).
func (s shootPatch) unchanged(message string) admission.Response {
	var ops []jsonpatch.JsonPatchOperation
	if s.claim != "" {
		ops = append(ops, s.specOp("schedulerName", s.claim))
	}
	for _, k := range s.own {
		ops = append(ops, removeAnnotationOp(k))
	}
	if len(ops) == 0 {
		return admission.Allowed(message)
	}
	return admission.Patched(message, ops...)
}

// specOp sets one member of spec, creating spec when the object has none.
func (s shootPatch) specOp(member, value string) jsonpatch.JsonPatchOperation {
	if s.HasSpec {
		return jsonpatch.NewOperation("add", "/spec/"+member, value)
	}
	return jsonpatch.NewOperation("add", "/spec", map[string]string{member: value})
}

func removeAnnotationOp(key string) jsonpatch.JsonPatchOperation {
	return jsonpatch.NewOperation("remove", "/metadata/annotations/"+escapeJSONPointer(key), nil)
}

// revertOwnAnnotations undoes what an UPDATE does to seedwarden's own
// annotations: an added one is removed, a changed one gets its old value.
func revertOwnAnnotations(changes []admissionjson.AnnotationChange) []jsonpatch.JsonPatchOperation {
	ops := make([]jsonpatch.JsonPatchOperation, 0, len(changes))
	for _, c := range changes {
		if c.Existed {
			ops = append(ops, jsonpatch.NewOperation("add", "/metadata/annotations/"+escapeJSONPointer(c.Key), c.Old))
		} else {
			ops = append(ops, removeAnnotationOp(c.Key))
		}
	}
	return ops
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
// annotation, an empty token (no Signer) no placement annotation; every own
// annotation the webhook does not write is removed.
func (s shootPatch) patches(p placementRecord) []jsonpatch.JsonPatchOperation {
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
	case s.HasSpec:
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
	}
	if p.announce {
		annotations[placementtoken.SeedAnnotation] = p.seed
		keys = append(keys, placementtoken.SeedAnnotation)
	}
	for _, k := range s.own {
		if _, written := annotations[k]; !written {
			ops = append(ops, removeAnnotationOp(k))
		}
	}
	if len(keys) == 0 {
		return ops
	}
	switch {
	case !s.HasMetadata:
		return append(ops, jsonpatch.NewOperation("add", "/metadata", map[string]any{"annotations": annotations}))
	case !s.HasAnnotations:
		// Absent or null: adding the whole map works for both.
		return append(ops, jsonpatch.NewOperation("add", "/metadata/annotations", annotations))
	default:
		for _, k := range keys {
			ops = append(ops, jsonpatch.NewOperation("add", "/metadata/annotations/"+escapeJSONPointer(k), annotations[k]))
		}
		return ops
	}
}

var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// escapeJSONPointer escapes one reference token (RFC 6901).
func escapeJSONPointer(s string) string { return pointerEscaper.Replace(s) }
