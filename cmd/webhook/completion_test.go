package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// completionScript runs `completion SHELL` and writes the script to a file.
func completionScript(t *testing.T, prog, shell string) (string, string) {
	t.Helper()
	code, out, errOut := runAsCmd(t, prog, "completion", shell)
	require.Equal(t, exitOK, code, errOut)
	path := filepath.Join(t.TempDir(), "completion."+shell)
	require.NoError(t, os.WriteFile(path, []byte(out), 0o600))
	return out, path
}

// Every script registers for the binary's file name, asks the binary for
// the candidates (cobra's __complete, tested below) and is valid for its
// shell where the shell is installed.
func TestCompletionScripts(t *testing.T) {
	syntax := map[string][]string{"bash": {"-n"}, "zsh": {"-n"}, "fish": {"--no-execute"}}
	for _, shell := range shells {
		for prog, registers := range map[string]string{defaultProg: defaultProg, pluginProg: "kubectl-seedwarden"} {
			t.Run(shell+" "+prog, func(t *testing.T) {
				out, path := completionScript(t, prog, shell)
				assert.Contains(t, out, registers)
				assert.Contains(t, out, "__complete")
				if prog != defaultProg {
					assert.NotRegexp(t, `\bwebhook\b`, out, "the plugin's script does not name the binary")
				}
				flags, ok := syntax[shell]
				if !ok {
					return
				}
				bin, err := exec.LookPath(shell)
				if err != nil {
					t.Logf("%s is not installed: syntax not checked", shell)
					return
				}
				res, err := exec.Command(bin, append(flags, path)...).CombinedOutput()
				assert.NoError(t, err, "%s %s: %s", shell, flags, res)
			})
		}
	}
}

// completed parses cobra's completion protocol: candidates (the part
// before a TAB), then ":DIRECTIVE".
func completed(t *testing.T, out string) ([]string, string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.NotEmpty(t, lines)
	last := lines[len(lines)-1]
	require.True(t, strings.HasPrefix(last, ":"), "the directive ends the answer: %q", out)
	var cands []string
	for _, l := range lines[:len(lines)-1] {
		name, _, _ := strings.Cut(l, "\t")
		cands = append(cands, name)
	}
	return cands, last
}

// The candidates the scripts and kubectl get for a command line, the last
// word being completed: directive 4 is no file names, 0 the shell's file
// names.
func TestCompletionCandidates(t *testing.T) {
	for _, tc := range []struct {
		name      string
		prog      string
		words     []string
		want      []string
		directive string
	}{
		{"commands", defaultProg, []string{"s"}, []string{"serve", "simulate"}, ":4"},
		{"alias", defaultProg, []string{"check"}, []string{"check-config"}, ":4"},
		{"a command's flags", defaultProg, []string{"plan", "--dr"}, []string{"--drain"}, ":4"},
		{"flags after other flags", defaultProg, []string{"validate", "--config", "x.yaml", "--"}, []string{"--mode", "--help"}, ":4"},
		{"serve's flags without the command", defaultProg, []string{"--kube"}, []string{"--kubeconfig"}, ":4"},
		{"a flag's value is a file name", defaultProg, []string{"simulate", "--shoot", ""}, nil, ":0"},
		{"a single-dash flag's value too", defaultProg, []string{"plan", "-like", ""}, nil, ":0"},
		{"an argument: files", defaultProg, []string{"simulate", "-f", "a.json", ""}, nil, ":0"},
		{"output formats", defaultProg, []string{"simulate", "-o", ""}, []string{"json", "text"}, ":4"},
		{"modes", defaultProg, []string{"check-config", "--mode", "l"}, []string{"landscape"}, ":4"},
		{"shells", defaultProg, []string{"completion", ""}, shells, ":4"},
		{"help's commands", defaultProg, []string{"help", "pl"}, []string{"plan"}, ":4"},
		{"unknown command", defaultProg, []string{"nope", ""}, nil, ":4"},
		{"plugin commands", pluginProg, []string{"v"}, []string{"validate", "version"}, ":4"},
		{"plugin flags", pluginProg, []string{"simulate", "--land"}, []string{"--landscape"}, ":4"},
		{"plugin has no default command", pluginProg, []string{"--con"}, nil, ":4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runAsCmd(t, tc.prog, append([]string{"__complete"}, tc.words...)...)
			require.Equal(t, exitOK, code, errOut)
			cands, directive := completed(t, out)
			assert.ElementsMatch(t, tc.want, cands, out)
			assert.Equal(t, tc.directive, directive)
		})
	}
}

func TestCompletionUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"completion"}, "name one shell: bash, zsh, fish or powershell"},
		{[]string{"completion", "bash", "zsh"}, "name one shell"},
		{[]string{"completion", "tcsh"}, `unsupported shell "tcsh" (want bash, zsh, fish or powershell)`},
	} {
		code, out, errOut := runCmd(t, tc.args...)
		assert.Equal(t, exitUsage, code, "%q", tc.args)
		assert.Empty(t, out)
		assert.Contains(t, errOut, tc.want, "%q", tc.args)
	}
}

func TestKubectlCompleteName(t *testing.T) {
	for _, tc := range []struct {
		arg0, want string
		ok         bool
	}{
		{"/home/me/bin/kubectl_complete-seedwarden", "kubectl seedwarden", true},
		{"kubectl_complete-seedwarden", "kubectl seedwarden", true},
		{"kubectl_complete-", "", false},
		{"kubectl-seedwarden", "", false},
		{"webhook", "", false},
	} {
		prog, ok := kubectlCompleteName(tc.arg0)
		assert.Equal(t, tc.ok, ok, tc.arg0)
		assert.Equal(t, tc.want, prog, tc.arg0)
	}
}

// As kubectl_complete-seedwarden the binary answers kubectl's completion
// requests in cobra's protocol (the words after the plugin's name, the
// last being completed): what the plugin's __complete answers.
func TestKubectlComplete(t *testing.T) {
	for _, tc := range []struct {
		name  string
		words []string
		want  string
	}{
		{"commands", []string{"s"}, "serve\tRun the admission webhook server\n" +
			"simulate\tDecide Shoots offline: scenario files, a landscape file, or an existing Shoot of a cluster\n:4\n"},
		{"flags", []string{"plan", "--add"}, "--add-seed\tadd the Seeds of `FILE` (YAML or JSON manifests) (repeatable)\n" +
			"--add-shoots\tplace `N` copies of the --like Shoot in sequence (repeatable, each with its --like)\n:4\n"},
		{"a flag's value: files", []string{"validate", "--config", ""}, ":0\n"},
		{"first argument's values", []string{"completion", "b"}, "bash\n:4\n"},
		{"help's commands", []string{"help", "ve"}, "version\n:4\n"},
		{"no default command for the plugin", []string{"--con"}, ":4\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr syncBuffer
			code := kubectlComplete(&cli{prog: pluginProg, stdout: &stdout, stderr: &stderr}, tc.words)
			assert.Equal(t, exitOK, code)
			assert.Equal(t, tc.want, stdout.String())
		})
	}
	t.Run("no word yet", func(t *testing.T) {
		var stdout, stderr syncBuffer
		code := kubectlComplete(&cli{prog: pluginProg, stdout: &stdout, stderr: &stderr}, nil)
		assert.Equal(t, exitOK, code)
		cands, directive := completed(t, stdout.String())
		var names []string
		for _, cmd := range commands() {
			names = append(append(names, cmd.name), cmd.aliases...)
		}
		assert.ElementsMatch(t, names, cands)
		assert.Equal(t, ":4", directive)
		assert.Equal(t, len(cands), strings.Count(stdout.String(), "\t"), "each with its summary")
	})
}
