package main

import (
	"context"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runAsCmd runs the program under the name prog.
func runAsCmd(t *testing.T, prog string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr syncBuffer
	code := runAs(context.Background(), prog, args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// cmdInfo is what the tests read of a command of the tree.
type cmdInfo struct {
	name     string
	aliases  []string
	summary  string
	examples []example
	cmd      *cobra.Command
}

// commands are the commands of webhook's tree, help included, in help's
// order, with the examples of their help.
func commands() []cmdInfo {
	root := (&cli{prog: defaultProg}).newRoot()
	root.InitDefaultHelpCmd()
	var out []cmdInfo
	for _, cmd := range root.Commands() {
		tc := cmdInfo{name: cmd.Name(), aliases: cmd.Aliases, summary: cmd.Short, cmd: cmd}
		lines := strings.Split(cmd.Example, "\n")
		for i := 0; i+1 < len(lines); i += 2 {
			tc.examples = append(tc.examples, example{
				what: strings.TrimPrefix(lines[i], "  # "),
				args: strings.TrimPrefix(lines[i+1], "  "+defaultProg+" "),
			})
		}
		out = append(out, tc)
	}
	return out
}

// flagNames are the names of cmd's flags as help spells them (--name),
// without --help.
func flagNames(cmd cmdInfo) []string {
	var names []string
	cmd.cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Name != "help" {
			names = append(names, "--"+f.Name)
		}
	})
	return names
}

// TestHelpListsEveryCommand: --help, -h and help print the command list,
// one line per command with its summary, on stdout.
func TestHelpListsEveryCommand(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"-help"}, {"help"}} {
		code, out, errOut := runCmd(t, args...)
		assert.Equal(t, exitOK, code, "%q", args)
		assert.Empty(t, errOut, "%q", args)
		for _, cmd := range commands() {
			assert.Regexp(t, `(?m)^  `+cmd.name+` +`+regexpQuote(cmd.summary), out, "%q lists %s", args, cmd.name)
		}
		assert.Contains(t, out, "--version")
	}
}

func regexpQuote(s string) string {
	return strings.NewReplacer(`(`, `\(`, `)`, `\)`, `.`, `\.`, `|`, `\|`).Replace(s)
}

// TestCommandHelp: every command's --help (and -h, and help COMMAND) prints
// its usage, each of its flags and at least two examples, with exit code 0.
func TestCommandHelp(t *testing.T) {
	for _, cmd := range commands() {
		t.Run(cmd.name, func(t *testing.T) {
			code, out, errOut := runCmd(t, cmd.name, "--help")
			require.Equal(t, exitOK, code, errOut)
			assert.Empty(t, errOut)
			assert.Contains(t, out, "Usage:\n")
			assert.Contains(t, out, "webhook "+cmd.name)
			for _, f := range flagNames(cmd) {
				assert.Regexp(t, `(?m)^\s+(-\w, )?`+f+`( |$)`, out, "flag %s", f)
			}
			assert.Contains(t, out, "Examples:\n")
			assert.GreaterOrEqual(t, strings.Count(out, "\n  webhook "+strings.Fields(cmd.examples[0].args)[0]), 1)
			assert.GreaterOrEqual(t, len(cmd.examples), 2)

			for _, args := range [][]string{{cmd.name, "-h"}, {"help", cmd.name}} {
				code, again, _ := runCmd(t, args...)
				assert.Equal(t, exitOK, code, "%q", args)
				assert.Equal(t, out, again, "%q", args)
			}
		})
	}
}

// TestHelpExamplesRun runs every example that needs no cluster and writes
// no file, from the repository's root, as the help shows it.
func TestHelpExamplesRun(t *testing.T) {
	t.Chdir("../..")
	ran := 0
	for _, cmd := range commands() {
		for _, e := range cmd.examples {
			args := strings.Fields(e.args)
			if cmd.name == "serve" || strings.Contains(e.args, "--kubeconfig") || strings.Contains(e.args, "--junit") || strings.ContainsAny(e.args, "<>$") {
				continue
			}
			code, _, errOut := runCmd(t, args...)
			want := []int{exitOK}
			if cmd.name == "plan" {
				want = append(want, exitIncomplete)
			}
			assert.Contains(t, want, code, "%s: %s", e.args, errOut)
			ran++
		}
	}
	assert.GreaterOrEqual(t, ran, 8)
}

func TestUnknownCommand(t *testing.T) {
	for _, tc := range []struct {
		name, arg, want string
	}{
		{"typo", "simlate", `webhook: unknown command "simulate"`},
		{"alias typo", "check-confg", `did you mean "check-config"?`},
		{"far off", "frobnicate", `webhook: unknown command "frobnicate"` + "\n"},
		{"help of an unknown command", "help", `unknown command "nope"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{tc.arg}
			if tc.arg == "help" {
				args = append(args, "nope")
			}
			code, out, errOut := runCmd(t, args...)
			assert.Equal(t, exitUsage, code)
			assert.Empty(t, out)
			if tc.name == "typo" {
				assert.Contains(t, errOut, `unknown command "simlate"; did you mean "simulate"?`)
			} else {
				assert.Contains(t, errOut, tc.want)
			}
			for _, cmd := range commands() {
				assert.Contains(t, errOut, "\n  "+cmd.name+" ", "the list names %s", cmd.name)
			}
		})
	}
}

// A bad flag: exit code 2, the error and the synopsis on stderr, nothing on
// stdout.
func TestBadFlagPrintsSynopsis(t *testing.T) {
	for _, cmd := range commands() {
		code, out, errOut := runCmd(t, cmd.name, "--no-such-flag")
		assert.Equal(t, exitUsage, code, cmd.name)
		assert.Empty(t, out, cmd.name)
		assert.Contains(t, errOut, "webhook "+cmd.name+`: unknown flag "--no-such-flag"`+"\n", cmd.name)
		assert.Contains(t, errOut, "Usage:\n  webhook ", cmd.name)
		assert.Contains(t, errOut, `Run "webhook `+cmd.name+` --help"`, cmd.name)
	}
}

func TestVersionFlag(t *testing.T) {
	_, want, _ := runCmd(t, "version")
	for _, args := range [][]string{{"--version"}, {"-version"}} {
		code, out, errOut := runCmd(t, args...)
		assert.Equal(t, exitOK, code)
		assert.Empty(t, errOut)
		assert.Equal(t, want, out)
	}
	code, _, errOut := runCmd(t, "--version", "x")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, `unexpected argument "x"`)
}

// Command lines written for Go's flag package keep their meaning: a long
// flag with one dash is the flag, values are left alone (even one that
// starts with a dash), and so is everything after "--".
func TestGoFlagsRewrite(t *testing.T) {
	root := (&cli{prog: defaultProg}).newRoot()
	plan, _, err := root.Find([]string{"plan"})
	require.NoError(t, err)
	for _, tc := range []struct {
		name       string
		args, want []string
	}{
		{"one dash", []string{"plan", "-landscape", "l.yaml", "-drain=a"}, []string{"plan", "--landscape", "l.yaml", "--drain=a"}},
		{"shorthand stays", []string{"plan", "-o", "json", "-h"}, []string{"plan", "-o", "json", "-h"}},
		{"a value with a dash", []string{"plan", "--drain", "-like", "-add-shoots", "-3"}, []string{"plan", "--drain", "-like", "--add-shoots", "-3"}},
		{"after --", []string{"plan", "--", "-like"}, []string{"plan", "--", "-like"}},
		{"unknown flags too", []string{"plan", "-landscpe"}, []string{"plan", "--landscpe"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, goFlags(plan, tc.args))
		})
	}
}

// -f and -o kept their one-letter long names (--f, --o) beside kubectl's
// --filename and --output.
func TestOneLetterLongNames(t *testing.T) {
	const landscape, shoot = "../../examples/landscape.yaml", "../../examples/shoot.yaml"
	_, want, _ := runCmd(t, "simulate", "-o", "text", "--landscape", landscape, "--shoot", shoot)
	for _, o := range []string{"--o", "--output", "-output"} {
		code, out, errOut := runCmd(t, "simulate", o, "text", "--landscape", landscape, "--shoot", shoot)
		assert.Equal(t, exitOK, code, errOut)
		assert.Equal(t, want, out, o)
	}
	_, want, _ = runCmd(t, "simulate", "-f", "testdata/scenarios")
	for _, f := range []string{"--f", "--filename", "-filename"} {
		code, out, errOut := runCmd(t, "simulate", f, "testdata/scenarios")
		assert.Equal(t, exitOK, code, errOut)
		assert.Equal(t, want, out, f)
	}
}
