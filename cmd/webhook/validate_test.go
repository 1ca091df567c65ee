package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestValidate has one row per outcome of validate: the configuration (""
// for no --config), extra arguments, the exit code and what stdout or stderr
// must hold.
func TestValidate(t *testing.T) {
	const noBinding = "binding: {enabled: false}\n"
	for _, tc := range []struct {
		name, yaml string
		args       []string
		code       int
		out        string
		errs       []string
	}{
		{name: "valid", yaml: noBinding, code: exitOK, out: ": ok\n"},
		{name: "alias", yaml: noBinding, args: []string{"--mode", "landscape"}, code: exitOK, out: ": ok\n"},
		{name: "every problem", yaml: noBinding + "strategy: Nearest\nserver: {port: 70000, prot: 1}\nreservations: {maxPerNamespce: 3}\n", code: exitUsage, errs: []string{
			"invalid configuration:\n",
			`strategy: unsupported value "Nearest" (want SameRegion or MinimalDistance)`,
			`server.port: 70000 out of range 1-65535`,
			`server.prot: unknown field; did you mean "port"?`,
			`reservations.maxPerNamespce: unknown field; did you mean "maxPerNamespace"?`,
		}},
		{name: "a rule of another package (configChecks)", yaml: noBinding + "kubeconfigSecret: {allowedFields: [exe]}\n", code: exitUsage,
			errs: []string{`kubeconfigSecret.allowedFields: unknown kubeconfig field(s) "exe"`}},
		{name: "cluster: binding needs a key", yaml: "", args: nil, code: exitUsage,
			errs: []string{"placement.keyFile: required when serving a cluster"}},
		{name: "cluster: a key file is not read", yaml: "placement: {keyFile: /no/such/key}\n", code: exitOK, out: ": ok\n"},
		{name: "landscape: no key needed", yaml: "", args: []string{"--mode", "landscape"}, code: exitOK, out: ": ok\n"},
		{name: "landscape: no API server", yaml: "capacity: {coordination: apiserver}\nmetrics: {secure: true}\n", args: []string{"--mode", "landscape"}, code: exitUsage,
			errs: []string{"capacity.coordination: \"apiserver\" reserves through the API server", "metrics.secure: true authenticates"}},
		{name: "unknown mode", yaml: noBinding, args: []string{"--mode", "cloud"}, code: exitUsage, errs: []string{`--mode "cloud": want cluster or landscape`}},
		{name: "no --config", args: []string{}, code: exitUsage, errs: []string{"--config FILE is required"}},
		{name: "extra argument", yaml: noBinding, args: []string{"more.yaml"}, code: exitUsage, errs: []string{`unexpected argument "more.yaml"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := "validate"
			if tc.name == "alias" {
				name = "check-config"
			}
			args := []string{name}
			path := ""
			if tc.name != "no --config" {
				path = writeFile(t, "config.yaml", configHeader+tc.yaml)
				args = append(args, "--config", path)
			}
			code, out, errOut := runCmd(t, append(args, tc.args...)...)
			assert.Equal(t, tc.code, code, errOut)
			if tc.out != "" {
				assert.Equal(t, path+tc.out, out)
			}
			if tc.code != exitOK {
				assert.Empty(t, out)
			}
			for _, e := range tc.errs {
				assert.Contains(t, errOut, e)
			}
		})
	}
}

func TestValidateUnreadableFile(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.yaml")
	code, out, errOut := runCmd(t, "validate", "--config", missing)
	assert.Equal(t, exitUsage, code)
	assert.Empty(t, out)
	assert.True(t, strings.Contains(errOut, missing) && strings.Contains(errOut, "no such file"), errOut)
}

// The shipped configurations pass as the server would take them.
func TestValidateShippedConfigs(t *testing.T) {
	for _, args := range [][]string{
		{"--config", "../../deploy/manifests/config.yaml"},
		{"--config", "../../examples/config-dev.yaml", "--mode", "landscape"},
	} {
		code, out, errOut := runCmd(t, append([]string{"validate"}, args...)...)
		assert.Equal(t, exitOK, code, errOut)
		assert.Equal(t, args[1]+": ok\n", out)
	}
}
