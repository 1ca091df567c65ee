package handlers

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seedwarden/seedwarden/internal/placement"
	"github.com/seedwarden/seedwarden/internal/placementtoken"
)

// Placement mode binding: the seed is announced in annotations and a warning,
// and spec.seedName is left to the retry controller, because
// gardener-apiserver refuses a CREATE that sets it unless its user may bind.
// Another scheduler name claims the Shoot in spec.schedulerName.
func TestShootMutatorAnnouncesAndClaims(t *testing.T) {
	noSpec := `{"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot", "metadata": {"name": "n", "namespace": "garden-dev"}}`
	tests := []struct {
		name      string
		announce  bool
		scheduler string // default default-scheduler
		object    string // default shootJSON("", "")
		decision  placement.Decision
		wantPatch string // JSON, without the token (checked apart)
		wantWarn  []string
		wantCall  bool
	}{{
		name:     "announced, not set",
		announce: true,
		decision: scheduled,
		wantPatch: `[{"op":"add","path":"/metadata/annotations","value":{
			"seedwarden.io/reservation":"` + testUID + `","seedwarden.io/placement":"TOKEN","seedwarden.io/seed":"aws-eu2"}}]`,
		wantWarn: []string{`seedwarden: will be scheduled to seed "aws-eu2"`},
		wantCall: true,
	}, {
		name:     "announced, unschedulable: nothing to announce",
		announce: true,
		decision: unschedulable,
		wantWarn: []string{UnschedulableWarningPrefix + "0/3 seeds eligible: aws-eu1: taints not tolerated, aws-eu2: no capacity, gcp-eu1: provider type does not match"},
		wantCall: true,
	}, {
		name:      "claimed and set",
		scheduler: "seedwarden",
		decision:  scheduled,
		wantPatch: `[{"op":"add","path":"/spec/seedName","value":"aws-eu2"},{"op":"add","path":"/spec/schedulerName","value":"seedwarden"},
			{"op":"add","path":"/metadata/annotations","value":{"seedwarden.io/reservation":"` + testUID + `","seedwarden.io/placement":"TOKEN"}}]`,
		wantCall: true,
	}, {
		name:      "claimed from default-scheduler and announced",
		announce:  true,
		scheduler: "seedwarden",
		object:    shootJSON("", `"schedulerName": "default-scheduler",`),
		decision:  scheduled,
		wantPatch: `[{"op":"add","path":"/spec/schedulerName","value":"seedwarden"},{"op":"add","path":"/metadata/annotations","value":{
			"seedwarden.io/reservation":"` + testUID + `","seedwarden.io/placement":"TOKEN","seedwarden.io/seed":"aws-eu2"}}]`,
		wantWarn: []string{`seedwarden: will be scheduled to seed "aws-eu2"`},
		wantCall: true,
	}, {
		name:      "already ours: no claim",
		scheduler: "seedwarden",
		object:    shootJSON("", `"schedulerName": "seedwarden",`),
		decision:  scheduled,
		wantPatch: `[{"op":"add","path":"/spec/seedName","value":"aws-eu2"},
			{"op":"add","path":"/metadata/annotations","value":{"seedwarden.io/reservation":"` + testUID + `","seedwarden.io/placement":"TOKEN"}}]`,
		wantCall: true,
	}, {
		name:      "claimed without a spec",
		scheduler: "seedwarden",
		object:    noSpec,
		decision:  scheduled,
		wantPatch: `[{"op":"add","path":"/spec","value":{"seedName":"aws-eu2","schedulerName":"seedwarden"}},
			{"op":"add","path":"/metadata/annotations","value":{"seedwarden.io/reservation":"` + testUID + `","seedwarden.io/placement":"TOKEN"}}]`,
		wantCall: true,
	}, {
		name:      "announced without a spec: only the claim creates one",
		announce:  true,
		scheduler: "seedwarden",
		object:    noSpec,
		decision:  scheduled,
		wantPatch: `[{"op":"add","path":"/spec","value":{"schedulerName":"seedwarden"}},{"op":"add","path":"/metadata/annotations","value":{
			"seedwarden.io/reservation":"` + testUID + `","seedwarden.io/placement":"TOKEN","seedwarden.io/seed":"aws-eu2"}}]`,
		wantWarn: []string{`seedwarden: will be scheduled to seed "aws-eu2"`},
		wantCall: true,
	}, {
		// Claimed although unschedulable: the retry controller of this
		// scheduler, not gardener-scheduler, keeps trying.
		name:      "claimed and unschedulable",
		scheduler: "seedwarden",
		decision:  unschedulable,
		wantPatch: `[{"op":"add","path":"/spec/schedulerName","value":"seedwarden"}]`,
		wantWarn:  []string{UnschedulableWarningPrefix + "0/3 seeds eligible: aws-eu1: taints not tolerated, aws-eu2: no capacity, gcp-eu1: provider type does not match"},
		wantCall:  true,
	}, {
		name:      "another scheduler's Shoot is neither claimed nor placed",
		announce:  true,
		scheduler: "seedwarden",
		object:    shootJSON("", `"schedulerName": "custom",`),
		decision:  scheduled,
	}, {
		name:      "a Shoot with a seed is not claimed",
		scheduler: "seedwarden",
		object:    shootJSON("", `"seedName": "gcp-eu1",`),
		decision:  scheduled,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			placer := &fakePlacer{decision: tt.decision}
			m := newMutator(t, placer, nil)
			m.Announce = tt.announce
			if tt.scheduler != "" {
				m.SchedulerName = tt.scheduler
			}
			m.Signer = vSigner(t, newVClock())
			object := tt.object
			if object == "" {
				object = shootJSON("", "")
			}
			_, ar := serve(t, m, t.Context(), review{object: object}.body())
			resp := ar.Response
			require.NotNil(t, resp)
			assert.True(t, resp.Allowed)
			assert.Equal(t, tt.wantWarn, resp.Warnings)
			assert.Equal(t, tt.wantCall, len(placer.Calls()) == 1)
			if tt.wantPatch == "" {
				assert.Empty(t, resp.Patch)
				return
			}
			patched := applyPatch(t, object, resp.Patch)
			annotations, _ := patched["metadata"].(map[string]any)["annotations"].(map[string]any)
			token, _ := annotations[placementtoken.Annotation].(string)
			if token != "" {
				// The token binds the announced seed to this Shoot.
				meta := patched["metadata"].(map[string]any)
				subject := placementtoken.Subject{Namespace: "garden-dev", Name: meta["name"].(string), Seed: "aws-eu2"}
				assert.NoError(t, m.Signer.Verify(token, subject))
			}
			assert.JSONEq(t, tt.wantPatch, replaceToken(string(resp.Patch), token))
			spec := patched["spec"].(map[string]any)
			if tt.announce {
				assert.NotContains(t, spec, "seedName")
				assert.Equal(t, "aws-eu2", annotations[placementtoken.SeedAnnotation])
			}
		})
	}
}

func replaceToken(patch, token string) string {
	if token == "" {
		return patch
	}
	return strings.ReplaceAll(patch, token, "TOKEN")
}
