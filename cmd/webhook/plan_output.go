package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"text/tabwriter"

	"github.com/seedwarden/seedwarden/internal/plan"
)

// newReportWriter returns what writes a plan's report in format: tables
// for people (text) or one JSON document (json).
func newReportWriter(format string) (func(io.Writer, *plan.Report), error) {
	switch format {
	case outputText:
		return writeReportText, nil
	case outputJSON:
		return func(w io.Writer, r *plan.Report) {
			enc := json.NewEncoder(w)
			enc.SetEscapeHTML(false)
			enc.SetIndent("", "  ")
			_ = enc.Encode(withEmptyLists(*r))
		}, nil
	default:
		return nil, fmt.Errorf("-o: unsupported value %q (want %s or %s)", format, outputText, outputJSON)
	}
}

// withEmptyLists is r with every nil list empty, so that the JSON has []
// where there is nothing, never null: readers range over every list
// without checking.
func withEmptyLists(r plan.Report) plan.Report {
	r.Seeds = orEmpty(r.Seeds)
	r.Groups = orEmpty(r.Groups)
	r.Placed = orEmpty(r.Placed)
	r.Unplaced = orEmpty(r.Unplaced)
	r.Stranded = orEmpty(r.Stranded)
	return r
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func writeReportText(w io.Writer, r *plan.Report) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	// The soft limit's column only where a seed has one (placement
	// policies), so a landscape without is reported as before.
	soft := slices.ContainsFunc(r.Seeds, func(s plan.SeedRow) bool { return s.SoftLimit != nil })
	if soft {
		fmt.Fprintln(tw, "SEED\tPROVIDER\tREGION\tSHOOTS\tALLOCATABLE\tSOFT LIMIT\tUTILIZATION\tSTATE")
	} else {
		fmt.Fprintln(tw, "SEED\tPROVIDER\tREGION\tSHOOTS\tALLOCATABLE\tUTILIZATION\tSTATE")
	}
	for _, s := range r.Seeds {
		limits := orDash(s.Allocatable)
		if soft {
			limits += "\t" + orDash(s.SoftLimit)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.Name, s.Provider, s.Region, beforeAfter(s),
			limits, percent(s.Utilization), s.State)
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "PROVIDER\tREGION\tSEEDS\tFREE SLOTS\tSEEDS WITHOUT ALLOCATABLE")
	for _, g := range r.Groups {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d -> %d\t%d\n", g.Provider, g.Region, g.Seeds, g.FreeBefore, g.FreeAfter, g.Unlimited)
	}
	_ = tw.Flush()

	fmt.Fprintf(w, "\nPLACED (%d)\n", len(r.Placed))
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, p := range r.Placed {
		from := p.From
		if from == "" {
			from = "(new)"
		}
		fmt.Fprintf(tw, "  %s\t%s -> %s\n", p.Shoot, from, p.To)
	}
	_ = tw.Flush()

	if len(r.Unplaced) > 0 {
		fmt.Fprintf(w, "\nNO SEED (%d)\n", len(r.Unplaced))
		for _, u := range r.Unplaced {
			writeUnplaced(w, u)
		}
	}
	if len(r.Stranded) > 0 {
		fmt.Fprintf(w, "\nSTRANDED ON A REMOVED SEED (%d)\n", len(r.Stranded))
		for _, s := range r.Stranded {
			if s.MigratingTo != "" {
				fmt.Fprintf(w, "  %s on %s (control plane still migrating to %s: the seed can go once that completes)\n", s.Shoot, s.Seed, s.MigratingTo)
				continue
			}
			fmt.Fprintf(w, "  %s on %s\n", s.Shoot, s.Seed)
		}
	}
}

func writeUnplaced(w io.Writer, u plan.Unplaced) {
	fmt.Fprintf(w, "  %s", u.Shoot)
	if u.From != "" {
		fmt.Fprintf(w, " (from %s)", u.From)
	}
	if u.Step != "" {
		fmt.Fprintf(w, ": step %s", u.Step)
	}
	fmt.Fprintf(w, ": %s\n", u.Message)
	for _, seed := range slices.Sorted(maps.Keys(u.Reasons)) {
		fmt.Fprintf(w, "    %s: %s\n", seed, u.Reasons[seed])
	}
}

func beforeAfter(s plan.SeedRow) string {
	switch s.State {
	case plan.StateAdded:
		return "new -> " + strconv.FormatInt(s.After, 10)
	case plan.StateRemoved:
		if s.Stranded > 0 {
			return fmt.Sprintf("%d -> gone (%d stranded)", s.Before, s.Stranded)
		}
		return strconv.FormatInt(s.Before, 10) + " -> gone"
	}
	if s.MigratingAway > 0 {
		// Charged to the seed until their migration completes: without the
		// note a drained seed's count looks like Shoots the drain forgot.
		return fmt.Sprintf("%d -> %d (%d migrating away)", s.Before, s.After, s.MigratingAway)
	}
	return fmt.Sprintf("%d -> %d", s.Before, s.After)
}

func orDash(v *int64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatInt(*v, 10)
}

func percent(v *float64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatFloat(*v*100, 'f', 0, 64) + "%"
}
