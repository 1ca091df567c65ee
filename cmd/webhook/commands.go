package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// The command tree: every subcommand's name, one-line summary, synopsis,
// description, examples and flags, as cobra commands. Help, completion and
// the kubectl plugin's completion are cobra's, generated from it, so a flag
// is defined once (in its command's flags function).

// commandText is what help shows of a command.
type commandText struct {
	// use holds synopsis lines, each starting with the command's name,
	// without the program's name; the first is cobra's Use.
	use     []string
	aliases []string
	// summary is the command's line in the command list.
	summary string
	// about says what the command does, for its --help.
	about string
	// examples are command lines (after the program name) with what they do.
	examples []example
}

type example struct{ args, what string }

// command is a cobra command of t that runs run with the arguments left
// after the flags; run's result is the exit code.
func (c *cli) command(t commandText, run func(ctx context.Context, cmd *cobra.Command, args []string) int) *cobra.Command {
	var ex []string
	for _, e := range t.examples {
		ex = append(ex, fmt.Sprintf("  # %s\n  %s %s", e.what, c.prog, e.args))
	}
	cmd := &cobra.Command{
		Use:                   strings.Join(t.use, "\n  "+c.prog+" "),
		Aliases:               t.aliases,
		Short:                 t.summary,
		Long:                  t.summary + ".\n\n" + t.about,
		Example:               strings.Join(ex, "\n"),
		DisableFlagsInUseLine: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			c.code = run(cmd.Context(), cmd, args)
			return nil
		},
	}
	// Help lists the flags in the order the flags function defines them.
	cmd.Flags().SortFlags = false
	return cmd
}

// newRoot is the program's command tree for this invocation.
func (c *cli) newRoot() *cobra.Command {
	long := "seedwarden: Shoot placement for Gardener, as an admission webhook and its tools."
	if !c.plugin() {
		long += "\n\nWithout a command (or with serve's flags only), webhook serves."
	}
	long += "\n\nExit codes: 0 success, 1 failure while running (test: some case failed),\n" +
		"2 bad usage or invalid configuration,\n" +
		"3 (plan) some Shoot found no seed, or some SeedAutoscaler target is not met at maxReplicas;\n" +
		"  (audit) some Shoot breaks a placement rule."
	root := &cobra.Command{
		Use:               c.binary(),
		Short:             "Shoot placement for Gardener",
		Long:              long,
		Annotations:       map[string]string{cobra.CommandDisplayNameAnnotation: c.prog},
		Args:              cobra.ArbitraryArgs,
		SilenceErrors:     true,
		SilenceUsage:      true,
		CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true},
	}
	version := root.Flags().Bool("version", false, "print the version")
	root.RunE = func(_ *cobra.Command, args []string) error {
		switch {
		case *version:
			c.code = versionCommand(c, args)
		case len(args) > 0:
			c.code = c.unknownCommand(root, args[0])
		default:
			c.code = c.writeErr(root.Help())
		}
		return nil
	}
	root.SetOut(c.stdout)
	root.SetErr(c.stderr)
	root.SetFlagErrorFunc(flagError)
	root.AddCommand(c.newServeCommand(), c.newSimulateCommand(), c.newPlanCommand(), c.newAuditCommand(), c.newValidateCommand(),
		c.newTestCommand(), c.newCompletionCommand(), c.newVersionCommand())
	root.SetHelpCommand(c.newHelpCommand(root))
	root.ValidArgsFunction = completeAliases
	return root
}

func (c *cli) newServeCommand() *cobra.Command {
	var o serveOptions
	cmd := c.command(commandText{
		use:     []string{"serve [--config FILE] [--kubeconfig PATH] [--landscape FILE]"},
		summary: "Run the admission webhook server",
		about: `Serve the mutating webhook that places Shoots and the validating webhooks,
with metrics and probes: against a cluster (in-cluster config, $KUBECONFIG or
--kubeconfig), or with --landscape from a static file of Seeds, Shoots,
CloudProfiles, Projects and region-config ConfigMaps (no cluster at all).`,
		examples: []example{
			{"serve --config /etc/seedwarden/config.yaml", "in a pod: the cluster of the in-cluster config"},
			{"serve --config examples/config-dev.yaml --landscape examples/landscape.yaml", "no cluster: decide from a landscape file"},
		},
	}, func(ctx context.Context, _ *cobra.Command, args []string) int { return serveCommand(ctx, c, o, args) })
	o = serveFlags(cmd.Flags())
	return cmd
}

func (c *cli) newSimulateCommand() *cobra.Command {
	var o *simulateOptions
	cmd := c.command(commandText{
		use: []string{
			"simulate -f FILE_OR_DIR... [--config FILE] [--landscape FILE --shoot FILE] [-o json|text]",
			"simulate --kubeconfig PATH --shoot NAMESPACE/NAME [--config FILE] [-o json|text]",
		},
		summary: "Decide Shoots offline: scenario files, a landscape file, or an existing Shoot of a cluster",
		about: `Decide scenario files (or a Shoot against a landscape) with the webhook's own
code and print one JSON line per decision (-o text: lines for people, with
every seed's reason). With --kubeconfig, decide an existing Shoot against the
cluster's landscape, listed once (nothing is written): why is it pending,
where would it go now.`,
		examples: []example{
			{"simulate -f cmd/webhook/testdata/scenarios/", "every *.json scenario of a directory, in name order"},
			{"simulate -o text --landscape examples/landscape.yaml --shoot examples/shoot.yaml", "where would this Shoot go, and why not elsewhere"},
			{"simulate -o text --kubeconfig ~/.kube/garden --shoot garden-dev/ledger", "why is this Shoot pending"},
		},
	}, func(ctx context.Context, cmd *cobra.Command, args []string) int {
		return simulateCommand(ctx, c, cmd, o, args)
	})
	o = simulateFlags(cmd.Flags())
	completeValues(cmd, "output", outputJSON, outputText)
	return cmd
}

func (c *cli) newPlanCommand() *cobra.Command {
	var o *planOptions
	cmd := c.command(commandText{
		use: []string{"plan (--landscape FILE | --kubeconfig PATH) [--config FILE] [--drain SEED] [--remove-seed SEED]\n" +
			strings.Repeat(" ", len(c.prog)+len(" plan ")) + "[--add-seed FILE] [--add-shoots N --like FILE] [-o text|json]",
			"plan (--landscape FILE | --kubeconfig PATH) --autoscale FILE [--config FILE] [-o text|json]"},
		summary: "What if: drain, remove or add seeds, add Shoots; or what the SeedAutoscalers would do",
		about: `Apply the operations in the order given (drain a seed, remove or add seeds,
place N copies of a Shoot) and report every seed before and after, free slots
per provider and region, each Shoot moved or added and each that found no seed
with every seed's reason. Writes nothing (with --kubeconfig it lists the
cluster's landscape once). Exit code 3 when some Shoot found no seed or was
stranded on a removed seed (still on it, or still migrating away from it).
With --autoscale instead of operations: what each SeedAutoscaler of FILE
recommends for its ManagedSeedSet, each metric and why (no behavior: a file
has no history); exit code 3 when some target is not met at maxReplicas.`,
		examples: []example{
			{"plan --landscape examples/landscape.yaml --drain aws-eu1", "where would the Shoots of aws-eu1 go"},
			{"plan --landscape examples/landscape.yaml --add-shoots 20 --like examples/shoot.yaml -o json", "do 20 more Shoots like this one fit"},
			{"plan --kubeconfig ~/.kube/garden --drain aws-eu1 --remove-seed aws-eu1", "can the live garden lose aws-eu1"},
			{"plan --landscape examples/landscape.yaml --autoscale examples/autoscaling.yaml", "how many seeds does the set aws-eu need, and why"},
		},
	}, func(ctx context.Context, _ *cobra.Command, args []string) int { return planCommand(ctx, c, o, args) })
	o = planFlagSet(cmd.Flags())
	completeValues(cmd, "output", outputText, outputJSON)
	return cmd
}

func (c *cli) newValidateCommand() *cobra.Command {
	var o validateOptions
	cmd := c.command(commandText{
		use:     []string{"validate --config FILE [--mode cluster|landscape]"},
		aliases: []string{"check-config"},
		summary: "Check a configuration file as the server would, and print every problem",
		about: `Load a configuration file with every check the server applies at start-up
(fields, values, and the rules of the placement, cache and handler packages)
and print "FILE: ok", or every problem with its field and value. --mode adds
the checks of serving a cluster (the default) or a --landscape file. Files
the configuration names (placement.keyFile, server.clientAuth.caFile) are
read by the server only: their paths are the pod's.`,
		examples: []example{
			{"validate --config deploy/manifests/config.yaml", "check a file before it goes into the ConfigMap"},
			{"check-config --config examples/config-dev.yaml --mode landscape", "as `serve --landscape` would check it"},
		},
	}, func(_ context.Context, cmd *cobra.Command, args []string) int {
		return validateCommand(c, cmd, o, args)
	})
	o = validateFlags(cmd.Flags())
	completeValues(cmd, "mode", modeCluster, modeLandscape)
	return cmd
}

func (c *cli) newTestCommand() *cobra.Command {
	var o *testOptions
	cmd := c.command(commandText{
		use:     []string{"test SUITE... [--kubeconfig PATH] [--config FILE] [--junit FILE]"},
		summary: "Check expected placements, guard verdicts and SeedAutoscaler replicas of a test suite",
		about: `Decide each case of a suite file (YAML; docs/cli.md, "webhook test") with the
webhook's own code on the suite's landscape (or, with --kubeconfig, the
cluster's, listed once): a Shoot and its expected seed or reason codes, a seed
change and the binding and capacity guards' expected verdicts, a
SeedAutoscaler and its expected replicas. Prints a PASS/FAIL table and, for a
failed case, what was expected and what was decided. Exit code 0 when every
case passes, 1 when one fails, 2 on bad input.`,
		examples: []example{
			{"test examples/test-suite.yaml", "the example suite"},
			{"test examples/test-suite.yaml --junit bin/test-suite.xml", "also JUnit XML for CI"},
			{"test examples/test-suite.yaml --kubeconfig ~/.kube/garden", "the same cases on the live garden"},
		},
	}, func(ctx context.Context, cmd *cobra.Command, args []string) int {
		return testCommand(ctx, c, cmd, o, args)
	})
	o = testFlags(cmd.Flags())
	return cmd
}

func (c *cli) newVersionCommand() *cobra.Command {
	return c.command(commandText{
		use:     []string{"version"},
		summary: "Print version, git commit and Go version (also: --version)",
		about:   "Print the version and git commit the binary was built from, and the Go version.",
		examples: []example{
			{"version", "e.g. seedwarden webhook v0.3.0 (commit 1a2b3c…, go1.26.0 linux/amd64)"},
			{"--version", "the same"},
		},
	}, func(_ context.Context, _ *cobra.Command, args []string) int { return versionCommand(c, args) })
}

// completeValues completes the flag name with values (and no file names).
func completeValues(cmd *cobra.Command, name string, values ...string) {
	complete := func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		var out []string
		for _, v := range values {
			if strings.HasPrefix(v, toComplete) {
				out = append(out, v)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
	if err := cmd.RegisterFlagCompletionFunc(name, complete); err != nil {
		panic(err) // a flag this file names and the flags function does not define
	}
}

// completeAliases completes the aliases of commands in first position
// (cobra completes their names).
func completeAliases(root *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	var out []string
	for _, cmd := range root.Commands() {
		for _, a := range cmd.Aliases {
			if len(args) == 0 && cmd.IsAvailableCommand() && strings.HasPrefix(a, toComplete) {
				out = append(out, a+"\t"+cmd.Short)
			}
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
