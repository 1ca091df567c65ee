package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// docs/cli.md documents every command, alias and flag: adding one without
// docs fails here.
func TestCLIDocsCoverEveryCommandAndFlag(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot, "docs", "cli.md"))
	require.NoError(t, err)
	doc := string(data)
	for _, cmd := range commands() {
		for _, n := range append([]string{cmd.name}, cmd.aliases...) {
			assert.Contains(t, doc, "webhook "+n, "command %s", n)
		}
		for _, f := range flagNames(cmd) {
			assert.Regexp(t, "(?m)^\\|[^\n]*`"+f+"[ `]", doc, "flag %s of %s: a row of its table", f, cmd.name)
		}
	}
	for _, name := range []string{"kubectl-seedwarden", "kubectl_complete-seedwarden", "completion bash", "completion zsh"} {
		assert.Contains(t, doc, name)
	}
}

// repoRoot is the path from this package to the repository's root: the
// documented command lines name files from there.
const repoRoot = "../../"

// runDocumented runs a documented command line (after "webhook ") from this
// package, its paths taken from the repository's root, and returns its exit
// code and its output with the paths as the docs spell them.
func runDocumented(t *testing.T, line string) (int, string, string) {
	t.Helper()
	args := strings.Fields(line)
	for i, a := range args {
		if strings.HasPrefix(a, "examples/") || strings.HasPrefix(a, "deploy/") {
			args[i] = repoRoot + a
		}
	}
	code, out, errOut := runCmd(t, args...)
	return code, strings.ReplaceAll(out, repoRoot, ""), strings.ReplaceAll(errOut, repoRoot, "")
}

// Every file of examples/ has a row in docs/cli.md's table of example files
// whose command checks it, and that command exits 0 without complaint.
func TestExampleFilesAsDocumented(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot, "docs", "cli.md"))
	require.NoError(t, err)
	rows := regexp.MustCompile("(?m)^\\| `(examples/[^`]+)` \\|[^|\n]*\\| `webhook ([^`]+)` \\|$").FindAllStringSubmatch(string(data), -1)
	checks := map[string]string{}
	for _, r := range rows {
		checks[r[1]] = r[2]
	}
	entries, err := os.ReadDir(filepath.Join(repoRoot, "examples"))
	require.NoError(t, err)
	require.NotEmpty(t, entries)
	for _, e := range entries {
		file := "examples/" + e.Name()
		t.Run(e.Name(), func(t *testing.T) {
			line, ok := checks[file]
			require.True(t, ok, "docs/cli.md has no row for %s in its table of example files", file)
			require.Contains(t, strings.Fields(line), file, "the command checks the file of its row")
			code, _, errOut := runDocumented(t, line)
			assert.Equal(t, exitOK, code, "webhook %s\n%s", line, errOut)
			assert.Empty(t, errOut)
		})
	}
}

// The validate transcripts of docs/cli.md that name files of the repository
// print what they show, with the exit code their output implies.
func TestValidateTranscriptsAsDocumented(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot, "docs", "cli.md"))
	require.NoError(t, err)
	transcripts := regexp.MustCompile(`(?m)^\$ webhook ((?:validate|check-config) --config (?:examples|deploy)/\S+.*)\n(.+)$`).FindAllStringSubmatch(string(data), -1)
	require.GreaterOrEqual(t, len(transcripts), 3)
	for _, tr := range transcripts {
		t.Run(tr[1], func(t *testing.T) {
			want := exitUsage
			if strings.HasSuffix(tr[2], ": ok") {
				want = exitOK
			}
			code, out, errOut := runDocumented(t, tr[1])
			assert.Equal(t, want, code)
			assert.Equal(t, tr[2]+"\n", out+errOut)
		})
	}
}
