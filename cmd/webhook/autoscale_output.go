package main

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/seedwarden/seedwarden/internal/autoscaleplan"
)

// writeAutoscaleJSON writes the report as one JSON document, every list
// [] when empty, as plan's report.
func writeAutoscaleJSON(w io.Writer, r *autoscaleplan.Report) {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	_ = enc.Encode(r)
}

// writeAutoscaleText writes, for each SeedAutoscaler, the line that says
// what it would do and why, then its metrics, the pending Shoots and what
// a new replica is modelled on; last, that behavior was not applied.
func writeAutoscaleText(w io.Writer, r *autoscaleplan.Report) {
	for i, e := range r.Autoscalers {
		if i > 0 {
			fmt.Fprintln(w)
		}
		writeAutoscaleEntry(w, e)
	}
	fmt.Fprintf(w, "\nbehavior: %s\n", r.Behavior)
}

func writeAutoscaleEntry(w io.Writer, e autoscaleplan.Entry) {
	fmt.Fprintln(w, e.Message)
	fmt.Fprintf(w, "  SeedAutoscaler %s: %d to %d replicas, floor %d (seeds holding Shoots or protected); reason %s\n",
		e.Autoscaler, e.MinReplicas, e.MaxReplicas, e.Floor, e.Reason)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  METRIC\tTARGET\tCURRENT\tREPLICAS\tMET")
	for _, m := range e.Metrics {
		fmt.Fprintf(tw, "  %s %s\t%s\t%s\t%d\t%s\n", m.Type, m.Name, m.Target, m.Current, m.Replicas, yesNo(m.Met))
	}
	_ = tw.Flush()
	for _, m := range e.Metrics {
		if m.WouldNotHelp != "" {
			fmt.Fprintf(w, "  %s %s: more seeds would not help (%s): %s\n", m.Type, m.Name, m.WouldNotHelpCode, m.WouldNotHelp)
		}
	}
	fmt.Fprintf(w, "  pending Shoots at %d replicas: %d placed, %d without a seed\n", e.Desired, e.PendingPlaced, e.PendingUnplaced)
	fmt.Fprintf(w, "  model of a new replica: %s\n", e.ModelSource)
	writeScaleIn(w, e)
}

// writeScaleIn writes the scale-in line: the replica the controller would
// drain and where its Shoots go, or why none; then each replica tried and
// not chosen, with why.
func writeScaleIn(w io.Writer, e autoscaleplan.Entry) {
	si := e.ScaleIn
	if p := si.Plan; p != nil {
		fmt.Fprintf(w, "  scale-in: drain %s (%d %s), then %d -> %d replicas\n", p.Replica, p.Shoots, shootsNoun(p.Shoots), e.Current, p.Replicas)
		for _, m := range p.Moves {
			fmt.Fprintf(w, "    %s: %s -> %s\n", m.Shoot, m.From, m.To)
		}
	} else {
		fmt.Fprintf(w, "  scale-in: none: %s\n", si.Why)
	}
	for _, c := range si.Candidates {
		if c.Blocked != "" {
			fmt.Fprintf(w, "    not %s (%d %s): %s\n", c.Replica, c.Shoots, shootsNoun(c.Shoots), c.Blocked)
		}
	}
}

func shootsNoun(n int) string {
	if n == 1 {
		return "Shoot"
	}
	return "Shoots"
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
