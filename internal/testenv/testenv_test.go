package testenv

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestAssets(t *testing.T) {
	t.Setenv("KUBEBUILDER_ASSETS", "/explicit")
	assert.Equal(t, "/explicit", Assets(), "KUBEBUILDER_ASSETS wins")

	t.Setenv("KUBEBUILDER_ASSETS", "")
	tools := t.TempDir()
	t.Setenv("SEEDWARDEN_TOOLS", tools)
	assert.Empty(t, Assets(), "binaries missing")
	bin := filepath.Join(tools, "bin")
	assert.NoError(t, os.MkdirAll(bin, 0o755))
	for _, b := range []string{"kube-apiserver", "etcd"} {
		assert.NoError(t, os.WriteFile(filepath.Join(bin, b), nil, 0o755))
	}
	assert.Equal(t, bin, Assets())
}

func TestRepoRoot(t *testing.T) {
	root := repoRoot()
	_, err := os.Stat(filepath.Join(root, "go.mod"))
	assert.NoError(t, err)
}
