package admissionjson

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/autoscalingapi"
)

// pruneSeeds are objects of every shape prune and presize handle: unread
// members, repeated elements, duplicate and escaped keys, nulls, wrong
// types.
var pruneSeeds = []string{
	`{"metadata":{"name":"a","managedFields":[{},{}],"ownerReferences":[{}],"labels":{"a":"b"},"finalizers":["x"]}}`,
	`{"spec":{"provider":{"type":"aws","workers":[{},{},{"name":"p","zones":["a","b","a"]},{},{"name":"p","zones":["a","b","a"]}]}}}`,
	`{"spec":{"provider":{"workers":[{"zones":["a"]}]},"provider":{"workers":[{},{"controlPlane":{}}]}}}`,
	`{"spec":{"provider":{"workers":[{"zones":["a","b"]}],"workers":[{}]}}}`,
	`{"spec":{"provider":{"workers":[{"zones":["a","b"],"zones":null}]}}}`,
	`{"spec":{"tolerations":[{"key":"a"},{"key":"a"},{"key":"b","value":"v"},{"key":"a"}],"seedSelector":{"matchLabels":{"a":"b","a":"c"},"matchExpressions":[{},{},{"key":"k","operator":"In","values":["x","x"]}]}}}`,
	`{"metadata":{"annotations":{"seedwarden.io/seed":"s","other":"o"},"uid":"u","generateName":"g-"},"spec":{"seedName":"a"},"status":{"seedName":"b","networking":{"nodes":["10.0.0.0/8","10.0.0.0/8"]}}}`,
	`{"spec":{"provider":{"workers":[{"name":"a"},{"name":"b"},{"name":"a"},{"name":"b"}]}}}`,
	`{"spec":{"provider":{"wo\u0072kers":[{},{}]}}}`,
	`{"spec":{"controlPlane":{"zones":["a"]},"controlPlane":null,"accessRestrictions":[{"name":"x","options":{"a":"b"}},{"name":"x","options":{"a":"b"}}]}}`,
	`{"spec":{"provider":{"workers":[{"zones":[1]}]}}}`,
	`{"spec":{"tolerations":null,"tolerations":[{}]},"status":{"lastOperation":{"lastUpdateTime":"2026-01-01T00:00:00Z"}}}`,
	`{"spec":{"networking":{"ipFamilies":["IPv4","IPv6","IPv4"]},"provider":{"workers":[]}}}`,
	`{"metadata":{"annotations":null},"spec":null}`,
	`{"Spec":{"seedName":"x"},"spec":{"SeedName":"y"}}`,
}

// FuzzPruneMatchesKubernetes holds the decoding of what is read (prune,
// presize, then the decoder) to Kubernetes' reading of the whole object:
// decoded case-sensitively into maps with the last of duplicate keys
// winning (as the API server reads a CRD's object, and what it sends on),
// then into an api.Shoot. On the same bytes, every field the webhooks read
// must be the same, each array as the same set (in the order of first
// appearance), seedwarden's own annotations the same. It may refuse more (a
// case variant of a read field), never read differently.
func FuzzPruneMatchesKubernetes(f *testing.F) {
	for _, seed := range pruneSeeds {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var k8s map[string]any
		if unmarshal(raw, &k8s) != nil || k8s == nil {
			return
		}
		stored, err := json.Marshal(k8s)
		require.NoError(t, err)
		var full api.Shoot
		if unmarshal(stored, &full) != nil {
			return // a type api.Shoot does not allow, in a field read or not
		}
		want := readView(&full)
		obj, err := decodeShootObject(raw, false)
		require.NoError(t, err, "decoded all of it, not what is read")
		assert.Equal(t, want, readView(obj.toShoot()), "stored object")

		shoot, err := DecodeShoot(raw)
		if errors.As(err, new(*CaseVariantError)) {
			return
		}
		if full.Kind != "" && full.Kind != "Shoot" || full.APIVersion != "" && full.APIVersion != shootAPIVersion {
			require.Error(t, err)
			return
		}
		require.NoError(t, err)
		assert.Equal(t, want, readView(shoot), "new object")
	})
}

// TestPruneSeeds runs the fuzz seeds with the outcome each is there for.
func TestPruneDecodesSets(t *testing.T) {
	shoot, err := DecodeShoot([]byte(pruneSeeds[1]))
	require.NoError(t, err)
	assert.Equal(t, []api.Worker{{}, {Name: "p", Zones: []string{"a", "b"}}}, shoot.Spec.Provider.Workers)

	shoot, err = DecodeShoot([]byte(pruneSeeds[0]))
	require.NoError(t, err)
	assert.Equal(t, "a", shoot.Name)
	assert.Nil(t, shoot.ManagedFields)
	assert.Nil(t, shoot.Labels)

	shoot, err = DecodeShoot([]byte(pruneSeeds[6]))
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"seedwarden.io/seed": "s"}, shoot.Annotations, "only seedwarden's own annotations are read")
	assert.Equal(t, "u", string(shoot.UID))

	_, err = DecodeShoot([]byte(`{"spec":{"provider":{"workers":[{},{"Zones":["a"]}]}}}`))
	var cv *CaseVariantError
	require.ErrorAs(t, err, &cv)
	assert.Equal(t, "spec.provider.workers[1].Zones", cv.key)
}

// readView is what the webhooks read of a Shoot, every array as a set in
// the order of first appearance and annotations only seedwarden's own.
func readView(s *api.Shoot) api.Shoot {
	var v api.Shoot
	v.TypeMeta = s.TypeMeta
	v.Name, v.GenerateName, v.Namespace, v.UID = s.Name, s.GenerateName, s.Namespace, s.UID
	for k, val := range s.Annotations {
		if strings.HasPrefix(k, api.OwnAnnotationPrefix) {
			if v.Annotations == nil {
				v.Annotations = map[string]string{}
			}
			v.Annotations[k] = val
		}
	}
	v.Spec, v.Status = *s.Spec.DeepCopy(), *s.Status.DeepCopy()
	dedupe(reflect.ValueOf(&v.Spec).Elem())
	dedupe(reflect.ValueOf(&v.Status).Elem())
	return v
}

// dedupe drops every slice element equal to an earlier one, at any depth,
// and makes empty slices and maps nil.
func dedupe(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			dedupe(v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Field(i).CanSet() {
				dedupe(v.Field(i))
			}
		}
	case reflect.Map:
		if v.Len() == 0 {
			v.SetZero()
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return
		}
		out := reflect.MakeSlice(v.Type(), 0, v.Len())
		for i := range v.Len() {
			e := v.Index(i)
			dedupe(e)
			dup := false
			for j := range out.Len() {
				if reflect.DeepEqual(out.Index(j).Interface(), e.Interface()) {
					dup = true
					break
				}
			}
			if !dup {
				out = reflect.Append(out, e)
			}
		}
		if out.Len() == 0 {
			out = reflect.Zero(v.Type())
		}
		v.Set(out)
	}
}

// FuzzSecretAndNamespaceMatchFullDecode holds DecodeSecret,
// DecodeOldNamespace and DecodeSeedAutoscaler, which decode only what their
// webhooks read, to decoding the whole corev1.Secret, corev1.Namespace or
// SeedAutoscaler: on the same bytes, the kubeconfig key of data and
// stringData, the deletionTimestamp, and a SeedAutoscaler's name, namespace
// and spec are the same.
func FuzzSecretAndNamespaceMatchFullDecode(f *testing.F) {
	for _, seed := range []string{
		`{"apiVersion":"v1","kind":"Secret","data":{"kubeconfig":"YQ==","other":"Yg=="},"stringData":{"kubeconfig":"x"}}`,
		`{"metadata":{"managedFields":[{},{}],"deletionTimestamp":"2024-01-01T00:00:00Z"},"data":{"kubeconfig":"YQ==","kubeconfig":null}}`,
		"{\"data\":{\"kube\\u0063onfig\":\"YQ==\"},\"stringData\":null}",
		`{"data":{"Kubeconfig":"YQ=="},"metadata":{"deletionTimestamp":null}}`,
		`{"data":[],"stringData":{"kubeconfig":1}}`,
		`{"apiVersion":"autoscaling.seedwarden.io/v1alpha1","kind":"SeedAutoscaler","metadata":{"name":"a","namespace":"garden","managedFields":[{},{}]},"spec":{"scaleTargetRef":{"name":"set"},"minReplicas":1,"maxReplicas":3}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var secret corev1.Secret
		if unmarshal(raw, &secret) == nil && !absent(raw) && (secret.Kind == "" || secret.Kind == "Secret") && (secret.APIVersion == "" || secret.APIVersion == "v1") {
			got, err := DecodeSecret(raw, "kubeconfig")
			require.NoError(t, err)
			want, wantOK := secret.Data["kubeconfig"]
			have, haveOK := got.Data["kubeconfig"]
			assert.Equal(t, wantOK, haveOK, "data.kubeconfig present")
			assert.Equal(t, string(want), string(have))
			assert.Equal(t, secret.StringData["kubeconfig"], got.StringData["kubeconfig"])
		}
		var sa autoscalingapi.SeedAutoscaler
		if unmarshal(raw, &sa) == nil && !absent(raw) && (sa.Kind == "" || sa.Kind == autoscalingapi.KindSeedAutoscaler) && (sa.APIVersion == "" || sa.APIVersion == seedAutoscalerAPIVersion) {
			got, err := DecodeSeedAutoscaler(raw)
			require.NoError(t, err)
			assert.Equal(t, []string{sa.Name, sa.Namespace}, []string{got.Name, got.Namespace})
			assert.Equal(t, sa.Spec, got.Spec)
		}
		var ns corev1.Namespace
		if unmarshal(raw, &ns) == nil && len(raw) > 0 {
			got, err := DecodeOldNamespace(raw)
			require.NoError(t, err)
			assert.Equal(t, ns.DeletionTimestamp, got.DeletionTimestamp)
		}
	})
}
