package manifests_test

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// clientCAFile is where the base mounts the client CA, and the
// server.clientAuth.caFile of its configuration.
const clientCAFile = "/etc/seedwarden/client-ca/ca.crt"

// clientAuthFile holds the client CA and the API servers' certificates.
const clientAuthFile = "clientauth.yaml"

// Client authentication is on in the base, so that only the API servers can
// call the webhooks (a forged review could hold seed places): a client CA
// whose key survives renewal, one client certificate per API server from it,
// the CA certificate (never its key) mounted where server.clientAuth.caFile
// points, and only the API servers' names allowed.
func TestClientAuthInBase(t *testing.T) {
	cfg := shippedConfig(t)
	if cfg.Server.ClientAuth.CAFile != clientCAFile {
		t.Errorf("server.clientAuth.caFile %q, want %s", cfg.Server.ClientAuth.CAFile, clientCAFile)
	}
	if want := []string{"gardener-apiserver", "kube-apiserver"}; !reflect.DeepEqual(cfg.Server.ClientAuth.AllowedNames, want) {
		t.Errorf("server.clientAuth.allowedNames %v, want %v", cfg.Server.ClientAuth.AllowedNames, want)
	}
	install, err := os.ReadFile(filepath.Join("..", "docs", "install.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(install), "caFile: "+clientCAFile) {
		t.Errorf("docs/install.md does not show caFile %s", clientCAFile)
	}
	caSecret := checkClientCertificates(t, readDocs(t, filepath.Join(manifestsDir, clientAuthFile)))
	checkClientCAMount(t, find[*appsv1.Deployment](t, manifests(t), "Deployment", namespace, "seedwarden"), caSecret)
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

// checkClientCAMount checks the Deployment mounts only ca.crt of caSecret at
// clientCAFile, read-only, in the webhook container.
func checkClientCAMount(t *testing.T, dep *appsv1.Deployment, caSecret string) {
	t.Helper()
	var vol *corev1.Volume
	for i, v := range dep.Spec.Template.Spec.Volumes {
		if v.Secret != nil && v.Secret.SecretName == caSecret {
			vol = &dep.Spec.Template.Spec.Volumes[i]
		}
	}
	if vol == nil {
		t.Fatalf("Secret %s is not a volume of the Deployment", caSecret)
	}
	if len(vol.Secret.Items) != 1 || vol.Secret.Items[0].Key != "ca.crt" {
		t.Fatalf("volume %+v, want only ca.crt of Secret %s (never the CA's key)", vol, caSecret)
	}
	var mounted bool
	for _, m := range dep.Spec.Template.Spec.Containers[0].VolumeMounts {
		if m.Name == vol.Name {
			mounted = true
			if !m.ReadOnly || filepath.Join(m.MountPath, vol.Secret.Items[0].Path) != clientCAFile {
				t.Errorf("mount %+v does not put the CA at %s read-only", m, clientCAFile)
			}
		}
	}
	if !mounted {
		t.Errorf("volume %s is not mounted in container %s", vol.Name, dep.Spec.Template.Spec.Containers[0].Name)
	}
}
