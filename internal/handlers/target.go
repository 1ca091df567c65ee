package handlers

import (
	"fmt"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// admissionTarget is the kind and resource a webhook is registered for.
type admissionTarget struct {
	group, version, kind, resource string
	// subresource is allowed besides the main resource; "" allows only the
	// main resource.
	subresource string
}

// check rejects a request for anything but t: such a request means the
// webhook configuration is wrong.
func (t admissionTarget) check(k metav1.GroupVersionKind, res metav1.GroupVersionResource, sub string, op admissionv1.Operation) error {
	if k.Group != t.group || k.Version != t.version || k.Kind != t.kind {
		gv := schema.GroupVersion{Group: t.group, Version: t.version}
		return fmt.Errorf("seedwarden: expected kind %s %s, got %q (operation %q); check the webhook configuration",
			gv, t.kind, k.String(), op)
	}
	if res.Group == t.group && res.Resource == t.resource && (sub == "" || t.subresource != "" && sub == t.subresource) {
		return nil
	}
	got := res.Resource
	if sub != "" {
		got += "/" + sub
	}
	in := "group " + t.group
	if t.group == "" {
		in = "the core group"
	}
	if t.subresource != "" {
		return fmt.Errorf("seedwarden: expected resource %s or %s/%s in %s, got %q in group %q (operation %q); check the webhook configuration",
			t.resource, t.resource, t.subresource, in, got, res.Group, op)
	}
	return fmt.Errorf("seedwarden: expected resource %s in %s without subresource, got %q in group %q (operation %q); check the webhook configuration",
		t.resource, in, got, res.Group, op)
}

// checkCoreV1Target rejects requests for anything but the core/v1 kind and
// resource (main resource) a handler serves.
func checkCoreV1Target(req admission.Request, kind, resource string) error {
	return admissionTarget{version: "v1", kind: kind, resource: resource}.check(req.Kind, req.Resource, req.SubResource, req.Operation)
}
