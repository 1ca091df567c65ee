package admissionjson

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	kjson "sigs.k8s.io/json"
)

// FuzzDecodeSeedAutoscaler holds DecodeSeedAutoscaler to Kubernetes: on
// any bytes it returns an object or an error, never panics, and what it
// decodes of the fields the SeedAutoscaler webhook judges (the target,
// maxReplicas, how many metrics, each inline Shoot's bytes) is what the
// API server reads from the same bytes.
func FuzzDecodeSeedAutoscaler(f *testing.F) {
	for _, seed := range []string{
		`{"apiVersion":"autoscaling.seedwarden.io/v1alpha1","kind":"SeedAutoscaler","metadata":{"name":"a"},"spec":{"scaleTargetRef":{"name":"s"},"maxReplicas":3,"metrics":[{"type":"Resource"}]}}`,
		`{"spec":{"scaleTargetRef":{"name":"a","name":"b"},"maxReplicas":1,"maxReplicas":2}}`,
		`{"spec":{"scaleTargetRef":{"Name":"x","name":"y"}}}`,
		`{"spec":{"metrics":[{"type":"Headroom","headroom":{"shoot":{"kind":"Shoot","spec":{}},"minShoots":1}}]}}`,
		`{"kind":"ConfigMap"}`,
		`{"spec":{"maxReplicas":"3"}}`,
		`null`,
		`{"spec":{"metrics":null}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		sa, err := DecodeSeedAutoscaler(raw)
		if err != nil {
			return
		}
		var k8s map[string]any
		require.NoError(t, kjson.UnmarshalCaseSensitivePreserveInts(raw, &k8s), "decoded what Kubernetes cannot read")
		spec, _ := k8s["spec"].(map[string]any)
		ref, _ := spec["scaleTargetRef"].(map[string]any)
		name, _ := ref["name"].(string)
		assert.Equal(t, name, sa.Spec.ScaleTargetRef.Name, "spec.scaleTargetRef.name")
		maxR, _ := spec["maxReplicas"].(int64)
		assert.Equal(t, maxR, int64(sa.Spec.MaxReplicas), "spec.maxReplicas")
		metrics, _ := spec["metrics"].([]any)
		require.Len(t, sa.Spec.Metrics, len(metrics), "spec.metrics")
		for i, m := range sa.Spec.Metrics {
			if m.Headroom == nil || m.Headroom.Shoot == nil {
				continue
			}
			shoot := metrics[i].(map[string]any)["headroom"].(map[string]any)["shoot"]
			again, err := json.Marshal(shoot)
			if err == nil && shoot != nil {
				var a, b any
				require.NoError(t, kjson.UnmarshalCaseSensitivePreserveInts(again, &a))
				require.NoError(t, kjson.UnmarshalCaseSensitivePreserveInts(m.Headroom.Shoot.Raw, &b))
				assert.Equal(t, a, b, "spec.metrics[%d].headroom.shoot", i)
			}
		}
	})
}
