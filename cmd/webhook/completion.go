package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
)

// Shell completion is cobra's: the scripts ask the binary (its hidden
// __complete command) for the candidates of the command line, so they
// complete what the binary accepts. kubectl (1.26 and later) completes
// `kubectl seedwarden …` by running kubectl_complete-seedwarden with the
// words after the plugin's name and reads the same protocol; the binary
// answers so when invoked by that name (a symlink).

// shells are the shells `completion` writes scripts for.
var shells = []string{"bash", "zsh", "fish", "powershell"}

func (c *cli) newCompletionCommand() *cobra.Command {
	cmd := c.command(commandText{
		use:     []string{"completion " + strings.Join(shells, "|")},
		summary: "Print a shell completion script (" + strings.Join(shells, ", ") + ")",
		about: `Print a script that completes commands, flags, their values and file names.
Load it in the current shell, or install it where the shell finds completions.
The bash script needs the bash-completion package.`,
		examples: []example{
			{"completion bash > /etc/bash_completion.d/webhook", "bash, for every session (or: source <(webhook completion bash))"},
			{`completion zsh > "${fpath[1]}/_webhook"`, "zsh, for every session (then restart zsh)"},
			{"completion fish > ~/.config/fish/completions/webhook.fish", "fish, for every session"},
		},
	}, func(_ context.Context, cmd *cobra.Command, args []string) int {
		if len(args) != 1 {
			fmt.Fprintf(c.stderr, "%s completion: name one shell: %s\n", c.prog, orList(shells))
			c.printSynopsis(cmd)
			return exitUsage
		}
		root, out := cmd.Root(), cmd.OutOrStdout()
		switch args[0] {
		case "bash":
			return c.writeErr(root.GenBashCompletionV2(out, true))
		case "zsh":
			return c.writeErr(root.GenZshCompletion(out))
		case "fish":
			return c.writeErr(root.GenFishCompletion(out, true))
		case "powershell":
			return c.writeErr(root.GenPowerShellCompletionWithDesc(out))
		default:
			fmt.Fprintf(c.stderr, "%s completion: unsupported shell %q (want %s)\n", c.prog, args[0], orList(shells))
			return exitUsage
		}
	})
	cmd.ValidArgs = shells
	return cmd
}

// orList is "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// completePrefix starts the name kubectl runs to complete a plugin.
const completePrefix = "kubectl_complete-"

// kubectlCompleteName is the plugin's name ("kubectl seedwarden") when arg0
// is its completion name; ok is false otherwise.
func kubectlCompleteName(arg0 string) (prog string, ok bool) {
	rest, ok := strings.CutPrefix(filepath.Base(arg0), completePrefix)
	if !ok || rest == "" {
		return "", false
	}
	return programName(pluginPrefix + rest), true
}

// kubectlComplete writes the candidates for the last of words, as the
// plugin's `__complete` does.
func kubectlComplete(c *cli, words []string) int {
	if len(words) == 0 {
		words = []string{""}
	}
	return c.execute(context.Background(), append([]string{cobra.ShellCompRequestCmd}, words...))
}
