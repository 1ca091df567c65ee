package handlers

import (
	"testing"

	"github.com/stretchr/testify/assert"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestAdmissionTargetCheck(t *testing.T) {
	shoots := admissionTarget{"core.gardener.cloud", "v1beta1", "Shoot", "shoots", ""}
	shootsOrBinding := shoots
	shootsOrBinding.subresource = "binding"
	secrets := admissionTarget{version: "v1", kind: "Secret", resource: "secrets"}
	shootKind := metav1.GroupVersionKind{Group: "core.gardener.cloud", Version: "v1beta1", Kind: "Shoot"}
	shootRes := metav1.GroupVersionResource{Group: "core.gardener.cloud", Version: "v1beta1", Resource: "shoots"}
	secretKind := metav1.GroupVersionKind{Version: "v1", Kind: "Secret"}
	secretRes := metav1.GroupVersionResource{Version: "v1", Resource: "secrets"}
	const cfg = "; check the webhook configuration"

	for name, tc := range map[string]struct {
		target  admissionTarget
		kind    metav1.GroupVersionKind
		res     metav1.GroupVersionResource
		sub     string
		wantErr string
	}{
		"shoot":                      {target: shoots, kind: shootKind, res: shootRes},
		"shoot binding not allowed":  {target: shoots, kind: shootKind, res: shootRes, sub: "binding", wantErr: `seedwarden: expected resource shoots in group core.gardener.cloud without subresource, got "shoots/binding" in group "core.gardener.cloud" (operation "CREATE")` + cfg},
		"shoot wrong kind":           {target: shoots, kind: secretKind, res: shootRes, wantErr: `seedwarden: expected kind core.gardener.cloud/v1beta1 Shoot, got "/v1, Kind=Secret" (operation "CREATE")` + cfg},
		"binding allowed":            {target: shootsOrBinding, kind: shootKind, res: shootRes, sub: "binding"},
		"main resource with binding": {target: shootsOrBinding, kind: shootKind, res: shootRes},
		"other subresource":          {target: shootsOrBinding, kind: shootKind, res: shootRes, sub: "status", wantErr: `seedwarden: expected resource shoots or shoots/binding in group core.gardener.cloud, got "shoots/status" in group "core.gardener.cloud" (operation "CREATE")` + cfg},
		"secret":                     {target: secrets, kind: secretKind, res: secretRes},
		"secret wrong kind":          {target: secrets, kind: shootKind, res: secretRes, wantErr: `seedwarden: expected kind v1 Secret, got "core.gardener.cloud/v1beta1, Kind=Shoot" (operation "CREATE")` + cfg},
		"secret wrong group":         {target: secrets, kind: secretKind, res: shootRes, wantErr: `seedwarden: expected resource secrets in the core group without subresource, got "shoots" in group "core.gardener.cloud" (operation "CREATE")` + cfg},
	} {
		t.Run(name, func(t *testing.T) {
			err := tc.target.check(tc.kind, tc.res, tc.sub, admissionv1.Create)
			if tc.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			assert.EqualError(t, err, tc.wantErr)
		})
	}
}
