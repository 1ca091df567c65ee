package main

import (
	stdlog "log"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seedwarden/seedwarden/internal/ratelog"
)

func TestVersion(t *testing.T) {
	code, out, _ := runCmd(t, "version")
	assert.Equal(t, exitOK, code)
	assert.Equal(t, "seedwarden webhook dev (commit dev, "+runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH+")\n", out)

	code, _, errOut := runCmd(t, "version", "extra")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, `unexpected argument "extra"`)
}

func TestUsage(t *testing.T) {
	code, out, _ := runCmd(t, "help", "simulate")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, out, "webhook simulate -f FILE_OR_DIR...")

	code, _, errOut := runCmd(t, "frobnicate")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, `unknown command "frobnicate"`)

	for _, args := range [][]string{
		{"serve", "--no-such-flag"},
		{"--no-such-flag"}, // serve is the default command
		{"serve", "extra"},
		{"serve", "--landscape", "x.yaml", "--kubeconfig", "y"},
		{"simulate"},
		{"simulate", "--landscape", "x.yaml"},
		{"simulate", "--shoot", "x.yaml", "-f", "testdata/scenarios"},
	} {
		code, _, _ := runCmd(t, args...)
		assert.Equal(t, exitUsage, code, "%q", args)
	}
	code, _, _ = runCmd(t, "simulate", "-h")
	assert.Equal(t, exitOK, code)
}

// An invalid configuration stops every command before it does anything, with
// each problem's field and value, and exit code 2.
func TestInvalidConfigExits2(t *testing.T) {
	cfg := writeFile(t, "config.yaml", configHeader+"strategy: Nearest\nserver:\n  port: 70000\n  prot: 1\n")
	for _, args := range [][]string{
		{"serve", "--config", cfg},
		{"--config", cfg, "--landscape", "../../examples/landscape.yaml"},
		{"simulate", "--config", cfg, "-f", "testdata/scenarios"},
	} {
		code, out, errOut := runCmd(t, args...)
		assert.Equal(t, exitUsage, code, "%q", args)
		assert.Empty(t, out)
		assert.Contains(t, errOut, "server.prot: unknown field", "%q", args)
	}

	cfg = writeFile(t, "config.yaml", configHeader+"strategy: Nearest\nserver: {port: 70000}\n")
	code, _, errOut := runCmd(t, "serve", "--config", cfg)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, `strategy: unsupported value "Nearest" (want SameRegion or MinimalDistance)`)
	assert.Contains(t, errOut, "server.port: 70000 out of range 1-65535")

	// The new sections are checked with the rest, each problem named.
	cfg = writeFile(t, "config.yaml", configHeader+"pendingShoots: {bindMode: patch, workers: -2, backoffBase: 10s, backoffMax: 1s}\n"+
		"leaderElection: {id: 'Not A Lease'}\nkubeconfigSecret: {allowedFields: [exe]}\n")
	code, _, errOut = runCmd(t, "serve", "--config", cfg)
	assert.Equal(t, exitUsage, code)
	for _, want := range []string{
		`pendingShoots.bindMode: unsupported value "patch" (want "binding" or "update")`,
		`pendingShoots.backoffMax: 1s must not be less than backoffBase 10s`,
		`pendingShoots.workers: -2 must be at least 1`,
		`leaderElection.id: invalid value "Not A Lease"`,
		`kubeconfigSecret.allowedFields: unknown kubeconfig field(s) "exe"`,
	} {
		assert.Contains(t, errOut, want)
	}

	code, _, errOut = runCmd(t, "serve", "--config", filepath.Join(t.TempDir(), "missing.yaml"))
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "no such file")
}

func TestServeBadLandscapeExits2(t *testing.T) {
	bad := writeFile(t, "landscape.yaml", "apiVersion: core.gardener.cloud/v1beta1\nkind: Seed\nmetadata: {name: x}\nspec: {provider: {type: [1]}}\n")
	code, _, errOut := runCmd(t, "serve", "--landscape", bad)
	assert.Equal(t, exitUsage, code)
	assert.True(t, strings.Contains(errOut, "landscape "+bad), errOut)
}

func TestStdLogLinesAreThinnedInfoLines(t *testing.T) {
	var lines []string
	w := newStdLogWriter(funcr.New(func(_, args string) { lines = append(lines, args) }, funcr.Options{}))
	l := stdlog.New(w, "", 0)
	for range ratelog.DefaultBurst + 5 {
		l.Printf("http: TLS handshake error from 10.0.0.1:1234: client certificate required")
	}
	require.Len(t, lines, ratelog.DefaultBurst, "a flood is thinned out")
	assert.Contains(t, lines[0], `"text"="http: TLS handshake error from 10.0.0.1:1234: client certificate required"`)
	assert.Contains(t, lines[0], `"level"=0`)
}
