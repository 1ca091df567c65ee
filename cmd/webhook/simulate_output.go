package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/seedwarden/seedwarden/internal/placement"
)

// Output formats of simulate (-o).
const (
	outputJSON = "json"
	outputText = "text"
)

// newEncoder returns what writes one result to w in format: a JSON line
// (machines; a scored decision's whole breakdown), or lines for people
// (the breakdown as the admission warning gives it, each excluded seed's
// reason on a line of its own).
func newEncoder(format string, w io.Writer) (func(result), error) {
	switch format {
	case outputJSON:
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		return func(r result) { _ = enc.Encode(r) }, nil
	case outputText:
		return func(r result) { _, _ = io.WriteString(w, r.text()) }, nil
	default:
		return nil, fmt.Errorf("-o: unsupported value %q (want %s or %s)", format, outputJSON, outputText)
	}
}

// text is r for people, ending in a newline.
func (r result) text() string {
	var b strings.Builder
	switch {
	case r.Error != "":
		fmt.Fprintf(&b, "%s: error: %s\n", r.Name, r.Error)
	case r.Unschedulable:
		fmt.Fprintf(&b, "%s: unschedulable at step %s: %s\n", r.Name, r.Step, r.headline)
		for _, seed := range slices.Sorted(maps.Keys(r.Reasons)) {
			fmt.Fprintf(&b, "  %s: %s\n", seed, r.Reasons[seed])
		}
	default:
		fmt.Fprintf(&b, "%s: seed %s\n", r.Name, r.Seed)
		d := placement.Decision{Seed: r.Seed, Scores: r.Scores, Scored: r.Scored}
		if s := d.ScoreSummary(); s != "" {
			fmt.Fprintf(&b, "  scores: %s\n", s)
		}
		if r.Policies != "" {
			fmt.Fprintf(&b, "  policies: %s\n", r.Policies)
		}
		b.WriteString(r.alternatives.text(r.Seed))
	}
	return b.String()
}
