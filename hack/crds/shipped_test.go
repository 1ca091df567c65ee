package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// repoRoot is the project's root, seen from this package's tests.
const repoRoot = "../.."

// decodeCRDFile reads one CRD, refusing unknown fields.
func decodeCRDFile(t testing.TB, path string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(data, crd); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return crd
}

// readShippedCRD reads a CRD the project ships, by its path in the repository.
func readShippedCRD(t testing.TB, name string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	return decodeCRDFile(t, filepath.Join(repoRoot, name))
}

// checkGenerated runs a generator script of this folder into a temporary
// root and wants each of files, as committed, to equal what it wrote.
func checkGenerated(t *testing.T, script string, files []string) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs controller-gen")
	}
	out := t.TempDir()
	if b, err := exec.Command("bash", script, out).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, b)
	}
	for _, name := range files {
		got, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		committed, err := os.ReadFile(filepath.Join(repoRoot, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, committed) {
			t.Errorf("%s is out of date: run hack/crds/%s (make generate)", name, script)
		}
	}
}
