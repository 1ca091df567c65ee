package main

import (
	"flag"
)

// commands is the command table (help.go), in the order help lists them.
func commands() []command {
	return []command{
		{
			name:    "serve",
			summary: "Run the admission webhook server",
			usage:   []string{"[--config FILE] [--kubeconfig PATH] [--landscape FILE]"},
			about: `Serve the mutating webhook that places Shoots and the validating webhooks,
with metrics and probes: against a cluster (in-cluster config, $KUBECONFIG or
--kubeconfig), or with --landscape from a static file of Seeds, Shoots,
CloudProfiles, Projects and region-config ConfigMaps (no cluster at all).`,
			examples: []example{
				{"serve --config /etc/seedwarden/config.yaml", "in a pod: the cluster of the in-cluster config"},
				{"serve --config examples/config-dev.yaml --landscape examples/landscape.yaml", "no cluster: decide from a landscape file"},
			},
			flags: func(fs *flag.FlagSet) { serveFlags(fs) },
			run:   serveCommand,
		},
		{
			name:    "simulate",
			summary: "Decide Shoots offline: scenario files, a landscape file, or an existing Shoot of a cluster",
			usage: []string{
				"-f FILE_OR_DIR... [--config FILE] [--landscape FILE --shoot FILE] [-o json|text]",
				"--kubeconfig PATH --shoot NAMESPACE/NAME [--config FILE] [-o json|text]",
			},
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
			flags: func(fs *flag.FlagSet) { simulateFlags(fs) },
			run:   simulateCommand,
		},
		{
			name:    "plan",
			summary: "What if: drain, remove or add seeds, add Shoots; or what the SeedAutoscalers would do",
			usage: []string{"(--landscape FILE | --kubeconfig PATH) [--config FILE] [--drain SEED] [--remove-seed SEED]\n" +
				"[--add-seed FILE] [--add-shoots N --like FILE] [-o text|json]",
				"(--landscape FILE | --kubeconfig PATH) --autoscale FILE [--config FILE] [-o text|json]"},
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
			flags: func(fs *flag.FlagSet) { planFlagSet(fs) },
			run:   planCommand,
		},
		{
			name:    "audit",
			summary: "Check every Shoot on a seed against the placement rules of today",
			usage:   []string{"(--landscape FILE | --kubeconfig PATH) [--config FILE] [--seed NAME]... [-o text|json]"},
			about: `Check every Shoot with a seed against the rules of staying on it, as the
leader's audit (audit.enabled) does: taints it does not tolerate, seed
selectors and providers that no longer match, access restrictions, zones, a
seed deleting or gone, a seed over its allocatable. Print one line per Shoot
and rule (the rule is a placement reason code), or -o json. Writes nothing
(with --kubeconfig it lists the cluster's landscape once). Exit code 3 when
some Shoot breaks a rule.`,
			examples: []example{
				{"audit --landscape examples/landscape.yaml", "which Shoots break a placement rule now"},
				{"audit --kubeconfig ~/.kube/garden --seed aws-eu1 -o json", "the Shoots of aws-eu1 after tainting it"},
			},
			flags: func(fs *flag.FlagSet) { auditFlagSet(fs) },
			run:   auditCommand,
		},
		{
			name:    "validate",
			aliases: []string{"check-config"},
			summary: "Check a configuration file as the server would, and print every problem",
			usage:   []string{"--config FILE [--mode cluster|landscape]"},
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
			flags: func(fs *flag.FlagSet) { validateFlags(fs) },
			run:   validateCommand,
		},
		{
			name:    "completion",
			summary: "Print a shell completion script (bash or zsh)",
			usage:   []string{"bash|zsh"},
			about: `Print a script that completes commands, flags and file names. Load it in the
current shell, or install it where the shell finds completions.`,
			examples: []example{
				{"completion bash > /etc/bash_completion.d/webhook", "bash, for every session (or: source <(webhook completion bash))"},
				{`completion zsh > "${fpath[1]}/_webhook"`, "zsh, for every session (then restart zsh)"},
			},
			words: func() []string { return shells },
			run:   completionCommand,
		},
		{
			name:    "version",
			summary: "Print version, git commit and Go version (also: --version)",
			usage:   []string{""},
			about:   "Print the version and git commit the binary was built from, and the Go version.",
			examples: []example{
				{"version", "e.g. seedwarden webhook v0.3.0 (commit 1a2b3c…, go1.26.0 linux/amd64)"},
				{"--version", "the same"},
			},
			run: versionCommand,
		},
		{
			name:    "help",
			summary: "List the commands, or show one command's help",
			usage:   []string{"[COMMAND]"},
			about:   "Without an argument, list the commands; with one, print its usage, flags and examples.",
			examples: []example{
				{"help", "the command list"},
				{"help plan", "the same as: plan --help"},
			},
			words: commandNames,
			run:   helpCommand,
		},
	}
}
