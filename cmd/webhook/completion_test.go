package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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

// Both scripts name every command and alias and every flag of each, and
// are valid for their shell.
func TestCompletionScripts(t *testing.T) {
	for _, shell := range shells {
		t.Run(shell, func(t *testing.T) {
			out, path := completionScript(t, defaultProg, shell)
			for _, cmd := range commands() {
				for _, n := range append([]string{cmd.name}, cmd.aliases...) {
					assert.Contains(t, out, n, "command %s", n)
				}
				for _, f := range flagNames(cmd) {
					assert.Regexp(t, `[ "']`+f+`[ "\[]`, out, "flag %s of %s", f, cmd.name)
				}
			}
			bin, err := exec.LookPath(shell)
			if err != nil {
				t.Skipf("%s is not installed: syntax not checked", shell)
			}
			res, err := exec.Command(bin, "-n", path).CombinedOutput()
			assert.NoError(t, err, "%s -n: %s", shell, res)
		})
	}
}

// bashComplete loads the bash script and completes the words, the last one
// being completed; it returns the candidates, one per line.
func bashComplete(t *testing.T, script string, words ...string) []string {
	t.Helper()
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = "'" + w + "'"
	}
	fn := "_webhook"
	if strings.HasPrefix(words[0], pluginPrefix) {
		fn = "_kubectl_seedwarden"
	}
	prog := "source " + script + "\nCOMP_WORDS=(" + strings.Join(quoted, " ") + ")\nCOMP_CWORD=" +
		strconv.Itoa(len(words)-1) + "\n" + fn + "\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n"
	out, err := exec.Command("bash", "-c", prog).CombinedOutput()
	require.NoError(t, err, string(out))
	return strings.Fields(string(out))
}

// The bash script completes as a user expects.
func TestBashCompletionCompletes(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	_, script := completionScript(t, defaultProg, "bash")
	_, plugin := completionScript(t, pluginProg, "bash")
	for _, tc := range []struct {
		name   string
		script string
		words  []string
		want   []string
	}{
		{"commands", script, []string{"webhook", "s"}, []string{"serve", "simulate"}},
		{"alias", script, []string{"webhook", "check"}, []string{"check-config"}},
		{"a command's flags", script, []string{"webhook", "plan", "--dr"}, []string{"--drain"}},
		{"flags after other flags", script, []string{"webhook", "validate", "--config", "x.yaml", "--"}, []string{"--config", "--mode", "--help"}},
		{"serve's flags without the command", script, []string{"webhook", "--kube"}, []string{"--kubeconfig"}},
		{"a flag's value is a file name", script, []string{"webhook", "simulate", "--shoot", ""}, nil},
		{"a single-dash flag's value too", script, []string{"webhook", "plan", "-like", ""}, nil},
		{"shells", script, []string{"webhook", "completion", ""}, []string{"bash", "zsh"}},
		{"help's commands", script, []string{"webhook", "help", "pl"}, []string{"plan"}},
		{"plugin commands", plugin, []string{"kubectl-seedwarden", "v"}, []string{"validate", "version"}},
		{"plugin flags", plugin, []string{"kubectl-seedwarden", "simulate", "--land"}, []string{"--landscape"}},
		{"plugin has no default command", plugin, []string{"kubectl-seedwarden", "--con"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.ElementsMatch(t, tc.want, bashComplete(t, tc.script, tc.words...))
		})
	}
}

func TestCompletionUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"completion"}, "name one shell: bash or zsh"},
		{[]string{"completion", "bash", "zsh"}, "name one shell"},
		{[]string{"completion", "fish"}, `unsupported shell "fish" (want bash or zsh)`},
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
// requests in cobra's protocol: candidates, then ":DIRECTIVE".
func TestKubectlComplete(t *testing.T) {
	for _, tc := range []struct {
		name  string
		words []string
		want  string
	}{
		{"commands", []string{"s"}, "serve\tRun the admission webhook server\nsimulate\tDecide Shoots offline\n:4\n"},
		{"no word yet", nil, "serve\t"},
		{"flags", []string{"plan", "--add"}, "--add-seed\tadd the Seeds of FILE\n--add-shoots\tplace N copies of the --like Shoot in sequence\n:4\n"},
		{"a flag's value: files", []string{"validate", "--config", ""}, ":0\n"},
		{"single-dash value flag", []string{"simulate", "-o", ""}, ":0\n"},
		{"an argument: files", []string{"simulate", "-f", "a.json", ""}, ":0\n"},
		{"first argument's values", []string{"completion", ""}, "bash\nzsh\n:4\n"},
		{"help's commands", []string{"help", "ve"}, "version\n:4\n"},
		{"unknown command", []string{"nope", "--"}, ":4\n"},
		{"no default command for the plugin", []string{"--con"}, ":4\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr syncBuffer
			code := kubectlComplete(&cli{prog: pluginProg, stdout: &stdout, stderr: &stderr}, tc.words)
			assert.Equal(t, exitOK, code)
			if tc.name == "no word yet" {
				// Every command, each with its summary.
				assert.Equal(t, len(commandNames()), strings.Count(stdout.String(), "\t"))
				assert.True(t, strings.HasPrefix(stdout.String(), tc.want) && strings.HasSuffix(stdout.String(), "\n:4\n"), stdout.String())
				return
			}
			assert.Equal(t, tc.want, stdout.String())
		})
	}
}
