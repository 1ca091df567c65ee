package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/agnivade/levenshtein"
)

// The command table: every subcommand's name, one-line summary, synopsis,
// description, examples and flags. Help, the unknown-command message and
// shell completion are all generated from it, so a flag is defined once (in
// its command's flags function).

// cli is one invocation: the name the binary was called by and its output.
type cli struct {
	// prog is how help text names the program: "webhook", or
	// "kubectl seedwarden" for the kubectl plugin.
	prog           string
	stdout, stderr io.Writer
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

type command struct {
	name    string
	aliases []string
	// summary is the command's line in the command list.
	summary string
	// usage holds synopsis lines without the program and command names.
	usage []string
	// about says what the command does, for its --help.
	about string
	// examples are command lines (after the program name) with what they do.
	examples []example
	// flags defines the command's flags on fs (nil: none). The command
	// itself parses with the same function, help and completion list them.
	flags func(fs *flag.FlagSet)
	// words are the values of its first argument, for completion.
	words func() []string
	run   func(ctx context.Context, c *cli, args []string) int
}

type example struct{ args, what string }

// lookup finds a command by name or alias.
func lookup(name string) (command, bool) {
	for _, cmd := range commands() {
		if cmd.name == name {
			return cmd, true
		}
		for _, a := range cmd.aliases {
			if a == name {
				return cmd, true
			}
		}
	}
	return command{}, false
}

// commandNames are the names and aliases of every command, in table order.
func commandNames() []string {
	var names []string
	for _, cmd := range commands() {
		names = append(append(names, cmd.name), cmd.aliases...)
	}
	return names
}

// newFlagSet is the FlagSet of the command name. A bad flag prints the
// synopsis on stderr; -h and --help are handled by parseFlags.
func (c *cli) newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(c.stderr)
	fs.Usage = func() {
		cmd, _ := lookup(name)
		fmt.Fprintf(c.stderr, "Usage:\n%s\nRun \"%s %s --help\" for its flags and examples.\n", c.synopsis(cmd), c.prog, name)
	}
	return fs
}

// parseFlags parses args; done is true when the command must stop with
// code: after -h or --help (its help on stdout, exit 0), or a bad flag.
func (c *cli) parseFlags(fs *flag.FlagSet, args []string) (code int, done bool) {
	usage, out := fs.Usage, fs.Output()
	// The flag package's own report is replaced by one with the command's
	// name and a suggestion; -h gets the full help below, not the usage.
	fs.Usage = func() {}
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	fs.Usage = usage
	fs.SetOutput(out)
	switch err {
	case nil:
		return exitOK, false
	case flag.ErrHelp:
		cmd, _ := lookup(fs.Name())
		return c.printHelp(cmd), true
	default:
		fmt.Fprintf(c.stderr, "%s %s: %s\n", c.prog, fs.Name(), flagError(fs, err))
		usage()
		return exitUsage, true
	}
}

// undefinedFlagPrefix starts the flag package's error for an unknown flag.
const undefinedFlagPrefix = "flag provided but not defined: -"

// flagError says what is wrong with the command line: an unknown flag as
// an unknown command is reported, with the nearest of fs's flags; any other
// error as the flag package words it.
func flagError(fs *flag.FlagSet, err error) string {
	name, ok := strings.CutPrefix(err.Error(), undefinedFlagPrefix)
	if !ok {
		return err.Error()
	}
	msg := fmt.Sprintf("unknown flag %q", flagName(name))
	var known []string
	fs.VisitAll(func(f *flag.Flag) { known = append(known, f.Name) })
	if s := nearest(name, known); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", flagName(s))
	}
	return msg
}

// synopsis is cmd's usage lines, each indented and starting with the
// program's name. serve is the default command of `webhook` (not of the
// plugin, where a server is unusual).
func (c *cli) synopsis(cmd command) string {
	name := cmd.name
	if cmd.name == "serve" && !c.plugin() {
		name = "[serve]"
	}
	var b strings.Builder
	for _, u := range cmd.usage {
		line := strings.TrimRight(fmt.Sprintf("  %s %s %s", c.prog, name, u), " ")
		b.WriteString(strings.ReplaceAll(line, "\n", "\n"+strings.Repeat(" ", len(c.prog)+len(name)+4)) + "\n")
	}
	return b.String()
}

// printHelp writes cmd's help to stdout: synopsis, description, flags and
// examples.
func (c *cli) printHelp(cmd command) int {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\nUsage:\n%s\n%s\n", cmd.summary, c.synopsis(cmd), indent(cmd.about, "  "))
	if cmd.flags != nil {
		b.WriteString("\nFlags:\n")
		writeFlags(&b, cmd)
	}
	b.WriteString("\nExamples:\n")
	for _, e := range cmd.examples {
		fmt.Fprintf(&b, "  # %s\n  %s %s\n", e.what, c.prog, e.args)
	}
	return c.write(b.String())
}

// writeFlags lists cmd's flags: --name VALUE, then the usage indented.
func writeFlags(b *strings.Builder, cmd command) {
	fs := flag.NewFlagSet(cmd.name, flag.ContinueOnError)
	cmd.flags(fs)
	fs.VisitAll(func(f *flag.Flag) {
		value, usage := flag.UnquoteUsage(f)
		if isBoolFlag(f) {
			value = ""
		}
		fmt.Fprintf(b, "  %s %s\n", flagName(f.Name), value)
		if f.DefValue != "" && !isBoolFlag(f) {
			usage += fmt.Sprintf(" (default %q)", f.DefValue)
		}
		fmt.Fprintf(b, "      %s\n", usage)
	})
	fmt.Fprintf(b, "  -h, --help\n      this help\n")
}

// flagName is how help and completion spell a flag: -x for a single
// letter, --name otherwise (the flag package takes either).
func flagName(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}

// printUsage writes the program's help: the command list, each command's
// synopsis, and the global flags.
func (c *cli) printUsage(w io.Writer) {
	var b strings.Builder
	fmt.Fprintf(&b, "seedwarden: Shoot placement for Gardener, as an admission webhook and its tools.\n\nUsage:\n  %s <command> [flags]\n", c.prog)
	if !c.plugin() {
		fmt.Fprintf(&b, "  %s [serve flags]    (serve is the default command)\n", c.prog)
	}
	b.WriteString("\nCommands:\n")
	for _, cmd := range commands() {
		summary := cmd.summary
		if len(cmd.aliases) > 0 {
			summary += " (alias: " + strings.Join(cmd.aliases, ", ") + ")"
		}
		fmt.Fprintf(&b, "  %-11s %s\n", cmd.name, summary)
	}
	b.WriteString("\nSynopsis:\n")
	for _, cmd := range commands() {
		b.WriteString(c.synopsis(cmd))
	}
	fmt.Fprintf(&b, "\nFlags:\n  -h, --help  this help\n  --version   print the version\n\n"+
		"Run \"%s <command> --help\" for a command's flags and examples.\n"+
		"Exit codes: 0 success, 1 failure while running, 2 bad usage or invalid configuration, 3 (plan) some Shoot found no seed, or some SeedAutoscaler target is not met at maxReplicas.\n", c.prog)
	fmt.Fprint(w, b.String())
}

// write prints s on stdout; a failed write is exit code 1.
func (c *cli) write(s string) int {
	if _, err := io.WriteString(c.stdout, s); err != nil {
		return exitError
	}
	return exitOK
}

// helpCommand: `help` lists the commands, `help COMMAND` is COMMAND --help.
func helpCommand(_ context.Context, c *cli, args []string) int {
	fs := c.newFlagSet("help")
	if code, done := c.parseFlags(fs, args); done {
		return code
	}
	switch fs.NArg() {
	case 0:
		c.printUsage(c.stdout)
		return exitOK
	case 1:
		if cmd, ok := lookup(fs.Arg(0)); ok {
			return c.printHelp(cmd)
		}
		return c.unknownCommand(fs.Arg(0))
	default:
		fmt.Fprintf(c.stderr, "%s help: want at most one command, got %q\n", c.prog, fs.Args())
		return exitUsage
	}
}

// unknownCommand says so, suggests the nearest command, lists them all and
// returns exit code 2.
func (c *cli) unknownCommand(name string) int {
	fmt.Fprintf(c.stderr, "%s: unknown command %q", c.prog, name)
	if s := nearest(name, commandNames()); s != "" {
		fmt.Fprintf(c.stderr, "; did you mean %q?", s)
	}
	fmt.Fprint(c.stderr, "\n\n")
	c.printUsage(c.stderr)
	return exitUsage
}

// nearest is the name of known within two edits of name, if any: a
// misspelt command or flag.
func nearest(name string, known []string) string {
	best, bestD := "", 3
	for _, n := range known {
		if d := levenshtein.ComputeDistance(name, n); d < bestD && d < len(name) {
			best, bestD = n, d
		}
	}
	return best
}
