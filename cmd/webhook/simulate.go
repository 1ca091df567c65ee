package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/config"
	"github.com/seedwarden/seedwarden/internal/landscape"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// scenario is a scenario file (docs/design.md, "Scenario files"). Other keys, such as name and
// expect, are ignored.
type scenario struct {
	Strategy       placement.Strategy    `json:"strategy"`
	NetworkOverlap placement.NetworkMode `json:"networkOverlap"`
	Objects        json.RawMessage       `json:"objects"`
	Shoot          json.RawMessage       `json:"shoot"`
}

// result is one line of simulate's output.
type result struct {
	Name          string            `json:"name"`
	Seed          string            `json:"seed,omitempty"`
	Unschedulable bool              `json:"unschedulable,omitempty"`
	Step          placement.Step    `json:"step,omitempty"`
	Message       string            `json:"message,omitempty"`
	Reasons       map[string]string `json:"reasons,omitempty"`
	// Code, Codes and Counts are the reasons for programs (docs/placement.md,
	// "Reason codes"): the decision's own code, each seed's, and the seeds
	// per code.
	Code   placement.ReasonCode            `json:"code,omitempty"`
	Codes  map[string]placement.ReasonCode `json:"codes,omitempty"`
	Counts map[placement.ReasonCode]int    `json:"counts,omitempty"`
	Error  string                          `json:"error,omitempty"`
	// Seeds is the N of "0/N seeds eligible" (placement.Decision.Eligible):
	// every seed of the landscape, as the admission warning counts.
	Seeds int `json:"seeds,omitempty"`
	// headline is the text output's first line (Decision.Headline).
	headline string
	// Scores is a scored decision's breakdown (scoring configured): the
	// chosen seed, then the runners-up, each scorer's score and weight.
	// Scored is how many seeds the profile ranked. Both absent without a
	// profile, so the output is as before.
	Scores []placement.SeedScore `json:"scores,omitempty"`
	Scored int                   `json:"scored,omitempty"`
	// Policies says what the placement policies did to the decision
	// (placement.PolicyEffect.Summary without its "policies: ": the seeds
	// each set aside, and why the chosen seed is the best left); absent
	// when none acted.
	Policies string `json:"policies,omitempty"`
	// alternatives is the text output's why-not-elsewhere of a scheduled
	// result.
	alternatives alternatives
}

func newResult(name string, d placement.Decision) result {
	if d.Schedulable() {
		return result{Name: name, Seed: d.Seed, Scores: d.Scores, Scored: d.Scored, Policies: strings.TrimPrefix(d.Policy.Summary(), "policies: ")}
	}
	r := result{Name: name, Unschedulable: true, Step: d.Step, Message: d.Message, Reasons: d.Reasons,
		Code: d.Code, Codes: d.Codes, Counts: d.CodeSummary().Counts, headline: d.Headline()}
	if d.Step != placement.StepSelfHosted { // no seed was considered
		r.Seeds = d.Total
	}
	return r
}

// stringsFlag collects a repeatable flag.
type stringsFlag []string

func (s *stringsFlag) String() string     { return strings.Join(*s, ",") }
func (s *stringsFlag) Set(v string) error { *s = append(*s, v); return nil }
func (*stringsFlag) Type() string         { return "stringArray" }

// simulateOptions are simulate's flags.
type simulateOptions struct {
	fs                                                       *pflag.FlagSet
	files                                                    stringsFlag
	configPath, landscapeFile, shootPath, kubeconfig, format *string
}

// simulateFlags defines simulate's flags on fs.
func simulateFlags(fs *pflag.FlagSet) *simulateOptions {
	o := &simulateOptions{fs: fs}
	fs.VarP(&o.files, "filename", "f", "scenario `FILE_OR_DIR`: a file, or a directory of *.json scenario files (repeatable; further arguments are taken as more)")
	o.configPath = fs.String("config", "", "configuration `FILE`: strategy, networkOverlap, scoring and gardenNamespace (a scenario may override strategy and networkOverlap)")
	o.landscapeFile = fs.String("landscape", "", "landscape `FILE` (YAML/JSON List or multi-document, e.g. kubectl get seeds,shoots,cloudprofiles,projects -A -o yaml); needs --shoot")
	o.shootPath = fs.String("shoot", "", "Shoot to place on --landscape (YAML or JSON `FILE`); with --kubeconfig, NAMESPACE/NAME of an existing Shoot")
	o.kubeconfig = fs.String("kubeconfig", "", "decide --shoot against the landscape of the cluster of kubeconfig `PATH`, listed once (current context; \"\" is $KUBECONFIG, in-cluster or ~/.kube/config)")
	o.format = fs.StringP("output", "o", outputJSON, "output `FORMAT`: json (one JSON line per decision, with a scored decision's whole breakdown) or text")
	fs.SetNormalizeFunc(shortNames)
	return o
}

func simulateCommand(ctx context.Context, c *cli, cmd *cobra.Command, o *simulateOptions, args []string) int {
	fail := func(err error) int {
		fmt.Fprintf(c.stderr, "%s simulate: %v\n", c.prog, err)
		return exitUsage
	}
	files := append(slices.Clone(o.files), args...)
	live := o.fs.Changed("kubeconfig")
	if msg := checkSimulateArgs(live, len(files) > 0, *o.landscapeFile != "", *o.shootPath != ""); msg != "" {
		fail(errors.New(msg))
		c.printSynopsis(cmd)
		return exitUsage
	}
	cfg, err := loadConfig(*o.configPath)
	if err != nil {
		return fail(err)
	}
	if live {
		return simulateLive(ctx, cfg, *o.kubeconfig, *o.shootPath, *o.format, c.stdout, c.stderr)
	}
	out := bufio.NewWriter(c.stdout)
	encode, err := newEncoder(*o.format, out)
	if err != nil {
		return fail(err)
	}
	// The landscape and the Shoot are named on the command line: one that
	// cannot be read is bad usage, before anything is decided.
	var onLandscape func() result
	if *o.landscapeFile != "" {
		objs, shoot, err := readLandscapeShoot(*o.landscapeFile, *o.shootPath)
		if err != nil {
			return fail(err)
		}
		onLandscape = func() result { return placeOnLandscape(cfg, objs, shoot) }
	}
	failed := false
	emit := func(r result) {
		failed = failed || r.Error != ""
		encode(r)
	}
	for _, path := range expandScenarioPaths(files, emit) {
		emit(simulateFile(cfg, path))
	}
	if onLandscape != nil {
		emit(onLandscape())
	}
	if err := out.Flush(); err != nil {
		fmt.Fprintf(c.stderr, "%s simulate: %v\n", c.prog, err)
		return exitError
	}
	if failed {
		return exitError
	}
	return exitOK
}

// checkSimulateArgs says what is wrong with simulate's sources, or "".
func checkSimulateArgs(live, files, landscape, shoot bool) string {
	switch {
	case live && (files || landscape):
		return "--kubeconfig is mutually exclusive with -f and --landscape: it decides an existing Shoot of the cluster"
	case live && !shoot:
		return "--kubeconfig needs --shoot NAMESPACE/NAME"
	case live:
		return ""
	case landscape != shoot:
		return "--landscape and --shoot go together"
	case !files && !landscape:
		return "nothing to decide: give -f FILE_OR_DIR, --landscape with --shoot, or --kubeconfig with --shoot"
	}
	return ""
}

// expandScenarioPaths replaces each directory by its *.json files in name
// order; a path that cannot be read is reported through emit.
func expandScenarioPaths(paths []string, emit func(result)) []string {
	var out []string
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			emit(result{Name: p, Error: err.Error()})
			continue
		}
		if !fi.IsDir() {
			out = append(out, p)
			continue
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			emit(result{Name: p, Error: err.Error()})
			continue
		}
		for _, e := range entries { // sorted by name
			if !e.IsDir() && strings.HasSuffix(e.Name(), ".json") {
				out = append(out, filepath.Join(p, e.Name()))
			}
		}
	}
	return out
}

// simulateFile decides one scenario file. Its result is named after the file
// (without .json); a file that cannot be decided yields an error result named
// by its path.
func simulateFile(cfg *config.Config, path string) result {
	store, shoot, opts, err := loadScenario(cfg, path)
	if err != nil {
		return result{Name: path, Error: err.Error()}
	}
	return placeExplained(strings.TrimSuffix(filepath.Base(path), ".json"), store, shoot, opts)
}

func loadScenario(cfg *config.Config, path string) (*cache.Store, *api.Shoot, placement.Options, error) {
	opts := placementOptions(cfg)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, opts, err
	}
	var sc scenario
	if err := json.Unmarshal(data, &sc); err != nil {
		return nil, nil, opts, fmt.Errorf("not a scenario: %w", err)
	}
	if sc.Strategy != "" {
		opts.Strategy = sc.Strategy
	}
	if sc.NetworkOverlap != "" {
		opts.NetworkMode = sc.NetworkOverlap
	}
	if err := opts.Validate(); err != nil {
		return nil, nil, opts, err
	}
	if len(sc.Shoot) == 0 || string(sc.Shoot) == "null" {
		return nil, nil, opts, errors.New("shoot: missing")
	}
	shoot, err := landscape.DecodeShoot(sc.Shoot)
	if err != nil {
		return nil, nil, opts, fmt.Errorf("shoot: %w", err)
	}
	store := newStore(cfg, nil)
	if len(sc.Objects) > 0 && string(sc.Objects) != "null" {
		objs, err := landscape.Decode(sc.Objects)
		if err != nil {
			return nil, nil, opts, fmt.Errorf("objects: %w", err)
		}
		store.Load(objs)
	}
	return store, shoot, opts, nil
}

// readLandscapeShoot reads the files of --landscape and --shoot; errors
// name the flag and its value.
func readLandscapeShoot(landscapePath, shootPath string) ([]client.Object, *api.Shoot, error) {
	shoot, err := readShoot(shootPath)
	if err != nil {
		return nil, nil, fmt.Errorf("--shoot %q: %w", shootPath, err)
	}
	objs, err := landscape.ReadFile(landscapePath, warnLandscape)
	if err != nil {
		return nil, nil, fmt.Errorf("--landscape %q: %w", landscapePath, err)
	}
	return objs, shoot, nil
}

// placeOnLandscape places shoot on the landscape objs; the result is named
// after the Shoot.
func placeOnLandscape(cfg *config.Config, objs []client.Object, shoot *api.Shoot) result {
	// A Shoot the landscape holds already (explaining an existing one from
	// a dump) is decided without its own charge, as live explain does.
	_, objs = takeShoot(objs, client.ObjectKeyFromObject(shoot))
	store := newStore(cfg, nil)
	store.Load(objs)
	return placeExplained(shoot.Name, store, shoot, placementOptions(cfg))
}
