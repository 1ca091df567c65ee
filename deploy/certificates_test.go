package manifests_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestCertificates(t *testing.T) {
	docs := manifests(t)
	cert := findU(t, docs, "Certificate", namespace, certificate)
	want := map[string]any{
		"duration":    "2160h",
		"renewBefore": "360h",
	}
	for k, v := range want {
		if got := cert.Object["spec"].(map[string]any)[k]; got != v {
			t.Errorf("%s = %v, want %v", k, got, v)
		}
	}
	pk, _, _ := unstructured.NestedMap(cert.Object, "spec", "privateKey")
	if pk["algorithm"] != "ECDSA" || pk["rotationPolicy"] != "Always" {
		t.Errorf("privateKey = %v", pk)
	}
	if size, _, _ := unstructured.NestedInt64(cert.Object, "spec", "privateKey", "size"); size != 256 {
		t.Errorf("privateKey.size = %d", size)
	}
	// Chain: webhook <- CA Issuer <- CA Certificate <- self-signed Issuer.
	issuer, _, _ := unstructured.NestedString(cert.Object, "spec", "issuerRef", "name")
	caIssuer := findU(t, docs, "Issuer", namespace, issuer)
	caSecret, _, _ := unstructured.NestedString(caIssuer.Object, "spec", "ca", "secretName")
	var ca *unstructured.Unstructured
	for _, d := range docs {
		if s, _, _ := unstructured.NestedString(d.u.Object, "spec", "secretName"); d.u.GetKind() == "Certificate" && s == caSecret {
			ca = d.u
		}
	}
	if ca == nil {
		t.Fatalf("no Certificate writes the CA Secret %q of Issuer %s", caSecret, issuer)
	}
	if isCA, _, _ := unstructured.NestedBool(ca.Object, "spec", "isCA"); !isCA {
		t.Errorf("%s is not a CA", ca.GetName())
	}
	root, _, _ := unstructured.NestedString(ca.Object, "spec", "issuerRef", "name")
	if _, found, _ := unstructured.NestedMap(findU(t, docs, "Issuer", namespace, root).Object, "spec", "selfSigned"); !found {
		t.Errorf("Issuer %s is not self-signed", root)
	}
}
