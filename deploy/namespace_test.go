package manifests_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestNamespace(t *testing.T) {
	ns := find[*corev1.Namespace](t, manifests(t), "Namespace", "", namespace)
	if ns.Labels[metadataName] != namespace {
		t.Errorf("label %s = %q", metadataName, ns.Labels[metadataName])
	}
	if ns.Labels["pod-security.kubernetes.io/enforce"] != "restricted" {
		t.Errorf("the namespace does not enforce the restricted Pod Security Standard")
	}
}
