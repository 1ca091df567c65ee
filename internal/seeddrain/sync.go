package seeddrain

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/seedwarden/seedwarden/internal/api"
	ops "github.com/seedwarden/seedwarden/internal/operationsapi"
	"github.com/seedwarden/seedwarden/internal/placement"
	"github.com/seedwarden/seedwarden/internal/plan"
)

// applyPlan plans the movable Shoots with `plan --drain`'s code on snap
// and writes each one's destination (Planned) or why none takes it
// (Unplaceable). The migrating Shoots go into the plan too, so that it
// sees them leaving as `plan` does.
func applyPlan(snap *placement.Snapshot, opts placement.Options, seed string, entries map[string]*ops.ShootStatus,
	movable []*api.Shoot, migrating []*api.Shoot) error {
	if len(movable) == 0 {
		return nil
	}
	shoots := append(slices.Clone(movable), migrating...)
	report, err := plan.Run(snap, shoots, opts, []plan.Operation{plan.Drain{Seed: seed}})
	if err != nil {
		return err
	}
	for _, p := range report.Placed {
		if e := entries[p.Shoot]; e != nil {
			e.State, e.Destination, e.Reason = ops.ShootPlanned, p.To, ""
		}
	}
	for _, u := range report.Unplaced {
		if e := entries[u.Shoot]; e != nil {
			e.State, e.Destination, e.Reason = ops.ShootUnplaceable, "", unplacedReason(u)
		}
	}
	return nil
}

// unplacedReason is the plan's reason in one line: the step, the message
// and the first few seeds' reasons.
func unplacedReason(u plan.Unplaced) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", u.Step, u.Message)
	names := make([]string, 0, len(u.Reasons))
	for n := range u.Reasons {
		names = append(names, n)
	}
	slices.Sort(names)
	for i, n := range names {
		if i == 3 {
			fmt.Fprintf(&b, "; and %d more", len(names)-3)
			break
		}
		fmt.Fprintf(&b, "; %s: %s", n, u.Reasons[n])
	}
	return truncate(b.String())
}

// maxReason bounds one entry's reason, so that a drain of hundreds of
// Shoots keeps its status well inside an object's size.
const maxReason = 512

func truncate(s string) string {
	if len(s) <= maxReason {
		return s
	}
	cut := maxReason - 3
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "..."
}

// budget is what a sync may start.
type budget struct {
	slots   int // migrations that may start now (maxInFlight minus in flight)
	hourly  int // migrations that may start within the hour (-1: no limit)
	stopped string
}

// budgetOf counts the slots and the hourly room left, and says why no
// migration may start at all (dry run, deadline).
func budgetOf(spec ops.SeedDrainSpec, entries map[string]*ops.ShootStatus, now time.Time) budget {
	inFlight, lastHour := 0, 0
	for _, e := range entries {
		if e.State == ops.ShootMigrating {
			inFlight++
		}
		if e.StartedAt != nil && now.Sub(e.StartedAt.Time) < time.Hour {
			lastHour++
		}
	}
	b := budget{slots: int(spec.Budget.MaxInFlightOrDefault()) - inFlight, hourly: -1}
	if m := spec.Budget.MaxPerHour; m != nil {
		b.hourly = int(*m) - lastHour
	}
	switch {
	case spec.DryRun:
		b.stopped = "dry run: not started"
	case spec.Deadline != nil && !now.Before(spec.Deadline.Time):
		b.stopped = fmt.Sprintf("deadline %s passed: not started", spec.Deadline.UTC().Format(time.RFC3339))
	}
	return b
}

// wait says why a Planned Shoot does not start now, or "" when it may.
func (b budget) wait(spec ops.SeedDrainSpec) string {
	switch {
	case b.stopped != "":
		return b.stopped
	case b.slots <= 0:
		return fmt.Sprintf("waiting for a budget slot (maxInFlight %d in flight)", spec.Budget.MaxInFlightOrDefault())
	case b.hourly == 0:
		return fmt.Sprintf("waiting: maxPerHour %d started within the last hour", *spec.Budget.MaxPerHour)
	}
	return ""
}

// take counts one started migration.
func (b *budget) take() {
	b.slots--
	if b.hourly > 0 {
		b.hourly--
	}
}

// sortedKeys are the entries' keys in namespace/name order.
func sortedKeys(entries map[string]*ops.ShootStatus) []string {
	keys := make([]string, 0, len(entries))
	for k := range entries {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
