package admissionjson

import (
	"slices"
	"strings"

	"github.com/seedwarden/seedwarden/internal/api"
)

// AnnotationChange is one of seedwarden's own annotations (api.OwnAnnotationPrefix)
// that a request adds or changes: Key, and its value before (Existed false:
// the old object had none).
type AnnotationChange struct {
	Key     string
	Old     string
	Existed bool
}

// OwnAnnotationKeys lists the object's annotations that start with
// api.OwnAnnotationPrefix, sorted, as a JSON patch sees them.
func (s PatchShape) OwnAnnotationKeys() []string {
	var keys []string
	for k := range s.annotations {
		if strings.HasPrefix(k, api.OwnAnnotationPrefix) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// ownAnnotationChanges compares the own annotations of an UPDATE's object
// and old object (raw JSON); removing one is no change to revert.
func ownAnnotationChanges(raw, oldRaw []byte) ([]AnnotationChange, error) {
	obj, err := decodeShootObject(raw, false)
	if err != nil {
		return nil, err
	}
	old := &shootObject{}
	if !absent(oldRaw) {
		if old, err = decodeShootObject(oldRaw, false); err != nil {
			return nil, err
		}
	}
	now, before := obj.annotations(), old.annotations()
	var out []AnnotationChange
	for k, v := range now {
		if !strings.HasPrefix(k, api.OwnAnnotationPrefix) || k == api.AnnotationUnschedulableReasons {
			continue // not seedwarden's, or informational (the retry controller writes it by update)
		}
		if was, existed := before[k]; !existed || was != v {
			out = append(out, AnnotationChange{Key: k, Old: was, Existed: existed})
		}
	}
	slices.SortFunc(out, func(a, b AnnotationChange) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}

func (o *shootObject) annotations() map[string]string {
	if o == nil || o.Metadata == nil {
		return nil
	}
	return o.Metadata.Annotations
}
