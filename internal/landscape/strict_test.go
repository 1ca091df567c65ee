package landscape_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/landscape"
)

const seedHead = "apiVersion: core.gardener.cloud/v1beta1\nkind: Seed\nmetadata:\n  name: s1\n"

// seed is a Seed's first four lines, named name.
func seed(name string) string {
	return "apiVersion: core.gardener.cloud/v1beta1\nkind: Seed\nmetadata:\n  name: " + name + "\n"
}

// Near misses in a landscape file (a dump) are warnings naming the file's
// line, the item, the field and the suggestion; the object still decodes.
func TestNearMissesWarnInLandscapes(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{
			name: "misspelt allocatable in the second document",
			in:   "# landscape\n---\n" + seedHead + "---\n" + seed("s2") + "status:\n  alocatable:\n    shoots: \"3\"\n",
			want: []string{`line 13: item 1 (Seed "s2"): status.alocatable: unknown field; did you mean "allocatable"?`},
		},
		{
			name: "misspelt region of a Shoot in a List",
			in: "apiVersion: v1\nkind: List\nitems:\n- apiVersion: core.gardener.cloud/v1beta1\n  kind: Seed\n  metadata: {name: s1}\n" +
				"- apiVersion: core.gardener.cloud/v1beta1\n  kind: Shoot\n  metadata: {name: a, namespace: garden-dev}\n  spec:\n    regoin: eu-west-1\n",
			want: []string{`line 11: item 1 (Shoot "garden-dev/a"): spec.regoin: unknown field; did you mean "region"?`},
		},
		{
			name: "letter case",
			in:   seedHead + "spec:\n  provider: {type: aws, Region: eu-west-1}\n",
			want: []string{`line 6: item 0 (Seed "s1"): spec.provider.Region: unknown field; did you mean "region"?`},
		},
		{
			name: "concatenated JSON on its own lines",
			in: `{"apiVersion":"core.gardener.cloud/v1beta1","kind":"Seed","metadata":{"name":"a"}}` + "\n" +
				"{\"apiVersion\":\"core.gardener.cloud/v1beta1\",\"kind\":\"Seed\",\"metadata\":{\"name\":\"b\"},\n \"spec\":{\"taints\":[{\"kee\":\"x\"}]}}\n",
			want: []string{`line 3: item 1 (Seed "b"): spec.taints[0].kee: unknown field; did you mean "key"?`},
		},
		{
			name: "a field beside the one it resembles is another field",
			in:   seedHead + "spec:\n  provider: {type: aws, region: eu-west-1, regions: [a]}\n",
		},
		{
			name: "an unknown field near nothing known",
			in:   seedHead + "spec:\n  ingress: {domain: x}\n",
		},
		{name: "a real dump", in: realDump},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			objs, err := landscape.DecodeWarn([]byte(tc.in), func(s string) { got = append(got, s) })
			require.NoError(t, err)
			assert.NotEmpty(t, objs)
			assert.Equal(t, tc.want, got)
		})
	}
}

// realDump has the fields of Gardener's Seed and Shoot that the project's
// types leave out, as `kubectl get -o yaml` writes them: none is a near
// miss.
const realDump = `apiVersion: v1
kind: List
items:
- apiVersion: core.gardener.cloud/v1beta1
  kind: Seed
  metadata:
    name: aws-eu1
    labels: {seed.gardener.cloud/eu: "true"}
    managedFields: [{manager: gardenlet, operation: Update}]
  spec:
    backup: {provider: aws, region: eu-west-1, providerConfig: {}, credentialsRef: {kind: Secret, name: b}}
    dns:
      provider: {type: aws-route53}
      internal: {type: aws-route53, domain: i.example.com, zone: Z1, credentialsRef: {name: d}}
    networks: {nodes: 10.250.0.0/16, pods: 100.96.0.0/11, services: 100.64.0.0/13, blockCIDRs: [169.254.169.254/32], ipFamilies: [IPv4]}
    provider: {type: aws, region: eu-west-1, zones: [a], providerConfig: {}}
    volume: {minimumSize: 20Gi}
    settings:
      excessCapacityReservation: {enabled: true}
      loadBalancerServices: {annotations: {a: b}}
      verticalPodAutoscaler: {enabled: true}
      scheduling: {visible: true}
  status:
    gardener: {id: x, name: gardenlet, version: v1.120.0}
    kubernetesVersion: v1.31.1
    observedGeneration: 4
    clusterIdentity: aws-eu1
    conditions: [{type: GardenletReady, status: "True", lastTransitionTime: "2026-01-01T00:00:00Z", lastUpdateTime: "2026-01-01T00:00:00Z", reason: R, message: M}]
    allocatable: {shoots: "250"}
    capacity: {shoots: "250"}
- apiVersion: core.gardener.cloud/v1beta1
  kind: Shoot
  metadata: {name: a, namespace: garden-dev, finalizers: [gardener], generation: 3, uid: u}
  spec:
    addons: {kubernetesDashboard: {enabled: false}}
    cloudProfile: {kind: CloudProfile, name: aws}
    credentialsBindingName: c
    secretBindingName: s
    dns: {domain: a.example.com, providers: [{type: aws-route53}]}
    extensions: [{type: shoot-dns-service}]
    hibernation: {enabled: false}
    kubernetes: {version: 1.31.1, kubeAPIServer: {}}
    maintenance: {autoUpdate: {kubernetesVersion: true}, timeWindow: {begin: 220000+0100, end: 230000+0100}, confineSpecUpdateRollout: false}
    monitoring: {alerting: {}}
    networking: {type: calico, nodes: 10.250.0.0/16, providerConfig: {}}
    provider:
      type: aws
      controlPlaneConfig: {}
      infrastructureConfig: {}
      workers:
      - name: w
        machine: {type: m5.large, image: {name: gardenlinux}}
        maximum: 3
        minimum: 1
        maxSurge: 1
        maxUnavailable: 0
        zones: [eu-west-1a]
        cri: {name: containerd}
        volume: {size: 50Gi}
        labels: {a: b}
        taints: [{key: k, effect: NoSchedule}]
    purpose: evaluation
    region: eu-west-1
    resources: [{name: r, resourceRef: {kind: Secret, name: r}}]
    exposureClassName: e
    systemComponents: {coreDNS: {}}
    seedName: aws-eu1
  status:
    constraints: [{type: HibernationPossible, status: "True"}]
    conditions: [{type: APIServerAvailable, status: "True"}]
    gardener: {id: x, name: gardener, version: v1.120.0}
    hibernated: false
    lastErrors: []
    lastOperation: {type: Reconcile, state: Succeeded, progress: 100, description: done, lastUpdateTime: "2026-01-01T00:00:00Z"}
    observedGeneration: 3
    seedName: aws-eu1
    technicalID: shoot--dev--a
    uid: u
    advertisedAddresses: [{name: external, url: "https://api.a.example.com"}]
    networking: {nodes: [10.250.0.0/16], pods: [100.96.0.0/11], services: [100.64.0.0/13]}
`

// Files written by hand refuse what a landscape only warns of: the answer
// would change.
func TestNearMissesRefusedInHandWrittenFiles(t *testing.T) {
	_, err := landscape.DecodeShoot([]byte("apiVersion: core.gardener.cloud/v1beta1\nkind: Shoot\nmetadata: {name: a, namespace: garden-dev}\nspec:\n  regoin: eu-west-1\n"))
	require.EqualError(t, err, `line 5: item 0 (Shoot "garden-dev/a"): spec.regoin: unknown field; did you mean "region"?`)

	path := filepath.Join(t.TempDir(), "seed.yaml")
	require.NoError(t, os.WriteFile(path, []byte(seedHead+"status:\n  alocatable: {shoots: \"3\"}\n  Conditions: []\n"), 0o600))
	_, err = landscape.ReadHandWritten(path)
	require.EqualError(t, err, "landscape "+path+`: line 7: item 0 (Seed "s1"): status.Conditions: unknown field; did you mean "conditions"?`+"\n"+
		`line 6: item 0 (Seed "s1"): status.alocatable: unknown field; did you mean "allocatable"?`)

	// The same file as a landscape: warned, and read.
	var warned []string
	objs, err := landscape.ReadFile(path, func(s string) { warned = append(warned, s) })
	require.NoError(t, err)
	assert.Len(t, objs, 1)
	assert.Len(t, warned, 2)
	assert.Contains(t, warned[1], "landscape "+path+`: line 6: item 0 (Seed "s1"): status.alocatable`)

	shoot, err := landscape.DecodeShoot([]byte("apiVersion: core.gardener.cloud/v1beta1\nkind: Shoot\nmetadata: {name: a}\nspec: {region: r, kubernetes: {version: 1.31.1}}\n"))
	require.NoError(t, err, "a Gardener field the types leave out is no near miss")
	assert.Equal(t, "r", shoot.Spec.Region)
}

// Another version of a kind the landscape reads, and an object given
// twice, are refused with their positions.
func TestDecodeRefusesOtherVersionsAndRepeats(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{
			name: "Seed of core.gardener.cloud/v1",
			in:   seedHead + "---\napiVersion: core.gardener.cloud/v1\nkind: Seed\nmetadata: {name: s2}\n",
			want: `line 6: item 1 (Seed "s2"): apiVersion core.gardener.cloud/v1: a Seed is read as core.gardener.cloud/v1beta1 only`,
		},
		{
			name: "Seed given twice",
			in:   seedHead + "---\n" + seedHead,
			want: `line 6: item 1 (Seed "s1"): given twice, first as item 0 at line 1`,
		},
		{
			name: "Shoot given twice in a List",
			in: `{"apiVersion":"v1","kind":"List","items":[` + "\n" +
				`{"apiVersion":"core.gardener.cloud/v1beta1","kind":"Shoot","metadata":{"name":"a","namespace":"n"}},` + "\n" +
				`{"apiVersion":"core.gardener.cloud/v1beta1","kind":"Shoot","metadata":{"name":"a","namespace":"n"}}]}`,
			want: `line 3: item 1 (Shoot "n/a"): given twice, first as item 0 at line 2`,
		},
		{
			name: "a field that does not decode, in the third document",
			in:   seedHead + "---\n" + seed("s2") + "---\n" + seed("s3") + "status:\n  allocatable:\n    shoots: lots\n",
			want: `line 17: item 2 (Seed "s3"): status.allocatable.shoots: quantities must match`,
		},
		{
			name: "invalid YAML in the second document",
			in:   seedHead + "---\n# a comment\nkind: [a\n",
			want: `document 1: invalid YAML: yaml: line 7: did not find`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := landscape.Decode([]byte(tc.in))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	// The same name in another kind or namespace is another object.
	objs, err := landscape.Decode([]byte(seedHead + "---\napiVersion: core.gardener.cloud/v1beta1\nkind: Shoot\nmetadata: {name: s1, namespace: a}\n" +
		"---\napiVersion: core.gardener.cloud/v1beta1\nkind: Shoot\nmetadata: {name: s1, namespace: b}\n" +
		"---\napiVersion: project.openshift.io/v1\nkind: Project\nmetadata: {name: p}\n"))
	require.NoError(t, err)
	assert.Len(t, objs, 3)
	_, isSeed := objs[0].(*api.Seed)
	assert.True(t, isSeed)
}
