// Command webhook is seedwarden's admission webhook server for Gardener.
//
//	webhook [serve] [--config FILE] [--kubeconfig PATH] [--landscape FILE]
//	webhook simulate -f FILE_OR_DIR... [--config FILE] [--landscape FILE --shoot FILE] [-o json|text]
//	webhook simulate --kubeconfig PATH --shoot NAMESPACE/NAME [--config FILE] [-o json|text]
//	webhook plan (--landscape FILE | --kubeconfig PATH) [--config FILE] [--drain SEED] [--remove-seed SEED] [--add-seed FILE] [--add-shoots N --like FILE] [-o text|json]
//	webhook version
//
// Exit codes: 0 success, 1 failure while running (or a scenario that could not
// be decided), 2 bad usage or invalid configuration, 3 a plan in which some
// Shoot found no seed.
package main

import (
	"context"
	"fmt"
	"io"
	stdlog "log"
	"os"
	"strings"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
)

// Exit codes.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

func main() {
	setLogger = func(l logr.Logger) {
		ctrl.SetLogger(l)
		// client-go logs through klog. klog.SetLogger must not race with
		// logging goroutines, so only a real process (not a test running
		// several servers) sets it.
		klog.SetLogger(l)
		stdlog.SetFlags(0)
		stdlog.SetOutput(newStdLogWriter(l))
	}
	os.Exit(run(ctrl.SetupSignalHandler(), os.Args[1:], os.Stdout, os.Stderr))
}

// setLogger installs the logger of `webhook serve` process-wide.
var setLogger = ctrl.SetLogger

const usage = `Usage:
  webhook [serve] [--config FILE] [--kubeconfig PATH] [--landscape FILE]
      Run the admission webhook server: against a cluster (in-cluster config,
      $KUBECONFIG or --kubeconfig), or with --landscape from a static file of
      Seeds, Shoots, CloudProfiles, Projects and region-config ConfigMaps.
  webhook simulate -f FILE_OR_DIR... [--config FILE] [--landscape FILE --shoot FILE] [-o json|text]
      Decide scenario files (or a Shoot against a landscape) and print one JSON
      line per decision (-o text: lines for people, with every seed's reason).
  webhook simulate --kubeconfig PATH --shoot NAMESPACE/NAME [--config FILE] [-o json|text]
      Decide an existing Shoot against the cluster's landscape, listed once
      (nothing is written): why is it pending, where would it go now.
  webhook plan (--landscape FILE | --kubeconfig PATH) [--config FILE] [--drain SEED]
               [--remove-seed SEED] [--add-seed FILE] [--add-shoots N --like FILE] [-o text|json]
      What if: apply the operations in the order given (drain a seed, remove or
      add seeds, place N copies of a Shoot) and report every seed before and
      after, free slots per provider and region, each Shoot moved or added and
      each that found no seed with every seed's reason. Writes nothing (with
      --kubeconfig it lists the cluster's landscape once).
      Exit code 3 when some Shoot found no seed.
  webhook version
      Print version, git commit and Go version.

Run "webhook <command> -h" for the flags of a command.
`

// run dispatches to a subcommand and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cmd := "serve"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		return serveCommand(ctx, args, stderr)
	case "simulate":
		return simulateCommand(ctx, args, stdout, stderr)
	case "plan":
		return planCommand(ctx, args, stdout, stderr)
	case "version":
		return versionCommand(args, stdout, stderr)
	case "help":
		if _, err := fmt.Fprint(stdout, usage); err != nil {
			return exitError
		}
		return exitOK
	default:
		fmt.Fprintf(stderr, "webhook: unknown command %q\n\n%s", cmd, usage)
		return exitUsage
	}
}
