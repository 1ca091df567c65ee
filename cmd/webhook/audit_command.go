package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/audit"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/config"
)

// exitViolations is audit's exit code when some Shoot breaks a rule: a
// finding, as plan's exitIncomplete, not an error.
const exitViolations = exitIncomplete

// auditOptions are audit's parsed flags: the command's logic
// (runAudit) takes them, whatever parses them.
type auditOptions struct {
	landscapeFile, configPath, kubeconfig string
	// live: --kubeconfig was given (its value may be "", the default
	// cluster).
	live   bool
	seeds  []string // only Shoots on these seeds; none: all
	format string
}

// auditFlagSet defines audit's flags on fs; parsed, the function it
// returns reads them.
func auditFlagSet(fs *pflag.FlagSet) func() auditOptions {
	landscapeFile := fs.String("landscape", "", "landscape `FILE` (YAML/JSON List or multi-document, e.g. kubectl get seeds,shoots,cloudprofiles,projects -A -o yaml)")
	configPath := fs.String("config", "", "configuration `FILE`: gardenNamespace, as the webhook uses it")
	kubeconfig := fs.String("kubeconfig", "", "instead of --landscape: the landscape of the cluster of kubeconfig `PATH`, listed once (current context; \"\" is $KUBECONFIG, in-cluster or ~/.kube/config)")
	var seeds stringsFlag
	fs.Var(&seeds, "seed", "only the Shoots on seed `NAME` (repeatable)")
	format := fs.StringP("output", "o", outputText, "output `FORMAT`: text (a line per result) or json (the results and counts)")
	fs.SetNormalizeFunc(shortNames)
	return func() auditOptions {
		return auditOptions{landscapeFile: *landscapeFile, configPath: *configPath, kubeconfig: *kubeconfig,
			live: fs.Changed("kubeconfig"), seeds: seeds, format: *format}
	}
}

func (c *cli) newAuditCommand() *cobra.Command {
	var opts func() auditOptions
	cmd := c.command(commandText{
		use:     []string{"audit (--landscape FILE | --kubeconfig PATH) [--config FILE] [--seed NAME]... [-o text|json]"},
		summary: "Check every Shoot on a seed against the placement rules of today",
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
	}, func(ctx context.Context, _ *cobra.Command, args []string) int {
		if len(args) > 0 {
			fmt.Fprintf(c.stderr, "%s audit: unexpected argument %q\n", c.prog, args[0])
			return exitUsage
		}
		code, err := runAudit(ctx, opts(), c.stdout)
		if err != nil {
			fmt.Fprintf(c.stderr, "%s audit: %v\n", c.prog, err)
		}
		return code
	})
	opts = auditFlagSet(cmd.Flags())
	completeValues(cmd, "output", outputText, outputJSON)
	return cmd
}

// runAudit checks every bound Shoot of the landscape (a file, or the
// cluster's listed once) as the leader's audit does and writes the
// results: exitOK for none, exitViolations for some, exitUsage for bad
// input (err says which), exitError when the output cannot be written.
func runAudit(ctx context.Context, o auditOptions, stdout io.Writer) (int, error) {
	switch {
	case o.live && o.landscapeFile != "":
		return exitUsage, fmt.Errorf(errLandscapeWithKubeconfig)
	case !o.live && o.landscapeFile == "":
		return exitUsage, fmt.Errorf("no landscape: give --landscape FILE or --kubeconfig PATH")
	case o.format != outputText && o.format != outputJSON:
		return exitUsage, fmt.Errorf("-o: unsupported value %q (want %s or %s)", o.format, outputText, outputJSON)
	}
	cfg, err := loadConfig(o.configPath)
	if err != nil {
		return exitUsage, err
	}
	objs, err := planSource(ctx, cfg, o.landscapeFile, o.kubeconfig, o.live)
	if err != nil {
		return exitUsage, err
	}
	f, err := auditLandscape(cfg, objs, o.seeds)
	if err != nil {
		return exitUsage, err
	}
	out := bufio.NewWriter(stdout)
	if o.format == outputJSON {
		writeAuditJSON(out, f)
	} else {
		writeAuditText(out, f)
	}
	if err := out.Flush(); err != nil {
		return exitError, err
	}
	if len(f.Results) > 0 {
		return exitViolations, nil
	}
	return exitOK, nil
}

// auditLandscape loads the objects as the webhook's cache does, reduces
// the Shoots as its watch does, and scans them: the leader's audit on a
// landscape read once. A --seed the landscape lacks is an error.
func auditLandscape(cfg *config.Config, objs []client.Object, seeds []string) (audit.Findings, error) {
	store := newStore(cfg, nil)
	store.Load(objs)
	for _, s := range seeds {
		if _, ok := store.Seed(s); !ok {
			return audit.Findings{}, fmt.Errorf("--seed %q: no such seed in the landscape", s)
		}
	}
	var reduced []*cache.ReducedShoot
	for _, o := range objs {
		sh, ok := o.(*api.Shoot)
		if !ok || (len(seeds) > 0 && (sh.Spec.SeedName == nil || !slices.Contains(seeds, *sh.Spec.SeedName))) {
			continue
		}
		r, err := cache.TransformShoot(sh)
		if err != nil {
			return audit.Findings{}, err
		}
		reduced = append(reduced, r.(*cache.ReducedShoot))
	}
	return audit.Scan(store.Snapshot(), slices.Values(reduced)), nil
}

// auditJSON is audit -o json: every result, and the counts.
type auditJSON struct {
	Checked   int            `json:"checked"`
	Violating int            `json:"violating"`
	ByRule    map[string]int `json:"byRule"`
	Results   []auditResult  `json:"results"`
}

type auditResult struct {
	Namespace string `json:"namespace"`
	Shoot     string `json:"shoot"`
	Seed      string `json:"seed"`
	Rule      string `json:"rule"`
	Message   string `json:"message"`
}

func writeAuditJSON(w io.Writer, f audit.Findings) {
	out := auditJSON{Checked: f.Checked, ByRule: map[string]int{}, Results: []auditResult{}}
	shoots := map[[2]string]bool{}
	for _, r := range f.Results {
		out.Results = append(out.Results, auditResult{r.Namespace, r.Shoot, r.Seed, string(r.Rule), r.Message})
		out.ByRule[string(r.Rule)]++
		shoots[[2]string{r.Namespace, r.Shoot}] = true
	}
	out.Violating = len(shoots)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	_ = enc.Encode(out)
}

func writeAuditText(w io.Writer, f audit.Findings) {
	shoots := map[[2]string]bool{}
	for _, r := range f.Results {
		fmt.Fprintf(w, "%s/%s on %s: %s: %s\n", r.Namespace, r.Shoot, r.Seed, r.Rule, r.Message)
		shoots[[2]string{r.Namespace, r.Shoot}] = true
	}
	fmt.Fprintf(w, "%d of %d Shoots with a seed break a placement rule (%d results)\n", len(shoots), f.Checked, len(f.Results))
}
