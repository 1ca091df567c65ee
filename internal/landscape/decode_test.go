package landscape_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/landscape"
)

const jsonList = `{
  "apiVersion": "v1",
  "kind": "List",
  "items": [
    {"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Seed", "metadata": {"name": "seed-a", "resourceVersion": "3"},
     "spec": {"provider": {"type": "aws", "region": "eu-west-1"}, "networks": {"pods": "10.1.0.0/16", "services": "10.2.0.0/16"}},
     "status": {"allocatable": {"shoots": "250"}}},
    {"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot", "metadata": {"name": "s1", "namespace": "garden-dev"},
     "spec": {"seedName": "seed-a", "region": "eu-west-1"}, "status": {"seedName": "seed-b"}},
    {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "skipped"}},
    {"apiVersion": "core.gardener.cloud/v1beta1", "kind": "BackupBucket", "metadata": {"name": "skipped"}},
    {"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Project", "metadata": {"name": "dev"}, "spec": {"namespace": "garden-dev"}}
  ]
}`

const yamlMultiDoc = `# a landscape
---
apiVersion: core.gardener.cloud/v1beta1
kind: CloudProfile
metadata:
  name: aws
spec:
  type: aws
  seedSelector:
    matchLabels: {env: prod}
    providerTypes: ["*"]
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: rc
  namespace: garden
  labels:
    scheduling.gardener.cloud/purpose: region-config
  annotations:
    scheduling.gardener.cloud/cloudprofiles: aws
data:
  eu-west-1: |
    eu-west-1: 0
    eu-central-1: 10
---
apiVersion: v1
kind: List
items:
- apiVersion: core.gardener.cloud/v1beta1
  kind: NamespacedCloudProfile
  metadata: {name: custom, namespace: garden-dev}
  spec: {parent: {kind: CloudProfile, name: aws}}
  status:
    cloudProfileSpec:
      seedSelector: {providerTypes: [aws]}
---
`

func kindsAndNames(objs []client.Object) []string {
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = o.GetObjectKind().GroupVersionKind().Kind + "/" + client.ObjectKeyFromObject(o).String()
	}
	return out
}

func TestDecode(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"JSON List", jsonList, []string{"Seed//seed-a", "Shoot/garden-dev/s1", "Project//dev"}},
		{"YAML multi-document", yamlMultiDoc, []string{"CloudProfile//aws", "ConfigMap/garden/rc", "NamespacedCloudProfile/garden-dev/custom"}},
		{"single YAML object", "apiVersion: core.gardener.cloud/v1beta1\nkind: Seed\nmetadata:\n  name: x\n", []string{"Seed//x"}},
		{"single JSON object", `{"apiVersion":"core.gardener.cloud/v1beta1","kind":"Seed","metadata":{"name":"x"}}`, []string{"Seed//x"}},
		{"typed list", `{"apiVersion":"core.gardener.cloud/v1beta1","kind":"SeedList","items":[{"apiVersion":"core.gardener.cloud/v1beta1","kind":"Seed","metadata":{"name":"x"}}]}`, []string{"Seed//x"}},
		{"JSON array", `[{"apiVersion":"core.gardener.cloud/v1beta1","kind":"Seed","metadata":{"name":"x"}},{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"n"}}]`, []string{"Seed//x", "ConfigMap/n/c"}},
		{"concatenated JSON", `{"apiVersion":"core.gardener.cloud/v1beta1","kind":"Seed","metadata":{"name":"x"}} {"apiVersion":"core.gardener.cloud/v1beta1","kind":"Seed","metadata":{"name":"y"}}`, []string{"Seed//x", "Seed//y"}},
		{"empty list", `{"apiVersion":"v1","kind":"List","items":[]}`, []string{}},
		{"empty input", "  \n", []string{}},
		{"only separators and comments", "---\n# nothing\n---\n", []string{}},
		{"unknown kind only", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\n", []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := landscape.Decode([]byte(tc.in))
			require.NoError(t, err)
			assert.Equal(t, tc.want, kindsAndNames(objs))
		})
	}
}

func TestDecodeTyped(t *testing.T) {
	objs, err := landscape.Decode([]byte(jsonList))
	require.NoError(t, err)
	sd := objs[0].(*api.Seed)
	q := sd.Status.Allocatable[api.ResourceShoots]
	assert.Equal(t, int64(250), q.Value())
	assert.Equal(t, "3", sd.ResourceVersion)
	sh := objs[1].(*api.Shoot)
	assert.Equal(t, "seed-a", *sh.Spec.SeedName)
	assert.Equal(t, "seed-b", *sh.Status.SeedName)

	objs, err = landscape.Decode([]byte(yamlMultiDoc))
	require.NoError(t, err)
	cp := objs[0].(*api.CloudProfile)
	assert.Equal(t, map[string]string{"env": "prod"}, cp.Spec.SeedSelector.MatchLabels)
	assert.Equal(t, []string{"*"}, cp.Spec.SeedSelector.ProviderTypes)
	cm := objs[1].(*corev1.ConfigMap)
	assert.Equal(t, "eu-west-1: 0\neu-central-1: 10\n", cm.Data["eu-west-1"])

	// And the whole thing loads into a Store.
	s := cache.NewStore(cache.Options{})
	s.Load(objs)
	snap := s.Snapshot()
	assert.Len(t, snap.RegionConfigs, 1)
	assert.Contains(t, snap.CloudProfiles, "aws")
	assert.Contains(t, snap.NamespacedCloudProfiles, "garden-dev/custom")
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{
			name: "bad quantity names item, kind, name and field",
			in: `apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Secret, metadata: {name: s}}
- {apiVersion: core.gardener.cloud/v1beta1, kind: Project, metadata: {name: p}}
- {apiVersion: core.gardener.cloud/v1beta1, kind: CloudProfile, metadata: {name: c}}
- apiVersion: core.gardener.cloud/v1beta1
  kind: Seed
  metadata: {name: seed-a}
  status:
    allocatable:
      shoots: lots
`,
			want: `item 3 (Seed "seed-a"): status.allocatable.shoots: quantities must match the regular expression`,
		},
		{
			name: "wrong type in a list field",
			in:   `{"apiVersion":"core.gardener.cloud/v1beta1","kind":"Seed","metadata":{"name":"x"},"spec":{"taints":[{"key":"a"},{"key":7}]}}`,
			want: `item 0 (Seed "x"): spec.taints[1].key: json: cannot unmarshal number`,
		},
		{
			name: "namespaced object named with its namespace",
			in:   `{"apiVersion":"core.gardener.cloud/v1beta1","kind":"Shoot","metadata":{"name":"s","namespace":"garden-dev"},"spec":{"seedName":["a"]}}`,
			want: `item 0 (Shoot "garden-dev/s"): spec.seedName: json: cannot unmarshal array`,
		},
		{
			name: "bad metadata",
			in:   `{"apiVersion":"core.gardener.cloud/v1beta1","kind":"Seed","metadata":{"name":"x","labels":{"a":1}}}`,
			want: `item 0 (Seed "x"): metadata.labels.a: json: cannot unmarshal number`,
		},
		{
			name: "ConfigMap data must be strings",
			in:   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: rc, namespace: garden}\ndata:\n  eu-west-1:\n    eu-west-1: 0\n",
			want: `item 0 (ConfigMap "garden/rc"): data.eu-west-1: json: cannot unmarshal object`,
		},
		{
			name: "missing kind",
			in:   "---\napiVersion: core.gardener.cloud/v1beta1\nkind: Seed\nmetadata: {name: a}\n---\napiVersion: core.gardener.cloud/v1beta1\nmetadata: {name: b}\n",
			want: `item 1 ("b"): apiVersion and kind are required`,
		},
		{
			name: "missing apiVersion",
			in:   `{"kind":"Seed","metadata":{"name":"b"}}`,
			want: `item 0 (Seed "b"): apiVersion and kind are required`,
		},
		{
			name: "kind not a string",
			in:   `{"apiVersion":"v1","kind":3}`,
			want: `item 0: kind: must be a string`,
		},
		{
			name: "scalar document",
			in:   "just text\n",
			want: `item 0: not an object`,
		},
		{
			name: "list items not an array",
			in:   `{"apiVersion":"v1","kind":"List","items":{"a":1}}`,
			want: `item 0 (List): items:`,
		},
		{
			name: "invalid YAML",
			in:   "a: [1, 2\n",
			want: `document 0: invalid YAML`,
		},
		{
			name: "invalid JSON",
			in:   `{"apiVersion": "v1",`,
			want: `document 0: invalid JSON`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := landscape.Decode([]byte(tc.in))
			assert.Nil(t, objs)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		jsonList, yamlMultiDoc, "", "---", "[]", "{}", "null", `{"kind":"List","items":[[[]]]}`,
		`{"apiVersion":"core.gardener.cloud/v1beta1","kind":"Seed","status":{"allocatable":{"shoots":"1Ki"}}}`,
		"apiVersion: core.gardener.cloud/v1beta1\nkind: Shoot\nspec:\n  seedName: 1\n",
		autoscalerDoc, managedSeedSetDoc,
		`{"apiVersion":"autoscaling.seedwarden.io/v1alpha1","kind":"SeedAutoscaler","spec":{"maxReplicas":1,"maxReplicas":2}}`,
		// Near misses, other versions, repeats and positions (strict.go).
		"# c\n---\napiVersion: core.gardener.cloud/v1beta1\nkind: Seed\nmetadata: {name: a}\nstatus:\n  alocatable: {shoots: \"1\"}\n",
		"apiVersion: core.gardener.cloud/v1beta1\nkind: Shoot\nmetadata: {name: a, namespace: n}\nspec: {regoin: r, Region: r, region: r}\n",
		"apiVersion: core.gardener.cloud/v1\nkind: Seed\nmetadata: {name: a}\n",
		"apiVersion: v1\nkind: List\nitems:\n- &s {apiVersion: core.gardener.cloud/v1beta1, kind: Seed, metadata: {name: a}}\n- *s\n",
		"{\"apiVersion\":\"core.gardener.cloud/v1beta1\",\"kind\":\"Seed\",\"metadata\":{\"name\":\"a\"},\n\"spec\":{\"taints\":[{\"kee\":\"x\"}]}}",
		"--- # c\na: 1\n--- x\n",
		realDump,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		warned := 0
		objs, err := landscape.DecodeWarn(data, func(string) { warned++ })
		plain, plainErr := landscape.Decode(data)
		if (err == nil) != (plainErr == nil) || len(objs) != len(plain) {
			t.Fatalf("warning changed the outcome: %v vs %v", err, plainErr)
		}
		// A file written by hand is refused where a landscape is warned.
		if _, shootErr := landscape.DecodeShoot(data); warned > 0 && shootErr == nil {
			t.Fatalf("%d near misses warned, yet DecodeShoot accepted the file", warned)
		}
		if err != nil {
			return
		}
		// Whatever decodes must also load.
		cache.NewStore(cache.Options{}).Load(objs)
	})
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	require.NoError(t, os.WriteFile(good, []byte(yamlMultiDoc), 0o600))
	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("apiVersion: core.gardener.cloud/v1beta1\nmetadata: {name: b}\n"), 0o600))

	objs, err := landscape.ReadFile(good, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"CloudProfile//aws", "ConfigMap/garden/rc", "NamespacedCloudProfile/garden-dev/custom"}, kindsAndNames(objs))

	_, err = landscape.ReadFile(bad, nil)
	require.EqualError(t, err, "landscape "+bad+`: line 1: item 0 ("b"): apiVersion and kind are required`)

	_, err = landscape.ReadFile(filepath.Join(dir, "missing.yaml"), nil)
	require.ErrorIs(t, err, fs.ErrNotExist)
}

// A file with nothing ReadFile decodes is refused, naming the file: an
// empty landscape is a wrong path or a failed dump, not a garden.
func TestReadFileRefusesEmpty(t *testing.T) {
	for _, tc := range []struct{ name, content string }{
		{"no bytes", ""},
		{"blank lines", "\n  \n"},
		{"comments only", "# the landscape\n---\n# nothing yet\n"},
		{"empty List", "apiVersion: v1\nkind: List\nitems: []\n"},
		{"empty JSON array", "[]"},
		{"only unsupported kinds", "apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: garden}\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "landscape.yaml")
			require.NoError(t, os.WriteFile(path, []byte(tc.content), 0o600))
			objs, err := landscape.ReadFile(path, nil)
			require.ErrorIs(t, err, landscape.ErrEmpty)
			assert.Nil(t, objs)
			assert.Equal(t, "landscape "+path+": empty: no Seed, Shoot, CloudProfile, NamespacedCloudProfile, Project or ConfigMap in it", err.Error())
		})
	}
}
