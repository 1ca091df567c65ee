package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/seedwarden/seedwarden/internal/config"
)

// `validate` (alias check-config): a configuration file checked as the
// server checks it at start-up, without starting anything.

// Modes of serving that validate --mode checks for.
const (
	modeCluster   = "cluster"
	modeLandscape = "landscape"
)

type validateOptions struct {
	configPath, mode *string
}

// validateFlags defines validate's flags on fs.
func validateFlags(fs *pflag.FlagSet) validateOptions {
	return validateOptions{
		configPath: fs.String("config", "", "configuration `FILE` (YAML or JSON) to check; required"),
		mode:       fs.String("mode", modeCluster, "serving `MODE` whose start-up checks are added: cluster (serve against a cluster) or landscape (serve --landscape)"),
	}
}

func validateCommand(c *cli, cmd *cobra.Command, o validateOptions, args []string) int {
	fail := func(format string, args ...any) int {
		fmt.Fprintf(c.stderr, "%s validate: "+format+"\n", append([]any{c.prog}, args...)...)
		c.printSynopsis(cmd)
		return exitUsage
	}
	if len(args) > 0 {
		return fail("unexpected argument %q", args[0])
	}
	if *o.configPath == "" {
		return fail("--config FILE is required")
	}
	modeCheck, ok := modeChecks[*o.mode]
	if !ok {
		return fail("--mode %q: want %s or %s", *o.mode, modeCluster, modeLandscape)
	}
	if _, err := loadConfig(*o.configPath, modeCheck); err != nil {
		fmt.Fprintf(c.stderr, "%s validate: %v\n", c.prog, err)
		return exitUsage
	}
	return c.write(*o.configPath + ": ok\n")
}

// modeChecks are the start-up checks of serve beyond loadConfig's, by
// mode, as config checks.
var modeChecks = map[string]config.Check{
	modeCluster: func(cfg *config.Config) []string {
		// newPlacementSigner refuses this when serving a cluster; a
		// configured key file is read by the server only (a pod's path).
		if cfg.Placement.KeyFile == "" && cfg.BindingEnabled() {
			return []string{strings.TrimPrefix(errKeyRequired, "invalid configuration: ")}
		}
		return nil
	},
	modeLandscape: func(cfg *config.Config) []string {
		var invalid *config.Error
		if err := checkLandscapeConfig(cfg); errors.As(err, &invalid) {
			return invalid.Problems
		}
		return nil
	},
}
