package makefile

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sourcesLookupBound is how soon `make test` must fail in a clone that has no
// pinned source of Gardener's or cert-manager's programs: before any build.
const sourcesLookupBound = 30 * time.Second

// copyForSourceLookup copies what `make test` runs first (the Makefile, the
// scripts and their PIN files) into an empty folder: a clone with no .cache
// and nothing beside it.
func copyForSourceLookup(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "clone")
	for _, rel := range []string{"Makefile", "hack/gardener-src.sh", "hack/gardener/PIN", "hack/cert-manager-bins.sh", "hack/cert-manager/PIN",
		"hack/e2e-tools.sh", "hack/gardener-bins.sh", "hack/rules/promtool.sh"} {
		data, err := os.ReadFile(filepath.Join("..", "..", rel))
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, rel)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, rel), data, 0o755))
	}
	return root
}

// `make test` with no source of Gardener's tree and none of cert-manager's
// programs fails within seconds, before any long build, and names every
// source it tried: GARDENER_SRC, the tarball beside the clone, a git fetch of
// the pinned commit, CERT_MANAGER_SRC and ../shared/cert-manager.
func TestMakeTestWithoutSourcesFailsFast(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatalf("make is needed for this test: %v", err)
	}
	root := copyForSourceLookup(t)
	cmd := exec.Command("make", "test")
	cmd.Dir = root
	env := []string{"GARDENER_GIT_URL=" + filepath.Join(root, "no-such-remote")}
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); name != "GARDENER_SRC" && name != "CERT_MANAGER_SRC" && name != "GARDENER_GIT_URL" && !strings.HasPrefix(name, "MAKE") {
			env = append(env, kv)
		}
	}
	cmd.Env = env
	start := time.Now()
	out, err := cmd.CombinedOutput()
	took := time.Since(start)
	require.Error(t, err, "make test without sources succeeded:\n%s", out)
	assert.Less(t, took, sourcesLookupBound, "make test took %s to fail:\n%s", took, out)
	text := string(out)
	for _, want := range []string{
		"GARDENER_SRC: not set",
		"the tarball beside the clone, " + root + "/../shared/gardener/gardener-",
		"git fetch of ",
		"CERT_MANAGER_SRC: not set",
		root + "/../shared/cert-manager: no such folder",
	} {
		assert.Contains(t, text, want)
	}
	assert.NotContains(t, text, "go build", "a build started before the sources were looked up")
	_, err = os.Stat(filepath.Join(root, ".cache"))
	assert.True(t, os.IsNotExist(err), "make test wrote .cache before the sources were looked up")
}

// The cert-manager programs built for the e2e package are the version the
// module requires (the API the project's code and tests are written against).
func TestCertManagerPinIsTheModuleRequirement(t *testing.T) {
	pin, err := os.ReadFile("../../hack/cert-manager/PIN")
	require.NoError(t, err)
	gomod, err := os.ReadFile("../../go.mod")
	require.NoError(t, err)
	version := regexp.MustCompile(`(?m)^CERT_MANAGER_VERSION=(\S+)$`).FindSubmatch(pin)
	require.NotNil(t, version, "hack/cert-manager/PIN has no CERT_MANAGER_VERSION")
	required := regexp.MustCompile(`(?m)^\s+github\.com/cert-manager/cert-manager (\S+)`).FindSubmatch(gomod)
	require.NotNil(t, required, "go.mod does not require github.com/cert-manager/cert-manager")
	assert.Equal(t, string(required[1]), string(version[1]), "hack/cert-manager/PIN's CERT_MANAGER_VERSION against go.mod")
}
