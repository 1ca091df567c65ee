package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// shootValidatorPolicy emulates the scheduling rules of gardener-apiserver's
// ShootValidator on the Shoot CRD (see the file's comment): without it, the
// e2e API server would accept a spec.seedName that a real Gardener refuses,
// and placement mode "patch" would look fine where it cannot work.
const (
	shootValidatorPolicyFile = "e2e/testdata/shootvalidator-policy.yaml"
	shootValidatorPolicyName = "e2e-shootvalidator-scheduling"
)

// applyShootValidatorPolicy creates the ValidatingAdmissionPolicy and its
// binding, and waits until the API server enforces them: policies take
// effect asynchronously, so a request they must deny (removing the seed of
// a landscape Shoot, as a dry run) is sent until it is denied.
func (st *suite) applyShootValidatorPolicy(ctx context.Context) error {
	if _, err := st.createManifests(ctx, shootValidatorPolicyFile); err != nil {
		return err
	}
	start := time.Now()
	probe := keyOf(projectNamespace, "billing") // a landscape Shoot on aws-eu1
	err := poll(ctx, 30*time.Second, 100*time.Millisecond, func() error {
		sh := &unstructured.Unstructured{}
		sh.SetGroupVersionKind(shootGVK)
		sh.SetNamespace(probe.Namespace)
		sh.SetName(probe.Name)
		err := st.c.Patch(ctx, sh, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"seedName":null}}`)), dryRunAll)
		if err == nil {
			return fmt.Errorf("removing spec.seedName of %s is still allowed", probe)
		}
		if !isPolicyDenial(err) {
			return fmt.Errorf("removing spec.seedName of %s: not denied by the policy: %w", probe, err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("ValidatingAdmissionPolicy %s not effective: %w", shootValidatorPolicyName, err)
	}
	logf("ShootValidator emulation (%s) effective after %s", shootValidatorPolicyFile, time.Since(start).Round(time.Millisecond))
	return nil
}

// isPolicyDenial reports whether err is a denial by the ShootValidator
// emulation.
func isPolicyDenial(err error) bool {
	return err != nil && strings.Contains(err.Error(), fmt.Sprintf("ValidatingAdmissionPolicy '%s'", shootValidatorPolicyName))
}

// TestShootValidatorEmulation checks the policy's UPDATE rules on a
// landscape Shoot (dry runs, as the admin, who may bind): the seed is never
// removed; a seed change may change nothing else in spec; an update that
// leaves the seed alone may change the rest; a seed change alone passes the
// policy (the webhooks then decide). The CREATE rule and a user who may not
// bind are covered by TestBindingRBAC and TestPatchModeNeedsBindingPermission.
func TestShootValidatorEmulation(t *testing.T) {
	st := need(t)
	ctx := context.Background()
	cases := []struct {
		name, patch string
		denied      string // part of the policy's message; "" when the policy admits
	}{
		{"remove the seed", `{"spec":{"seedName":null}}`, "cannot be removed"},
		{"change the seed and the purpose", `{"spec":{"seedName":"aws-eu2","purpose":"production"}}`, "may change nothing else in spec"},
		{"change the seed and add a spec field", `{"spec":{"seedName":"aws-eu2","hibernation":{"enabled":true}}}`, "may change nothing else in spec"},
		{"change the purpose only", `{"spec":{"purpose":"production"}}`, ""},
		{"change the seed only", `{"spec":{"seedName":"aws-eu2"}}`, ""},
	}
	for _, tc := range cases {
		sh := &unstructured.Unstructured{}
		sh.SetGroupVersionKind(shootGVK)
		sh.SetNamespace(projectNamespace)
		sh.SetName("billing")
		err := st.c.Patch(ctx, sh, client.RawPatch(types.MergePatchType, []byte(tc.patch)), dryRunAll)
		if tc.denied == "" {
			assert.False(t, isPolicyDenial(err), "%s: denied by the policy: %v", tc.name, err)
			t.Logf("%s: %v", tc.name, err)
			continue
		}
		if assert.True(t, isPolicyDenial(err), "%s: not denied by the policy: %v", tc.name, err) {
			assert.Contains(t, err.Error(), tc.denied, tc.name)
		}
	}
}
