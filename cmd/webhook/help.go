package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agnivade/levenshtein"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// What cobra leaves to the program: the name it is called by (webhook or a
// kubectl plugin), serve as the default command, flags with one dash as
// Go's flag package took them, the exit codes, and error messages that
// name the command and suggest the nearest command or flag.

// cli is one invocation: the name the binary was called by and its output.
type cli struct {
	// prog is how help text names the program: "webhook", or
	// "kubectl seedwarden" for the kubectl plugin.
	prog           string
	stdout, stderr io.Writer
	// code is the exit code the command that ran returned.
	code int
}

// defaultProg is the program's name unless it runs as a kubectl plugin.
const defaultProg = "webhook"

// pluginPrefix starts the file name of a kubectl plugin: kubectl runs
// kubectl-seedwarden for `kubectl seedwarden`.
const pluginPrefix = "kubectl-"

// programName is the name help text gives the program invoked as arg0:
// "kubectl seedwarden" for kubectl-seedwarden (kubectl's plugin naming:
// dashes separate words, an underscore stands for a dash), else "webhook".
func programName(arg0 string) string {
	base := strings.TrimSuffix(filepath.Base(arg0), ".exe")
	if rest, ok := strings.CutPrefix(base, pluginPrefix); ok && rest != "" {
		return "kubectl " + strings.ReplaceAll(strings.ReplaceAll(rest, "-", " "), "_", "-")
	}
	return defaultProg
}

// plugin reports whether the program runs as a kubectl plugin.
func (c *cli) plugin() bool { return c.prog != defaultProg }

// binary is the file name the program runs as: webhook, or the plugin's
// kubectl-seedwarden (the name completion scripts register for).
func (c *cli) binary() string {
	if !c.plugin() {
		return defaultProg
	}
	words := strings.Fields(strings.TrimPrefix(c.prog, "kubectl "))
	for i, w := range words {
		words[i] = strings.ReplaceAll(w, "-", "_")
	}
	return pluginPrefix + strings.Join(words, "-")
}

// rootFlags are the flags of the program itself; any other flag in first
// position is serve's (webhook) or an unknown command (the plugin).
var rootFlags = []string{"-h", "--help", "-help", "--version", "-version"}

// execute runs args (the words after the program's name) on the command
// tree and returns the exit code.
func (c *cli) execute(ctx context.Context, args []string) int {
	root := c.newRoot()
	words, prefix := args, []string(nil)
	if len(words) > 0 && words[0] == cobra.ShellCompRequestCmd {
		words, prefix = words[1:], words[:1]
	}
	firstIsFlag := len(words) > 0 && strings.HasPrefix(words[0], "-") && !slices.Contains(rootFlags, words[0])
	switch {
	case c.plugin() && firstIsFlag && prefix == nil:
		// Flags first mean serve for webhook, where serving is the job;
		// a plugin is asked for a command.
		return c.unknownCommand(root, words[0])
	case !c.plugin() && (firstIsFlag || len(words) == 0 && prefix == nil):
		words = append([]string{"serve"}, words...)
	}
	if cmd, _, err := root.Find(words); err == nil {
		words = goFlags(cmd, words)
	}
	root.SetArgs(append(prefix, words...))
	cmd, err := root.ExecuteContextC(ctx)
	var ue *usageError
	switch {
	case errors.As(err, &ue):
		fmt.Fprintf(c.stderr, "%s %s: %s\n", c.prog, ue.cmd.Name(), ue.msg)
		c.printSynopsis(ue.cmd)
		return exitUsage
	case err != nil:
		fmt.Fprintf(c.stderr, "%s %s: %v\n", c.prog, cmd.Name(), err)
		return exitUsage
	}
	return c.code
}

// goFlags rewrites the flags of args that Go's flag package took with one
// dash (-config, -help) to pflag's two dashes, so command lines written for
// the earlier flag package keep working; a single letter stays a shorthand.
// Values of flags are left alone, and so is everything after "--".
func goFlags(cmd *cobra.Command, args []string) []string {
	cmd.InitDefaultHelpFlag()
	fs := cmd.Flags()
	out := slices.Clone(args)
	for i := 0; i < len(out); i++ {
		a := out[i]
		if a == "--" {
			break
		}
		if len(a) < 2 || a[0] != '-' {
			continue
		}
		name, _, inline := strings.Cut(strings.TrimLeft(a, "-"), "=")
		var f *pflag.Flag
		switch {
		case strings.HasPrefix(a, "--"):
			f = fs.Lookup(name)
		case len(name) > 1:
			out[i] = "-" + a
			f = fs.Lookup(name)
		default:
			f = fs.ShorthandLookup(name)
		}
		if f != nil && f.NoOptDefVal == "" && !inline {
			i++ // the flag's value
		}
	}
	return out
}

// usageError is a command line cobra or pflag could not parse, reported
// with the command's synopsis.
type usageError struct {
	cmd *cobra.Command
	msg string
}

func (e *usageError) Error() string { return e.msg }

// flagError says what is wrong with a command's flags: an unknown flag as
// an unknown command is reported, with the nearest of the command's flags;
// any other error as pflag words it.
func flagError(cmd *cobra.Command, err error) error {
	var ne *pflag.NotExistError
	if !errors.As(err, &ne) {
		return &usageError{cmd, err.Error()}
	}
	name := ne.GetSpecifiedName()
	if ne.GetSpecifiedShortnames() != "" {
		return &usageError{cmd, fmt.Sprintf("unknown flag %q", "-"+name)}
	}
	msg := fmt.Sprintf("unknown flag %q", "--"+name)
	var known []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) { known = append(known, f.Name) })
	if s := nearest(name, known); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", "--"+s)
	}
	return &usageError{cmd, msg}
}

// printSynopsis writes cmd's usage line on stderr, after a usage error.
func (c *cli) printSynopsis(cmd *cobra.Command) {
	fmt.Fprintf(c.stderr, "Usage:\n  %s\nRun \"%s --help\" for its flags and examples.\n", cmd.UseLine(), cmd.CommandPath())
}

// unknownCommand says so, suggests the nearest command, lists them all and
// returns exit code 2.
func (c *cli) unknownCommand(root *cobra.Command, name string) int {
	fmt.Fprintf(c.stderr, "%s: unknown command %q", c.prog, name)
	if s := nearest(name, commandNames(root)); s != "" {
		fmt.Fprintf(c.stderr, "; did you mean %q?", s)
	}
	fmt.Fprint(c.stderr, "\n\n")
	root.SetOut(c.stderr)
	_ = root.Usage()
	return exitUsage
}

// commandNames are the names and aliases of every command, in help order.
func commandNames(root *cobra.Command) []string {
	var names []string
	for _, cmd := range root.Commands() {
		if cmd.IsAvailableCommand() || cmd.Name() == "help" {
			names = append(append(names, cmd.Name()), cmd.Aliases...)
		}
	}
	return names
}

// nearest is the name of known within two edits of name, if any: a
// misspelt command or flag. (Cobra's suggestions know neither aliases nor
// flags.)
func nearest(name string, known []string) string {
	best, bestD := "", 3
	for _, n := range known {
		if d := levenshtein.ComputeDistance(name, n); d < bestD && d < len(name) {
			best, bestD = n, d
		}
	}
	return best
}

// newHelpCommand is `help [COMMAND]`: cobra's help command, except that an
// unknown command is exit code 2, as everywhere else.
func (c *cli) newHelpCommand(root *cobra.Command) *cobra.Command {
	cmd := c.command(commandText{
		use:     []string{"help [COMMAND]"},
		summary: "List the commands, or show one command's help",
		about:   "Without an argument, list the commands; with one, print its usage, flags and examples.",
		examples: []example{
			{"help", "the command list"},
			{"help plan", "the same as: plan --help"},
		},
	}, func(_ context.Context, _ *cobra.Command, args []string) int {
		switch len(args) {
		case 0:
			root.InitDefaultHelpFlag()
			return c.writeErr(root.Help())
		case 1:
			if found, rest, err := root.Find(args); err == nil && found != root && len(rest) == 0 {
				found.InitDefaultHelpFlag() // as cobra does for the command run
				return c.writeErr(found.Help())
			}
			return c.unknownCommand(root, args[0])
		default:
			fmt.Fprintf(c.stderr, "%s help: want at most one command, got %q\n", c.prog, args)
			return exitUsage
		}
	})
	cmd.ValidArgsFunction = func(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		var out []string
		for _, n := range commandNames(root) {
			if len(args) == 0 && strings.HasPrefix(n, toComplete) {
				out = append(out, n)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
	return cmd
}

// write prints s on stdout; a failed write is exit code 1.
func (c *cli) write(s string) int {
	_, err := io.WriteString(c.stdout, s)
	return c.writeErr(err)
}

// writeErr is the exit code of a write to stdout that returned err.
func (c *cli) writeErr(err error) int {
	if err != nil {
		return exitError
	}
	return exitOK
}

// shortNames keeps the one-letter long names of Go's flag package (--f,
// --o) for kubectl's -f, --filename and -o, --output.
func shortNames(_ *pflag.FlagSet, name string) pflag.NormalizedName {
	switch name {
	case "f":
		return "filename"
	case "o":
		return "output"
	}
	return pflag.NormalizedName(name)
}
