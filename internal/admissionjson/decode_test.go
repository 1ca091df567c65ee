package admissionjson

import (
	"encoding/json"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/autoscalingapi"
)

// The decoding of request objects (decode.go, shoot_object.go), one table
// per kind: what is
// accepted, and the error (naming the field) for what is not.

func TestDecodeShoot(t *testing.T) {
	tests := map[string]struct {
		raw, wantErr, wantName string
		old                    bool
	}{
		"shoot":               {raw: `{"apiVersion":"core.gardener.cloud/v1beta1","kind":"Shoot","metadata":{"name":"a"}}`, wantName: "a"},
		"no type meta":        {raw: `{"metadata":{"name":"a"}}`, wantName: "a"},
		"absent":              {raw: ``, wantErr: "seedwarden: admission request carries no object"},
		"null":                {raw: ` null `, wantErr: "seedwarden: admission request carries no object"},
		"wrong type":          {raw: `{"spec":{"seedName":1}}`, wantErr: "seedwarden: cannot decode object as a Shoot"},
		"other kind":          {raw: `{"kind":"Seed"}`, wantErr: `seedwarden: object has kind "Seed", expected "Shoot"`},
		"other apiVersion":    {raw: `{"apiVersion":"v1"}`, wantErr: `seedwarden: object has apiVersion "v1", expected "core.gardener.cloud/v1beta1"`},
		"old shoot":           {raw: `{"metadata":{"name":"a"}}`, old: true, wantName: "a"},
		"old absent":          {raw: ``, old: true, wantErr: "old object: seedwarden: admission request carries no object"},
		"old wrong type":      {raw: `[1]`, old: true, wantErr: "old object: seedwarden: cannot decode object as a Shoot"},
		"last duplicate wins": {raw: `{"metadata":{"name":"a","name":"b"}}`, wantName: "b"},
		"unknown fields":      {raw: `{"metadata":{"name":"a"},"spec":{"unknownField":{"x":1}}}`, wantName: "a"},
		// Keys are matched exactly, as the API server matches them; a new
		// object with a case variant of a modelled field is refused.
		"case variant":             {raw: `{"Metadata":{"Name":"a"}}`, wantErr: `object has key "Metadata" where Kubernetes reads only "metadata"`},
		"nested case variant":      {raw: `{"metadata":{"name":"a"},"spec":{"seedName":"gcp-us1","seedname":null}}`, wantErr: `key "spec.seedname" where Kubernetes reads only "spec.seedName"`},
		"deep case variant":        {raw: `{"spec":{"provider":{"Type":"aws"}}}`, wantErr: `key "spec.provider.Type" where Kubernetes reads only "spec.provider.type"`},
		"unicode fold":             {raw: `{"spec":{"ſeedName":"x"}}`, wantErr: `key "spec.ſeedName"`},
		"annotation keys are data": {raw: `{"metadata":{"name":"a","annotations":{"A":"1","a":"2"}}}`, wantName: "a"},
		// The stored object is read exactly, variants ignored as the API
		// server ignores them.
		"old case variant": {raw: `{"METADATA":{"name":"a"},"metadata":{"name":"b"}}`, old: true, wantName: "b"},
		"old only variant": {raw: `{"METADATA":{"name":"a"}}`, old: true, wantName: ""},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			decode := DecodeShoot
			if tt.old {
				decode = DecodeOldShoot
			}
			shoot, err := decode([]byte(tt.raw))
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantName, shoot.Name)
		})
	}
}

func TestDecodeShootObjectIsCaseSensitive(t *testing.T) {
	obj, err := decodeShootObject([]byte(`{"Metadata":{"name":"a"},"spec":{}}`), false)
	require.NoError(t, err)
	assert.Nil(t, obj.Metadata)
	assert.NotNil(t, obj.Spec)
	_, err = decodeShootObject([]byte(`null`), false)
	assert.ErrorIs(t, err, errNoObject)
}

func TestDecodeSecret(t *testing.T) {
	tests := map[string]struct{ raw, wantErr string }{
		"secret":           {raw: `{"apiVersion":"v1","kind":"Secret","data":{"kubeconfig":"YQ=="}}`},
		"absent":           {raw: ``, wantErr: "seedwarden: admission request carries no object"},
		"null":             {raw: `null`, wantErr: "seedwarden: admission request carries no object"},
		"data not base64":  {raw: `{"data":{"kubeconfig":"***"}}`, wantErr: "seedwarden: cannot decode object as a Secret"},
		"other kind":       {raw: `{"kind":"ConfigMap"}`, wantErr: `seedwarden: object has kind "ConfigMap", expected "Secret"`},
		"other apiVersion": {raw: `{"apiVersion":"v2"}`, wantErr: `seedwarden: object has apiVersion "v2", expected "v1"`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			secret, err := DecodeSecret([]byte(tt.raw), "kubeconfig")
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, []byte("a"), secret.Data["kubeconfig"])
		})
	}
}

func TestDecodeOldNamespace(t *testing.T) {
	tests := map[string]struct {
		raw         string
		wantErr     string
		terminating bool
	}{
		"terminating": {raw: `{"metadata":{"deletionTimestamp":"2024-01-01T00:00:00Z"}}`, terminating: true},
		"live":        {raw: `{"metadata":{"name":"a"}}`},
		"null":        {raw: `null`},
		"absent":      {raw: ``, wantErr: "old object: seedwarden: admission request carries no object"},
		"broken":      {raw: `{"metadata":1}`, wantErr: "old object: seedwarden: cannot decode object as a Namespace"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			ns, err := DecodeOldNamespace([]byte(tt.raw))
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.terminating, ns.DeletionTimestamp != nil)
		})
	}
}

func TestDecodeObjectName(t *testing.T) {
	name, generateName, err := DecodeObjectName([]byte(`{"metadata":{"name":"a","generateName":"b-"}}`))
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b-"}, []string{name, generateName})
	_, _, err = DecodeObjectName([]byte(`{"metadata":[]}`))
	assert.ErrorContains(t, err, "seedwarden: cannot decode object metadata")
}

func TestDecodeSpecMembers(t *testing.T) {
	spec, err := DecodeSpecMembers([]byte(`{"spec":{"seedName":"a","region":null,"purpose":"x","purpose":"y","dns":{ "domain" : "d" }}}`))
	require.NoError(t, err)
	assert.Equal(t, map[string]json.RawMessage{"seedName": []byte(`"a"`), "purpose": []byte(`"y"`), "dns": []byte(`{"domain":"d"}`)}, spec)
	spec, err = DecodeSpecMembers([]byte(`{}`))
	require.NoError(t, err)
	assert.Nil(t, spec)
}

func TestDecodeMembersLastWins(t *testing.T) {
	m, err := decodeMembers([]byte(`{"spec":1,"spec":null,"Spec":2}`))
	require.NoError(t, err)
	assert.Equal(t, "null", string(m["spec"]))
	assert.Equal(t, "2", string(m["Spec"]))
}

// BenchmarkDecodeShoot: the validating webhooks' decode of a realistic
// Shoot (testdata/shoot.json: as the API server sends one, with a seed and
// an annotation), against decoding all of it into an api.Shoot.
func BenchmarkDecodeShoot(b *testing.B) {
	raw, err := os.ReadFile("testdata/shoot.json")
	require.NoError(b, err)
	b.Run("all into api.Shoot", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := unmarshal(raw, &api.Shoot{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("read fields, case variants refused", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := DecodeShoot(raw); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkDecodeSeedAutoscalerManagedFields: a 3 MB SeedAutoscaler whose
// bytes are managedFields of `{}` (a forged review; the API server resets
// managedFields), decoded by DecodeSeedAutoscaler against decoding all of it,
// in bytes allocated per byte of the object (B/object-B).
func BenchmarkDecodeSeedAutoscalerManagedFields(b *testing.B) {
	raw := []byte(`{"apiVersion":"autoscaling.seedwarden.io/v1alpha1","kind":"SeedAutoscaler","metadata":{"name":"a","namespace":"garden","managedFields":[{}` +
		strings.Repeat(`,{}`, 1_000_000) + `]},"spec":{"scaleTargetRef":{"name":"set"},"minReplicas":1,"maxReplicas":3}}`)
	for name, decode := range map[string]func() error{
		"all of it":            func() error { return unmarshal(raw, &autoscalingapi.SeedAutoscaler{}) },
		"DecodeSeedAutoscaler": func() error { _, err := DecodeSeedAutoscaler(raw); return err },
	} {
		b.Run(name, func(b *testing.B) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for b.Loop() {
				if err := decode(); err != nil {
					b.Fatal(err)
				}
			}
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/float64(len(raw)), "B/object-B")
		})
	}
}
