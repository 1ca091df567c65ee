package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const pluginProg = "kubectl seedwarden"

func TestProgramName(t *testing.T) {
	for _, tc := range []struct{ arg0, want string }{
		{"webhook", "webhook"},
		{"/usr/local/bin/webhook", "webhook"},
		{"./bin/webhook", "webhook"},
		{"/home/me/bin/kubectl-seedwarden", "kubectl seedwarden"},
		{"kubectl-seedwarden", "kubectl seedwarden"},
		{"kubectl-seedwarden.exe", "kubectl seedwarden"},
		{"kubectl-garden-seedwarden", "kubectl garden seedwarden"}, // kubectl's nested plugin naming
		{"kubectl-seed_warden", "kubectl seed-warden"},
		{"kubectl-", "webhook"},
		{"seedwarden", "webhook"},
	} {
		t.Run(tc.arg0, func(t *testing.T) {
			assert.Equal(t, tc.want, programName(tc.arg0))
		})
	}
}

// As kubectl-seedwarden, help names the program `kubectl seedwarden` and
// the commands work as they do for webhook.
func TestPluginHelp(t *testing.T) {
	code, out, errOut := runAsCmd(t, pluginProg)
	assert.Equal(t, exitOK, code, "bare: the help")
	assert.Empty(t, errOut)
	assert.Contains(t, out, "  kubectl seedwarden [command]\n")
	for _, name := range []string{"simulate", "plan", "validate", "version", "serve"} {
		assert.Regexp(t, `(?m)^  `+name+` +\S`, out)
	}
	assert.NotRegexp(t, `(?m)^\s+webhook `, out, "the plugin's help does not name the binary")
	assert.NotContains(t, out, "[serve]", "the plugin has no default command")

	for _, cmd := range commands() {
		code, out, _ := runAsCmd(t, pluginProg, cmd.name, "--help")
		assert.Equal(t, exitOK, code, cmd.name)
		assert.Contains(t, out, "Usage:\n  kubectl seedwarden "+cmd.name, cmd.name)
		assert.Contains(t, out, "\n  kubectl seedwarden "+strings.Fields(cmd.examples[0].args)[0], cmd.name)
		assert.NotRegexp(t, `(?m)^\s+webhook `, out, cmd.name)
	}

	code, out, errOut = runAsCmd(t, pluginProg, "--config", "x.yaml")
	assert.Equal(t, exitUsage, code, "flags without a command are not serve for the plugin")
	assert.Empty(t, out)
	assert.Contains(t, errOut, `kubectl seedwarden: unknown command "--config"`)

	code, _, errOut = runAsCmd(t, pluginProg, "plan", "--bogus")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, `Run "kubectl seedwarden plan --help"`)
}

// The plugin's commands give what webhook's give.
func TestPluginCommandsMatchWebhook(t *testing.T) {
	cfg := writeFile(t, "config.yaml", configHeader+"binding: {enabled: false}\n")
	for _, args := range [][]string{
		{"simulate", "-f", "testdata/scenarios"},
		{"simulate", "-o", "text", "--landscape", "../../examples/landscape.yaml", "--shoot", "../../examples/shoot.yaml"},
		{"plan", "--landscape", "../../examples/landscape.yaml", "--add-shoots", "2", "--like", "../../examples/shoot.yaml"},
		{"plan", "--landscape", "../../examples/landscape.yaml", "--drain", "aws-eu1", "-o", "json"},
		{"validate", "--config", cfg},
		{"version"},
		{"--version"},
		{"completion", "zsh"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			wantCode, wantOut, _ := runCmd(t, args...)
			code, out, errOut := runAsCmd(t, pluginProg, args...)
			assert.Equal(t, wantCode, code, errOut)
			require.NotEmpty(t, out)
			if args[0] == "completion" {
				// The script registers for the plugin's file name.
				assert.Contains(t, out, "\ncompdef _kubectl-seedwarden kubectl-seedwarden\n")
				spaces := regexp.MustCompile(` +`)
				assert.Equal(t, spaces.ReplaceAllString(strings.ReplaceAll(wantOut, "webhook", "kubectl-seedwarden"), " "), spaces.ReplaceAllString(out, " "))
				return
			}
			assert.Equal(t, wantOut, out)
		})
	}
}
