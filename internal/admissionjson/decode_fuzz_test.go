package admissionjson

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/utils/ptr"
	kjson "sigs.k8s.io/json"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/objsize"
)

// FuzzDecodeMatchesKubernetes holds the decoders to Kubernetes: on the
// same bytes, what the webhooks read of spec.seedName, metadata.annotations
// (seedwarden's own, the only ones they read) and the size envelope (status, metadata.managedFields) must be what
// Kubernetes reads, an object decoded case-sensitively into maps with the
// last of duplicate keys winning (as the API server reads a CRD's object).
// Our decoders may refuse more (a type they do not model, a case variant),
// never read differently.
func FuzzDecodeMatchesKubernetes(f *testing.F) {
	for _, seed := range []string{
		`{"spec":{"seedName":"gcp-us1","seedname":null}}`,
		`{"spec":{"seedName":"aws-eu1","SEEDNAME":"aws-eu2"}}`,
		`{"metadata":{"Annotations":{"seedwarden.io/placement":"t"},"annotations":{"a":"b"}}}`,
		`{"spec":{"SeedName":"x"}}`,
		`{"spec":{"seedName":"a","seedName":"b"}}`,
		`{"spec":{"seedName":null}}`,
		`{"metadata":{"annotations":{"a":"1","a":"2","A":"3"}}}`,
		`{"metadata":{"annotations":{"seedwarden.io/seed":"1","seedwarden.io/seed":"2","Seedwarden.io/seed":"3"}}}`,
		"{\"metadata\":{\"annotations\":{\"seedwarden.io\\/seed\":\"escaped\"}}}",
		`{"Status":{"big":"xxxxxxxxxxxxxxxxxxxxxxxx"},"spec":{}}`,
		`{"status":1,"status":{"a":2},"metadata":{"managedFields":[],"managedFields":[1,2]}}`,
		`{"metadata":{"ManagedFields":[1]}}`,
		`{"spec":{"ſeedName":"x"}}`,
		"{\"spec\":{\"seed\\u004eame\":\"escaped\"}}",
		` {"status" : null } `,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var k8s map[string]any
		if kjson.UnmarshalCaseSensitivePreserveInts(raw, &k8s) != nil || k8s == nil {
			return // Kubernetes would not store it
		}
		seed, seedOK := k8sSeedName(k8s)
		annotations, annotationsOK := k8sAnnotations(k8s)

		if shoot, err := DecodeShoot(raw); err == nil {
			require.True(t, seedOK && annotationsOK, "decoded what Kubernetes reads as another type")
			assert.Equal(t, seed, ptr.Deref(shoot.Spec.SeedName, ""), "validating webhooks' seedName")
			assert.Equal(t, annotations, shoot.Annotations, "validating webhooks' annotations")
		} else if seedOK && annotationsOK && errors.As(err, new(*CaseVariantError)) {
			assert.Contains(t, err.Error(), "where Kubernetes reads only")
		}
		if obj, err := decodeShootObject(raw, false); err == nil {
			shoot := obj.toShoot()
			require.True(t, seedOK && annotationsOK, "decoded what Kubernetes reads as another type")
			assert.Equal(t, seed, ptr.Deref(shoot.Spec.SeedName, ""), "mutating webhook's seedName")
			assert.Equal(t, annotations, shoot.Annotations, "mutating webhook's annotations")
		}
		if size, err := objsize.Measure(raw); err == nil {
			assert.Equal(t, k8sSize(t, raw), size, "resource-size envelope")
		}
	})
}

// k8sSeedName is spec.seedName as Kubernetes reads it; ok is false when it
// (or spec) has a type a Shoot does not allow.
func k8sSeedName(obj map[string]any) (seed string, ok bool) {
	spec, ok := member[map[string]any](obj, "spec")
	if !ok || spec == nil {
		return "", ok
	}
	s, ok := member[string](spec, "seedName")
	return s, ok
}

// k8sAnnotations is seedwarden's own of metadata.annotations as Kubernetes
// reads them (nil when absent or null).
func k8sAnnotations(obj map[string]any) (map[string]string, bool) {
	md, ok := member[map[string]any](obj, "metadata")
	if !ok || md == nil {
		return nil, ok
	}
	ann, ok := member[map[string]any](md, "annotations")
	if !ok || ann == nil {
		return nil, ok
	}
	out := map[string]string{}
	for k, v := range ann {
		s, isString := v.(string)
		if !isString {
			return nil, false
		}
		if strings.HasPrefix(k, api.OwnAnnotationPrefix) {
			out[k] = s
		}
	}
	return out, true
}

// member is obj[key] as a T: the zero T when absent or null, ok false when
// it holds another type.
func member[T any](obj map[string]any, key string) (T, bool) {
	var zero T
	v, present := obj[key]
	if !present || v == nil {
		return zero, true
	}
	t, ok := v.(T)
	return t, ok
}

// k8sSize is the size the limits count, from Kubernetes' reading of which
// members are status and metadata.managedFields: every byte less each of
// those members (key, colon, value, one comma), never under "{}".
func k8sSize(t *testing.T, raw []byte) int64 {
	var top map[string]json.RawMessage
	require.NoError(t, kjson.UnmarshalCaseSensitivePreserveInts(raw, &top))
	size := int64(len(raw))
	if v, ok := top["status"]; ok {
		size -= int64(len(`"status":,`) + len(v))
	}
	var md map[string]json.RawMessage
	if kjson.UnmarshalCaseSensitivePreserveInts(top["metadata"], &md) == nil {
		if v, ok := md["managedFields"]; ok {
			size -= int64(len(`"managedFields":,`) + len(v))
		}
	}
	return max(size, 2)
}
