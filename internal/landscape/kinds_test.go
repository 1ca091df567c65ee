package landscape_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seedwarden/seedwarden/internal/autoscalingapi"
	"github.com/seedwarden/seedwarden/internal/landscape"
	"github.com/seedwarden/seedwarden/internal/seedmanagement"
)

const autoscalerDoc = `apiVersion: autoscaling.seedwarden.io/v1alpha1
kind: SeedAutoscaler
metadata: {name: aws-eu, namespace: garden}
spec:
  scaleTargetRef: {apiVersion: seedmanagement.gardener.cloud/v1alpha1, kind: ManagedSeedSet, name: aws-eu}
  minReplicas: 2
  maxReplicas: 6
  metrics:
  - type: Resource
    resource: {name: shoots, target: {type: Utilization, averageUtilization: 80}}
  - type: Headroom
    headroom: {profile: small, minShoots: 20}
`

// A ManagedSeedSet as Gardener serves it, with fields seedwarden does not
// read: they are skipped, not refused.
const managedSeedSetDoc = `apiVersion: seedmanagement.gardener.cloud/v1alpha1
kind: ManagedSeedSet
metadata: {name: aws-eu, namespace: garden}
spec:
  replicas: 3
  revisionHistoryLimit: 10
  updateStrategy: {type: RollingUpdate}
  selector: {matchLabels: {set: aws-eu}}
  template:
    metadata: {labels: {set: aws-eu}}
    spec:
      gardenlet:
        config:
          apiVersion: gardenlet.config.gardener.cloud/v1alpha1
          kind: GardenletConfiguration
          seedConfig:
            spec: {provider: {type: aws, region: eu-west-1}}
  shootTemplate: {spec: {region: eu-west-1}}
status: {replicas: 3, nextReplicaNumber: 3}
`

func writeKinds(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "autoscaling.yaml")
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
}

func TestReadKinds(t *testing.T) {
	objs, err := landscape.ReadKinds(writeKinds(t, autoscalerDoc+"---\n"+managedSeedSetDoc),
		landscape.KindSeedAutoscaler, landscape.KindManagedSeedSet)
	require.NoError(t, err)
	require.Len(t, objs, 2)
	sa := objs[0].(*autoscalingapi.SeedAutoscaler)
	assert.Equal(t, "aws-eu", sa.Spec.ScaleTargetRef.Name)
	assert.Equal(t, int32(2), *sa.Spec.MinReplicas)
	assert.Equal(t, "small", sa.Spec.Metrics[1].Headroom.Profile)
	mss := objs[1].(*seedmanagement.ManagedSeedSet)
	assert.Equal(t, int32(3), *mss.Spec.Replicas)
	assert.Equal(t, int32(3), mss.Status.NextReplicaNumber)
	seed, ok, err := mss.SeedTemplate()
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, "eu-west-1", seed.Spec.Provider.Region)
}

// Both kinds are landscape kinds too: a ManagedSeedSet may come with the
// landscape's dump.
func TestDecodeAutoscalingKinds(t *testing.T) {
	objs, err := landscape.Decode([]byte(managedSeedSetDoc + "---\n" + autoscalerDoc))
	require.NoError(t, err)
	assert.Equal(t, []string{"ManagedSeedSet/garden/aws-eu", "SeedAutoscaler/garden/aws-eu"}, kindsAndNames(objs))
}

func TestReadKindsRefuses(t *testing.T) {
	sa := func(spec string) string {
		return "apiVersion: autoscaling.seedwarden.io/v1alpha1\nkind: SeedAutoscaler\nmetadata: {name: x, namespace: garden}\nspec:\n" +
			"  scaleTargetRef: {apiVersion: seedmanagement.gardener.cloud/v1alpha1, kind: ManagedSeedSet, name: s}\n" + spec
	}
	const shoots = "  metrics: [{type: Resource, resource: {name: shoots, target: {type: Utilization, averageUtilization: 80}}}]\n"
	tests := []struct{ name, in, want string }{
		{"empty file", "# nothing\n", "empty: no autoscaling.seedwarden.io/v1alpha1 SeedAutoscaler or seedmanagement.gardener.cloud/v1alpha1 ManagedSeedSet in it"},
		{"a landscape kind", "apiVersion: core.gardener.cloud/v1beta1\nkind: Seed\nmetadata: {name: a}\n",
			`item 0 (Seed "a"): core.gardener.cloud/v1beta1 Seed is not autoscaling.seedwarden.io/v1alpha1 SeedAutoscaler or seedmanagement.gardener.cloud/v1alpha1 ManagedSeedSet`},
		{"unknown kind", "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: h, namespace: ns}\n",
			`item 0 (HorizontalPodAutoscaler "ns/h"): autoscaling/v2 HorizontalPodAutoscaler is not`},
		{"no kind", "apiVersion: autoscaling.seedwarden.io/v1alpha1\nmetadata: {name: x}\n", `item 0 ("x"): apiVersion and kind are required`},
		{"misspelt field", sa("  maxReplicas: 3\n  minReplica: 1\n" + shoots), `line 7: item 0 (SeedAutoscaler "garden/x"): spec.minReplica: unknown field; did you mean "minReplicas"?`},
		{"repeated field", `{"apiVersion":"autoscaling.seedwarden.io/v1alpha1","kind":"SeedAutoscaler","metadata":{"name":"x"},"spec":{"maxReplicas":3,"maxReplicas":4}}`,
			`item 0 (SeedAutoscaler "x"): spec.maxReplicas: duplicate field`},
		{"wrong type", sa("  maxReplicas: many\n" + shoots), `item 0 (SeedAutoscaler "garden/x"): spec.maxReplicas: json: cannot unmarshal string`},
		{"no maxReplicas", sa(shoots), "spec.maxReplicas: 0: must be at least 1"},
		{"maxReplicas past the limit", sa("  maxReplicas: 100000\n" + shoots), "spec.maxReplicas: 100000: must be at most 1000"},
		{"min above max", sa("  minReplicas: 5\n  maxReplicas: 3\n" + shoots), "spec.minReplicas: 5: must not exceed spec.maxReplicas (3)"},
		{"no metrics", sa("  maxReplicas: 3\n"), "spec.metrics: at least one metric is required"},
		{"unknown metric type", sa("  maxReplicas: 3\n  metrics: [{type: Pods}]\n"), `spec.metrics[0].type: "Pods": must be Resource or Headroom`},
		{"utilization without percent", sa("  maxReplicas: 3\n  metrics: [{type: Resource, resource: {name: shoots, target: {type: Utilization}}}]\n"),
			"spec.metrics[0].resource.target.averageUtilization: unset: type Utilization needs a percent from 1 to 100"},
		{"utilization above 100", sa("  maxReplicas: 3\n  metrics: [{type: Resource, resource: {name: shoots, target: {type: Utilization, averageUtilization: 120}}}]\n"),
			"spec.metrics[0].resource.target.averageUtilization: 120: type Utilization needs a percent from 1 to 100"},
		{"resource not shoots", sa("  maxReplicas: 3\n  metrics: [{type: Resource, resource: {name: cpu, target: {type: AverageValue, averageValue: 3}}}]\n"),
			`spec.metrics[0].resource.name: "cpu": must be shoots`},
		{"headroom with both", sa("  maxReplicas: 3\n  metrics: [{type: Headroom, headroom: {profile: p, shoot: {apiVersion: core.gardener.cloud/v1beta1, kind: Shoot}, minShoots: 3}}]\n"),
			"spec.metrics[0].headroom: set exactly one of profile and shoot"},
		{"headroom field under Resource", sa("  maxReplicas: 3\n  metrics: [{type: Resource, headroom: {profile: p, minShoots: 3}}]\n"),
			"spec.metrics[0]: type Resource: set resource, and not headroom"},
		{"headroom without minShoots", sa("  maxReplicas: 3\n  metrics: [{type: Headroom, headroom: {profile: p}}]\n"),
			"spec.metrics[0].headroom.minShoots: 0: must be from 1 to 100000"},
		{"wrong target", "apiVersion: autoscaling.seedwarden.io/v1alpha1\nkind: SeedAutoscaler\nmetadata: {name: x}\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: d}\n  maxReplicas: 3\n" + shoots,
			`spec.scaleTargetRef.apiVersion: "apps/v1": must be seedmanagement.gardener.cloud/v1alpha1` + "\n" + `spec.scaleTargetRef.kind: "Deployment": must be ManagedSeedSet`},
		{"bad policy", sa("  maxReplicas: 3\n" + shoots + "  behavior: {scaleDown: {selectPolicy: Fast, stabilizationWindowSeconds: -1, policies: [{type: Pods, value: 0, periodSeconds: 0}]}}\n"),
			`spec.behavior.scaleDown.stabilizationWindowSeconds: -1: must be from 0 to 86400` + "\n" +
				`spec.behavior.scaleDown.selectPolicy: "Fast": must be Max, Min or Disabled` + "\n" +
				`spec.behavior.scaleDown.policies[0].type: "Pods": must be Seeds or Percent` + "\n" +
				`spec.behavior.scaleDown.policies[0].value: 0: must be at least 1` + "\n" +
				`spec.behavior.scaleDown.policies[0].periodSeconds: 0: must be from 1 to 86400`},
	}
	seventeen := "  maxReplicas: 3\n  metrics:\n" + strings.Repeat("  - {type: Headroom, headroom: {profile: p, minShoots: 3}}\n", autoscalingapi.MaxMetrics+1)
	big := "  maxReplicas: 3\n  metrics:\n  - type: Headroom\n    headroom:\n      minShoots: 3\n      shoot: {apiVersion: core.gardener.cloud/v1beta1, kind: Shoot, metadata: {annotations: {pad: " +
		strings.Repeat("x", autoscalingapi.MaxInlineShootBytes) + "}}}\n"
	tests = append(tests,
		struct{ name, in, want string }{"too many metrics", sa(seventeen), fmt.Sprintf("spec.metrics: %d metrics: at most %d", autoscalingapi.MaxMetrics+1, autoscalingapi.MaxMetrics)},
		struct{ name, in, want string }{"inline Shoot too large", sa(big), fmt.Sprintf("bytes of JSON: at most %d", autoscalingapi.MaxInlineShootBytes)},
	)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeKinds(t, tc.in)
			objs, err := landscape.ReadKinds(path, landscape.KindSeedAutoscaler, landscape.KindManagedSeedSet)
			assert.Nil(t, objs)
			require.Error(t, err)
			assert.Contains(t, err.Error(), path+": ")
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestReadKindsNeedsDecodableKinds(t *testing.T) {
	_, err := landscape.ReadKinds(writeKinds(t, autoscalerDoc), "apps/v1/Deployment")
	require.EqualError(t, err, "apps/v1/Deployment: not a kind this package decodes")
}
