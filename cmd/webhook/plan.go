package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/spf13/pflag"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/config"
	"github.com/seedwarden/seedwarden/internal/landscape"
	"github.com/seedwarden/seedwarden/internal/plan"
)

// exitIncomplete is plan's exit code when some Shoot found no seed (or was
// left on a removed seed): the plan ran, but does not work out.
const exitIncomplete = 3

// planFlags collects plan's operations in the order they are given: the
// flag package calls Set in command-line order.
type planFlags struct {
	ops []planOp
}

// planOp is one operation with the flag it came from, for error messages.
// An --add-shoots waits for the --like that completes it.
type planOp struct {
	flag, value string
	op          plan.Operation
	count       int // --add-shoots
}

type opFlag struct {
	p    *planFlags
	name string
	// make turns the flag's value into an operation, or says why not.
	make func(value string) (planOp, error)
}

func (f opFlag) String() string { return "" }

// Type names the value in help, unless the usage names it.
func (f opFlag) Type() string { return "string" }

func (f opFlag) Set(v string) error {
	op, err := f.make(v)
	if err != nil {
		return err
	}
	op.flag, op.value = f.name, v
	f.p.ops = append(f.p.ops, op)
	return nil
}

func (p *planFlags) register(fs *pflag.FlagSet) {
	seedOp := func(mk func(string) plan.Operation) func(string) (planOp, error) {
		return func(v string) (planOp, error) {
			if v == "" {
				return planOp{}, errors.New("a seed name is required")
			}
			return planOp{op: mk(v)}, nil
		}
	}
	fs.Var(opFlag{p, "drain", seedOp(func(s string) plan.Operation { return plan.Drain{Seed: s} })}, "drain",
		"move every Shoot of `SEED` elsewhere, one by one in namespace/name order, as a control plane migration (repeatable)")
	fs.Var(opFlag{p, "remove-seed", seedOp(func(s string) plan.Operation { return plan.RemoveSeed{Seed: s} })}, "remove-seed",
		"take `SEED` out of the landscape; Shoots still on it are reported as stranded (drain it first) (repeatable)")
	fs.Var(opFlag{p, "add-seed", func(string) (planOp, error) { return planOp{}, nil }}, "add-seed",
		"add the Seeds of `FILE` (YAML or JSON manifests) (repeatable)")
	fs.Var(opFlag{p, "add-shoots", func(v string) (planOp, error) {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return planOp{}, errors.New("must be a whole number of at least 1")
		}
		return planOp{count: n}, nil
	}}, "add-shoots", "place `N` copies of the --like Shoot in sequence (repeatable, each with its --like)")
	fs.Var(opFlag{p, "like", func(string) (planOp, error) { return planOp{}, nil }}, "like",
		"template Shoot (YAML or JSON `FILE`) for the --add-shoots before it")
}

// operations reads the files the flags name and pairs each --add-shoots with
// the --like after it. Errors name the flag and its value.
func (p *planFlags) operations() ([]plan.Operation, []planOp, error) {
	var ops []plan.Operation
	var from []planOp
	for i := 0; i < len(p.ops); i++ {
		o := p.ops[i]
		switch o.flag {
		case "like":
			return nil, nil, fmt.Errorf("--like %q: no --add-shoots before it", o.value)
		case "add-seed":
			seeds, err := readSeeds(o.value)
			if err != nil {
				return nil, nil, fmt.Errorf("--add-seed %q: %w", o.value, err)
			}
			o.op = plan.AddSeeds{Seeds: seeds}
		case "add-shoots":
			if i+1 == len(p.ops) || p.ops[i+1].flag != "like" {
				return nil, nil, fmt.Errorf("--add-shoots %s: needs --like FILE right after it", o.value)
			}
			i++
			like, err := readShoot(p.ops[i].value)
			if err != nil {
				return nil, nil, fmt.Errorf("--like %q: %w", p.ops[i].value, err)
			}
			o.op = plan.AddShoots{Like: like, Count: o.count}
		}
		ops = append(ops, o.op)
		from = append(from, o)
	}
	return ops, from, nil
}

// warnLandscape prints a near miss of a landscape file (a dump: warned,
// not refused; internal/landscape/strict.go).
func warnLandscape(msg string) { fmt.Fprintln(os.Stderr, "warning: "+msg) }

func readShoot(path string) (*api.Shoot, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return landscape.DecodeShoot(data)
}

// readSeeds reads a file of Seed manifests, written by hand (a near miss
// is an error); anything else in it is an error.
func readSeeds(path string) ([]*api.Seed, error) {
	objs, err := landscape.ReadHandWritten(path)
	if err != nil {
		return nil, err
	}
	seeds := make([]*api.Seed, len(objs))
	for i, o := range objs {
		s, ok := o.(*api.Seed)
		if !ok {
			return nil, fmt.Errorf("item %d: want a core.gardener.cloud/v1beta1 Seed, found %s %q", i, o.GetObjectKind().GroupVersionKind().Kind, o.GetName())
		}
		seeds[i] = s
	}
	return seeds, nil
}

// planOptions are plan's flags.
type planOptions struct {
	fs                                            *pflag.FlagSet
	ops                                           planFlags
	landscapeFile, configPath, kubeconfig, format *string
	autoscale                                     *string
}

// planFlagSet defines plan's flags on fs.
func planFlagSet(fs *pflag.FlagSet) *planOptions {
	o := &planOptions{fs: fs}
	o.ops.register(fs)
	o.landscapeFile = fs.String("landscape", "", "landscape `FILE` (YAML/JSON List or multi-document, e.g. kubectl get seeds,shoots,cloudprofiles,projects -A -o yaml)")
	o.configPath = fs.String("config", "", "configuration `FILE`: strategy, networkOverlap, scoring and gardenNamespace, as the webhook uses them")
	o.kubeconfig = fs.String("kubeconfig", "", "instead of --landscape: the landscape of the cluster of kubeconfig `PATH`, listed once (current context; \"\" is $KUBECONFIG, in-cluster or ~/.kube/config)")
	o.format = fs.StringP("output", "o", outputText, "output `FORMAT`: text (tables for people) or json")
	o.autoscale = fs.String("autoscale", "", "instead of operations: what the SeedAutoscalers of `FILE` (with the ManagedSeedSets they name, unless the landscape has them) recommend on the landscape as it is, and why")
	fs.SetNormalizeFunc(shortNames)
	return o
}

func planCommand(ctx context.Context, c *cli, o *planOptions, args []string) int {
	stdout, stderr := c.stdout, c.stderr
	flags, landscapeFile, configPath, kubeconfig, format := &o.ops, o.landscapeFile, o.configPath, o.kubeconfig, o.format
	fail := func(format string, args ...any) int {
		fmt.Fprintf(stderr, "%s plan: "+format+"\n", append([]any{c.prog}, args...)...)
		return exitUsage
	}
	if len(args) > 0 {
		return fail("unexpected argument %q", args[0])
	}
	live := o.fs.Changed("kubeconfig")
	switch {
	case live && *landscapeFile != "":
		return fail(errLandscapeWithKubeconfig)
	case !live && *landscapeFile == "":
		return fail("no landscape: give --landscape FILE or --kubeconfig PATH")
	}
	if o.fs.Changed("autoscale") {
		return planAutoscale(ctx, c, o, live, fail)
	}
	write, err := newReportWriter(*format)
	if err != nil {
		return fail("%v", err)
	}
	ops, from, err := flags.operations()
	if err != nil {
		return fail("%v", err)
	}
	cfg, err := loadConfig(*configPath)
	if err != nil {
		return fail("%v", err)
	}
	objs, err := planSource(ctx, cfg, *landscapeFile, *kubeconfig, live)
	if err != nil {
		return fail("%v", err)
	}
	report, err := runPlan(cfg, objs, ops)
	if opErr := (*plan.OpError)(nil); errors.As(err, &opErr) {
		o := from[opErr.Index]
		return fail("--%s %q: %v", o.flag, o.value, opErr.Err)
	}
	if err != nil {
		return fail("%v", err)
	}
	out := bufio.NewWriter(stdout)
	write(out, report)
	if err := out.Flush(); err != nil {
		fmt.Fprintf(stderr, "%s plan: %v\n", c.prog, err)
		return exitError
	}
	if !report.Complete() {
		return exitIncomplete
	}
	return exitOK
}

// planSource reads the landscape file, or lists the cluster's landscape
// when live; errors name the flag and its value.
func planSource(ctx context.Context, cfg *config.Config, file, kubeconfig string, live bool) ([]client.Object, error) {
	if live {
		return liveLandscape(ctx, kubeconfig, cfg.GardenNamespace)
	}
	objs, err := landscape.ReadFile(file, warnLandscape)
	if err != nil {
		return nil, fmt.Errorf("--landscape %q: %w", file, err)
	}
	return objs, nil
}

// runPlan loads the landscape as the webhook's cache does and plans on it
// with the webhook's placement options.
func runPlan(cfg *config.Config, objs []client.Object, ops []plan.Operation) (*plan.Report, error) {
	store := newStore(cfg, nil)
	store.Load(objs)
	var shoots []*api.Shoot
	for _, o := range objs {
		if s, ok := o.(*api.Shoot); ok {
			shoots = append(shoots, s)
		}
	}
	return plan.Run(store.Snapshot(), shoots, placementOptions(cfg), ops)
}
