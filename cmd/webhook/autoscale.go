package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/autoscaleplan"
	"github.com/seedwarden/seedwarden/internal/autoscalingapi"
	"github.com/seedwarden/seedwarden/internal/config"
	"github.com/seedwarden/seedwarden/internal/landscape"
	"github.com/seedwarden/seedwarden/internal/seedmanagement"
	"github.com/seedwarden/seedwarden/internal/seedscale"
)

// planAutoscale is `plan --autoscale FILE`: what each SeedAutoscaler of
// FILE recommends for its ManagedSeedSet on the landscape as it is. It
// takes none of plan's operations: they change a landscape the report
// then describes, not one the recommendation could read, and one exit code
// cannot answer both questions.
func planAutoscale(ctx context.Context, c *cli, o *planOptions, live bool, fail func(string, ...any) int) int {
	if len(o.ops.ops) > 0 {
		op := o.ops.ops[0]
		return fail("--autoscale cannot be combined with --%s: the recommendation reads the landscape as it is", op.flag)
	}
	write, err := newAutoscaleWriter(*o.format)
	if err != nil {
		return fail("%v", err)
	}
	cfg, err := loadConfig(*o.configPath)
	if err != nil {
		return fail("%v", err)
	}
	objs, err := planSource(ctx, cfg, *o.landscapeFile, *o.kubeconfig, live)
	if err != nil {
		return fail("%v", err)
	}
	in, err := autoscaleInput(cfg, objs, *o.autoscale)
	if err != nil {
		return fail("%v", err)
	}
	if live {
		sets, err := liveManagedSeedSets(ctx, *o.kubeconfig, missingSets(in))
		if err != nil {
			return fail("%v", err)
		}
		in.Sets = append(in.Sets, sets...)
	}
	in.Budget = recommendationBudget(ctx, cfg.Autoscaler.SyncBudget.Duration)
	in.Hold = seedscale.DrainHold(time.Now(), seedscale.NoMoveWindow)
	report, err := autoscaleplan.Run(in)
	if err != nil {
		return fail("--autoscale %q: %v", *o.autoscale, err)
	}
	out := bufio.NewWriter(c.stdout)
	write(out, report)
	if err := out.Flush(); err != nil {
		fmt.Fprintf(c.stderr, "%s plan: %v\n", c.prog, err)
		return exitError
	}
	if !report.Complete() {
		return exitIncomplete
	}
	return exitOK
}

// recommendationBudget gives each recommendation the controller's sync
// budget (autoscaler.syncBudget) from when it starts, ended early by ctx
// (an interrupt), so that `plan --autoscale` finishes whatever the file
// asks: a SeedAutoscaler that cannot be computed in time is an error
// naming it, as the controller would report it.
func recommendationBudget(ctx context.Context, budget time.Duration) func() func() error {
	return func() func() error {
		deadline := time.Now().Add(budget)
		return func() error {
			if err := ctx.Err(); err != nil {
				return err
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("the budget of %s (autoscaler.syncBudget, as the controller's) is spent", budget)
			}
			return nil
		}
	}
}

// autoscaleInput reads the SeedAutoscalers and ManagedSeedSets of file
// (ManagedSeedSets may also come with the landscape) and loads the
// landscape as plan does; errors name the flag and its value.
func autoscaleInput(cfg *config.Config, objs []client.Object, file string) (autoscaleplan.Input, error) {
	in := autoscaleplan.Input{Options: placementOptions(cfg), Scheduler: cfg.SchedulerName}
	profiles, err := headroomProfiles(cfg)
	if err != nil {
		return in, fmt.Errorf("--config: %w", err)
	}
	in.Profiles = make(map[string]*api.Shoot, len(profiles))
	for _, p := range profiles {
		in.Profiles[p.Name] = p.Shoot
	}
	fromFile, err := landscape.ReadKinds(file, landscape.KindSeedAutoscaler, landscape.KindManagedSeedSet)
	if err != nil {
		return in, fmt.Errorf("--autoscale %q: %w", file, err)
	}
	for _, o := range fromFile {
		// Gardener keeps ManagedSeedSets in the garden namespace; a file
		// written for `kubectl apply -n garden` need not say so.
		if o.GetNamespace() == "" {
			o.SetNamespace(cfg.GardenNamespace)
		}
	}
	store := newStore(cfg, nil)
	store.Load(objs)
	in.Snapshot = store.Snapshot()
	// The file's ManagedSeedSets come last: Run takes the last of a name.
	for _, o := range append(objs, fromFile...) {
		switch o := o.(type) {
		case *api.Shoot:
			in.Shoots = append(in.Shoots, o)
		case *seedmanagement.ManagedSeedSet:
			in.Sets = append(in.Sets, o)
		}
	}
	for _, o := range fromFile {
		if sa, ok := o.(*autoscalingapi.SeedAutoscaler); ok {
			in.Autoscalers = append(in.Autoscalers, sa)
		}
	}
	if len(in.Autoscalers) == 0 {
		return in, fmt.Errorf("--autoscale %q: no SeedAutoscaler in it", file)
	}
	return in, nil
}

// missingSets are the ManagedSeedSets the SeedAutoscalers name that the
// input does not have, each once.
func missingSets(in autoscaleplan.Input) []client.ObjectKey {
	have := map[client.ObjectKey]bool{}
	for _, s := range in.Sets {
		have[client.ObjectKeyFromObject(s)] = true
	}
	var out []client.ObjectKey
	for _, sa := range in.Autoscalers {
		key := client.ObjectKey{Namespace: sa.Namespace, Name: sa.Spec.ScaleTargetRef.Name}
		if !have[key] {
			have[key] = true
			out = append(out, key)
		}
	}
	return out
}

// newAutoscaleWriter returns what writes the recommendations in format.
func newAutoscaleWriter(format string) (func(io.Writer, *autoscaleplan.Report), error) {
	switch format {
	case outputText:
		return writeAutoscaleText, nil
	case outputJSON:
		return writeAutoscaleJSON, nil
	default:
		return nil, fmt.Errorf("-o: unsupported value %q (want %s or %s)", format, outputText, outputJSON)
	}
}
