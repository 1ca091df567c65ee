package difftest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// envFakeOracle makes this test binary act as an oracle binary (see
// TestMain): it answers every scenario with the binary's own name as the
// seed, so a test sees which binary decided what.
const envFakeOracle = "DIFFTEST_FAKE_ORACLE"

func TestMain(m *testing.M) {
	if mode := os.Getenv(envFakeOracle); mode != "" {
		os.Exit(fakeOracle(mode))
	}
	os.Exit(m.Run())
}

// fakeOracle speaks the decide protocol: a stream of scenarios in, one
// answer line each out. Mode "drop" leaves out the last answer, "panic"
// reports a panic for scenarios named *-panic, "fail" exits 1.
func fakeOracle(mode string) int {
	if mode == "fail" {
		fmt.Fprintln(os.Stderr, "decide: bad input")
		return 1
	}
	self := filepath.Base(os.Args[0])
	dec := json.NewDecoder(bufio.NewReader(os.Stdin))
	var names []string
	for dec.More() {
		var sc Scenario
		if err := dec.Decode(&sc); err != nil {
			return 1
		}
		names = append(names, sc.Name)
	}
	if mode == "drop" {
		names = names[:len(names)-1]
	}
	out := json.NewEncoder(os.Stdout)
	for _, n := range names {
		a := Answer{Name: n, Expect: &Expect{Seed: self, Tied: []string{self}}}
		if strings.HasSuffix(n, "-panic") {
			a = Answer{Name: n, Panic: "runtime error: invalid memory address or nil pointer dereference"}
		}
		if err := out.Encode(a); err != nil {
			return 1
		}
	}
	return 0
}

// fakeBinDir links both oracle names to this test binary.
func fakeBinDir(t *testing.T, mode string) string {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	dir := t.TempDir()
	for _, name := range oracleBinaries {
		require.NoError(t, os.Symlink(self, filepath.Join(dir, name)))
	}
	t.Setenv(envFakeOracle, mode)
	return dir
}

func TestOracleRoutesByNetworkRule(t *testing.T) {
	scenarios := Generate(3, 40)
	scenarios[5].Name += "-panic"
	answers, err := Oracle{BinDir: fakeBinDir(t, "answer")}.Decide(t.Context(), scenarios)
	require.NoError(t, err)
	require.Len(t, answers, len(scenarios))
	for _, sc := range scenarios {
		a := answers[sc.Name]
		if sc.Name == scenarios[5].Name {
			assert.True(t, a.Failed())
			assert.Contains(t, a.Problem(), "panic: runtime error")
			continue
		}
		require.False(t, a.Failed(), sc.Name)
		assert.Equal(t, oracleBinaries[sc.NetworkOverlap], a.Expect.Seed, "%s (%s) went to the wrong binary", sc.Name, sc.NetworkOverlap)
	}
}

func TestOracleErrors(t *testing.T) {
	scenarios := Generate(3, 10)
	_, err := Oracle{BinDir: fakeBinDir(t, "drop")}.Decide(t.Context(), scenarios)
	assert.ErrorContains(t, err, "oracle gave no answer for scenario")

	_, err = Oracle{BinDir: fakeBinDir(t, "fail")}.Decide(t.Context(), scenarios)
	assert.ErrorContains(t, err, "decide: bad input", "the oracle's stderr is in the error")

	_, err = Oracle{BinDir: t.TempDir()}.Decide(t.Context(), scenarios)
	assert.ErrorContains(t, err, "hack/gardener-bins.sh", "a missing binary says how to build it")

	bad := Generate(3, 1)
	bad[0].NetworkOverlap = "Sometimes"
	_, err = Oracle{BinDir: t.TempDir()}.Decide(t.Context(), bad)
	assert.ErrorContains(t, err, `networkOverlap: unsupported value "Sometimes"`)
}
