package admissionjson

import (
	"strings"
	"testing"

	"github.com/seedwarden/seedwarden/internal/api"
)

// Any pair of objects: no panic, and every change reported is an own
// annotation whose value differs from the old object's.
func FuzzOwnAnnotationChanges(f *testing.F) {
	f.Add([]byte(`{"metadata":{"annotations":{"seedwarden.io/seed":"a","x":"y"}}}`), []byte(`{"metadata":{"annotations":{"seedwarden.io/seed":"b"}}}`))
	f.Add([]byte(`{"metadata":null}`), []byte(`null`))
	f.Add([]byte(`{"metadata":{"annotations":{"seedwarden.io/r":"1","seedwarden.io/r":"2"}}}`), []byte(`{}`))
	f.Fuzz(func(t *testing.T, raw, oldRaw []byte) {
		changes, err := ownAnnotationChanges(raw, oldRaw)
		if err != nil {
			return
		}
		obj, _ := decodeShootObject(raw, false)
		for _, c := range changes {
			if !strings.HasPrefix(c.Key, api.OwnAnnotationPrefix) {
				t.Fatalf("change of %q, not an own annotation", c.Key)
			}
			if c.Existed && obj.annotations()[c.Key] == c.Old {
				t.Fatalf("%q reported changed but equals its old value %q", c.Key, c.Old)
			}
		}
	})
}

// Any options: no panic, and a kind read is one the JSON holds.
func FuzzDecodeOptionsKind(f *testing.F) {
	f.Add([]byte(`{"kind":"UpdateOptions","apiVersion":"meta.k8s.io/v1"}`))
	f.Add([]byte(`{"Kind":"UpdateOptions","kind":"PatchOptions"}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		if kind := DecodeOptionsKind(raw); kind != "" && !strings.Contains(string(raw), "kind") {
			t.Fatalf("kind %q read from options without a kind key: %q", kind, raw)
		}
	})
}
