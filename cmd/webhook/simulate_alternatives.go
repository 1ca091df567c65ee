package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// shownAlternatives bounds the seeds simulate -o text names as next
// choices; the rest are counted.
const shownAlternatives = 5

// maxAlternatives bounds the decisions made again: each excludes the seeds
// before it, a list placement searches linearly, so a landscape where
// thousands of seeds could take the Shoot stops here, its other seeds'
// reasons untold.
const maxAlternatives = 50

// alternatives says why a scheduled Shoot went nowhere else: the seeds
// that would take it next, in order, each were the seeds before it full
// (the decision made again with those excluded, as a full seed drops out
// of a real one), and, once no seed is left, each other seed's reason.
// Deciding again rather than reading a ranking keeps it the one decision
// function's answer, strategy, tie-break and scoring included.
type alternatives struct {
	next  []string
	never map[string]string
	// eligible is the seeds that could take the Shoot (chosen and next);
	// total every seed of the landscape. capped: more seeds could take it
	// than the limit of decisions, so eligible is a lower bound and never
	// empty.
	eligible, total int
	capped          bool
}

// explainAlternatives decides shoot again on snap until no seed is left, or
// limit seeds came next; chosen is the first decision's seed.
func explainAlternatives(snap *placement.Snapshot, shoot *api.Shoot, opts placement.Options, chosen string, limit int) alternatives {
	excluded := append(slices.Clip(opts.Exclude), chosen)
	var a alternatives
	for {
		o := opts
		o.Exclude = excluded
		d := placement.Decide(snap, shoot, o)
		if d.Schedulable() {
			a.next = append(a.next, d.Seed)
			excluded = append(excluded, d.Seed)
			if len(a.next) < limit {
				continue
			}
			a.capped, a.total, a.eligible = true, len(snap.Seeds), 1+len(a.next)
			return a
		}
		a.total = d.Total
		a.eligible = 1 + len(a.next)
		a.never = map[string]string{}
		for seed, reason := range d.Reasons {
			if !slices.Contains(excluded, seed) {
				a.never[seed] = reason
			}
		}
		return a
	}
}

// placeExplained places shoot as simulate does (no reservation taken) and,
// when it finds a seed, explains the others.
func placeExplained(name string, store *cache.Store, shoot *api.Shoot, opts placement.Options) result {
	d := store.Place(shoot, opts, "")
	r := newResult(name, d)
	if d.Schedulable() {
		r.alternatives = explainAlternatives(store.Snapshot(), shoot, opts, d.Seed, maxAlternatives)
	}
	return r
}

// text is a's lines under a scheduled result.
func (a alternatives) text(chosen string) string {
	if a.total == 0 {
		return ""
	}
	var b strings.Builder
	more := ""
	if a.capped {
		more = " or more (the others' reasons not computed)"
	}
	fmt.Fprintf(&b, "  %d/%d seeds eligible%s", a.eligible, a.total, more)
	if len(a.next) > 0 {
		shown := a.next[:min(len(a.next), shownAlternatives)]
		fmt.Fprintf(&b, "; next, were %s full: %s", chosen, strings.Join(shown, ", then "))
		if more := len(a.next) - len(shown); more > 0 {
			fmt.Fprintf(&b, " (and %d more)", more)
		}
	}
	b.WriteString("\n")
	for _, seed := range slices.Sorted(maps.Keys(a.never)) {
		fmt.Fprintf(&b, "  %s: %s\n", seed, a.never[seed])
	}
	return b.String()
}
