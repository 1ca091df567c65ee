package manifests_test

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

const (
	clientAuthDir = "clientauth"
	// clientCAFile is where the component mounts the client CA, the
	// server.clientAuth.caFile docs/security.md and the component tell
	// operators to configure.
	clientCAFile = "/etc/seedwarden/client-ca/ca.crt"
)

// The client authentication component, so that only the API servers can
// call the webhooks (a forged review could hold seed places): a client CA
// whose key survives renewal, one client certificate per API server from it,
// and the CA certificate (never its key) mounted where the documented
// server.clientAuth.caFile points.
func TestClientAuthComponent(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(clientAuthDir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		APIVersion string   `json:"apiVersion"`
		Kind       string   `json:"kind"`
		Resources  []string `json:"resources"`
		Patches    []struct {
			Path string `json:"path"`
		} `json:"patches"`
	}
	if err := yaml.UnmarshalStrict(data, &k); err != nil {
		t.Fatalf("%s/kustomization.yaml: %v", clientAuthDir, err)
	}
	if k.APIVersion != "kustomize.config.k8s.io/v1alpha1" || k.Kind != "Component" ||
		!reflect.DeepEqual(k.Resources, []string{"certificates.yaml"}) || len(k.Patches) != 1 {
		t.Fatalf("%s/kustomization.yaml: %+v", clientAuthDir, k)
	}
	if !strings.Contains(string(data), "caFile: "+clientCAFile) {
		t.Errorf("the component's instructions do not name caFile %s", clientCAFile)
	}
	security, err := os.ReadFile(filepath.Join("..", "docs", "security.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(security), "caFile: "+clientCAFile) {
		t.Errorf("docs/security.md does not configure caFile %s", clientCAFile)
	}

	caSecret := checkClientCertificates(t, readDocs(t, filepath.Join(clientAuthDir, "certificates.yaml")))
	checkClientCAMount(t, filepath.Join(clientAuthDir, k.Patches[0].Path), caSecret)
}

// checkClientCertificates checks the chain and returns the CA's Secret.
func checkClientCertificates(t *testing.T, docs []doc) string {
	t.Helper()
	ca := findU(t, docs, "Certificate", namespace, "seedwarden-client-ca")
	if isCA, _, _ := unstructured.NestedBool(ca.Object, "spec", "isCA"); !isCA {
		t.Error("seedwarden-client-ca is not a CA")
	}
	// A renewed CA with a new key would stop verifying every client
	// certificate already copied into an API server's kubeconfig.
	if policy, _, _ := unstructured.NestedString(ca.Object, "spec", "privateKey", "rotationPolicy"); policy != "Never" {
		t.Errorf("client CA privateKey.rotationPolicy %q, want Never", policy)
	}
	root, _, _ := unstructured.NestedString(ca.Object, "spec", "issuerRef", "name")
	if _, found, _ := unstructured.NestedMap(findU(t, docs, "Issuer", namespace, root).Object, "spec", "selfSigned"); !found {
		t.Errorf("Issuer %s is not self-signed", root)
	}
	caSecret, _, _ := unstructured.NestedString(ca.Object, "spec", "secretName")
	var names []string
	for _, d := range docs {
		if d.u.GetKind() != "Certificate" || d.u == ca {
			continue
		}
		issuer, _, _ := unstructured.NestedString(d.u.Object, "spec", "issuerRef", "name")
		if s, _, _ := unstructured.NestedString(findU(t, docs, "Issuer", namespace, issuer).Object, "spec", "ca", "secretName"); s != caSecret {
			t.Errorf("%s is not issued by the client CA", d.u.GetName())
		}
		if usages, _, _ := unstructured.NestedStringSlice(d.u.Object, "spec", "usages"); !slices.Contains(usages, "client auth") {
			t.Errorf("%s usages %v lack client auth", d.u.GetName(), usages)
		}
		cn, _, _ := unstructured.NestedString(d.u.Object, "spec", "commonName")
		names = append(names, cn)
	}
	slices.Sort(names)
	if want := []string{"gardener-apiserver", "kube-apiserver"}; !reflect.DeepEqual(names, want) {
		t.Errorf("client certificates for %v, want one per API server that calls the webhooks %v", names, want)
	}
	return caSecret
}

// checkClientCAMount checks the patch mounts ca.crt of caSecret at
// clientCAFile in the base's webhook container.
func checkClientCAMount(t *testing.T, patchFile, caSecret string) {
	t.Helper()
	patch := find[*appsv1.Deployment](t, readDocs(t, patchFile), "Deployment", namespace, "seedwarden")
	base := find[*appsv1.Deployment](t, manifests(t), "Deployment", namespace, "seedwarden")
	pod := patch.Spec.Template.Spec
	if len(pod.Volumes) != 1 || len(pod.Containers) != 1 || len(pod.Containers[0].VolumeMounts) != 1 {
		t.Fatalf("the patch adds %d volumes to %d containers, want one volume mounted in the webhook container", len(pod.Volumes), len(pod.Containers))
	}
	vol, mount := pod.Volumes[0], pod.Containers[0].VolumeMounts[0]
	if pod.Containers[0].Name != base.Spec.Template.Spec.Containers[0].Name {
		t.Errorf("the patch names container %q, the base %q", pod.Containers[0].Name, base.Spec.Template.Spec.Containers[0].Name)
	}
	for _, v := range base.Spec.Template.Spec.Volumes {
		if v.Name == vol.Name {
			t.Errorf("volume %q exists in the base: the patch would replace it", v.Name)
		}
	}
	if vol.Secret == nil || vol.Secret.SecretName != caSecret || len(vol.Secret.Items) != 1 || vol.Secret.Items[0].Key != "ca.crt" {
		t.Fatalf("volume %+v, want only ca.crt of Secret %s (never the CA's key)", vol, caSecret)
	}
	if mount.Name != vol.Name || !mount.ReadOnly || filepath.Join(mount.MountPath, vol.Secret.Items[0].Path) != clientCAFile {
		t.Errorf("mount %+v does not put the CA at %s read-only", mount, clientCAFile)
	}
}
