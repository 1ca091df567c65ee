// Command webhook is seedwarden's admission webhook server for Gardener,
// with the tools that decide as it does:
//
//	webhook [serve] [--config FILE] [--kubeconfig PATH] [--landscape FILE]
//	webhook simulate -f FILE_OR_DIR... [--config FILE] [--landscape FILE --shoot FILE] [-o json|text]
//	webhook simulate --kubeconfig PATH --shoot NAMESPACE/NAME [--config FILE] [-o json|text]
//	webhook plan (--landscape FILE | --kubeconfig PATH) [--config FILE] [--drain SEED] [--remove-seed SEED] [--add-seed FILE] [--add-shoots N --like FILE] [-o text|json]
//	webhook validate --config FILE [--mode cluster|landscape]
//	webhook completion bash|zsh|fish|powershell
//	webhook version
//
// The commands are cobra commands (commands.go), as Gardener's, kubectl's
// and cert-manager's are. Installed as kubectl-seedwarden it is a kubectl
// plugin: `kubectl seedwarden simulate …` (help text then names it so); as
// kubectl_complete-seedwarden it completes the plugin's command lines for
// kubectl. `webhook help` and `webhook COMMAND --help` describe each command.
//
// Exit codes: 0 success, 1 failure while running (or a scenario that could not
// be decided), 2 bad usage or invalid configuration, 3 a plan in which some
// Shoot found no seed.
package main

import (
	"context"
	"io"
	"os"

	ctrl "sigs.k8s.io/controller-runtime"
)

// Exit codes.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

func main() {
	// Only a real process (not a test running several servers) sets the
	// process-wide loggers.
	setLogger = setProcessLogger
	if prog, ok := kubectlCompleteName(os.Args[0]); ok {
		os.Exit(kubectlComplete(&cli{prog: prog, stdout: os.Stdout, stderr: os.Stderr}, os.Args[1:]))
	}
	os.Exit(runAs(ctrl.SetupSignalHandler(), programName(os.Args[0]), os.Args[1:], os.Stdout, os.Stderr))
}

// setLogger installs the logger of `webhook serve` process-wide.
var setLogger = ctrl.SetLogger

// run runs the program as webhook.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runAs(ctx, defaultProg, args, stdout, stderr)
}

// runAs runs the command line and returns the exit code; prog is the name
// help text gives the program (programName).
func runAs(ctx context.Context, prog string, args []string, stdout, stderr io.Writer) int {
	c := &cli{prog: prog, stdout: stdout, stderr: stderr}
	return c.execute(ctx, args)
}
