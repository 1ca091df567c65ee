package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// docs/cli.md documents every command, alias and flag: adding one without
// docs fails here.
func TestCLIDocsCoverEveryCommandAndFlag(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "cli.md"))
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
