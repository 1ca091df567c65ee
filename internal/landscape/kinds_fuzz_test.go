package landscape

import (
	"testing"

	"github.com/seedwarden/seedwarden/internal/autoscalingapi"
)

// FuzzDecodeKinds: a file of given kinds yields only those kinds, and
// every SeedAutoscaler it yields passes the CRD's rules.
func FuzzDecodeKinds(f *testing.F) {
	for _, s := range []string{
		"", "---", "[]", `{"kind":"List","items":[]}`,
		"apiVersion: autoscaling.seedwarden.io/v1alpha1\nkind: SeedAutoscaler\nmetadata: {name: x}\nspec:\n" +
			"  scaleTargetRef: {apiVersion: seedmanagement.gardener.cloud/v1alpha1, kind: ManagedSeedSet, name: s}\n" +
			"  maxReplicas: 3\n  metrics: [{type: Headroom, headroom: {profile: p, minShoots: 3}}]\n",
		"apiVersion: seedmanagement.gardener.cloud/v1alpha1\nkind: ManagedSeedSet\nmetadata: {name: s}\nspec: {replicas: 2, selector: {matchLabels: {a: b}}}\n",
		`{"apiVersion":"core.gardener.cloud/v1beta1","kind":"Seed","metadata":{"name":"x"}}`,
	} {
		f.Add([]byte(s))
	}
	only := map[string]bool{KindSeedAutoscaler: true, KindManagedSeedSet: true}
	f.Fuzz(func(t *testing.T, data []byte) {
		objs, err := decode(data, reading{only: only, handWritten: true})
		if err != nil {
			return
		}
		for _, o := range objs {
			gvk := o.GetObjectKind().GroupVersionKind()
			if key := gvk.GroupVersion().String() + "/" + gvk.Kind; !only[key] {
				t.Fatalf("decoded %s, not one of the kinds asked for", key)
			}
			if sa, ok := o.(*autoscalingapi.SeedAutoscaler); ok {
				if err := checkSeedAutoscaler(&sa.Spec); err != nil {
					t.Fatalf("a SeedAutoscaler that fails its checks was returned: %v", err)
				}
			}
		}
	})
}
