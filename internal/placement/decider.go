package placement

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/seedwarden/seedwarden/internal/api"
)

// decider carries one decision's state through the steps.
type decider struct {
	snap    *Snapshot
	shoot   *api.Shoot
	opts    Options
	profile *CloudProfile
	path    path
	explain bool
	reasons map[string]string
	codes   map[string]ReasonCode

	// indexFrom is the number of seeds from which the fast path goes
	// through the seed index: minIndexed, except in tests, which also take
	// the fast path never and always through it (export_test.go).
	indexFrom int
	// noNarrow: tests also take the fast path without narrowing
	// (export_test.go), as decide does after a narrowed attempt failed.
	noNarrow bool

	// bufs are the scratch sets steps fill in turn. Three suffice: a step
	// reads the previous set and writes the next, and zone selection, the only
	// step that may fall back to an earlier set, needs one more.
	bufs *[3][]*Seed
	next int
	// bits is the fast path's bit set of seeds to visit (fast_buckets.go),
	// pooled like bufs and left cleared.
	bits []uint64
	// narrow is set while the fast path tries the seeds step 11 can keep
	// at best, narrowing (fast_narrow.go), first.
	narrow    bool
	narrowing narrowRule

	// distTable is the region config's distance table the RegionDistance
	// scorer reads (strategy.go); nil without one.
	distTable map[string]int
	// scores are a scored decision's buffers (score.go), kept with the
	// decider like bufs; nil until a profile is first used.
	scores *scoreBufs
	// usages are the usages read so far (decision_usage.go).
	usages usageMemo

	// pol is what the decision computed of Options.Policies, effect what
	// they did so far (policies_step.go).
	pol    policyState
	effect PolicyEffect
	// ranks are the preferences' ranks of the seeds left, pooled like bufs.
	ranks []Rank
}

// deciderPool keeps deciders with their buffers between decisions. The
// decider is pooled, not just its buffers, because the filters are called
// through func values (filters.go), which would move it to the heap.
var deciderPool = sync.Pool{New: func() any { return &decider{bufs: new([3][]*Seed)} }}

// newDecider starts a decision; the caller releases it when done.
func newDecider(snap *Snapshot, shoot *api.Shoot, opts Options, p path) *decider {
	d := deciderPool.Get().(*decider)
	*d = decider{snap: snap, shoot: shoot, opts: opts, path: p, explain: p == explainPath, indexFrom: minIndexed, bufs: d.bufs, bits: d.bits, scores: d.scores, usages: d.usages, ranks: d.ranks[:0]}
	for i := range d.bufs {
		if cap(d.bufs[i]) < len(snap.Seeds) {
			d.bufs[i] = make([]*Seed, 0, len(snap.Seeds))
		}
	}
	if d.explain {
		d.reasons = make(map[string]string, len(snap.Seeds))
		d.codes = make(map[string]ReasonCode, len(snap.Seeds))
	}
	if opts.NetworkMode == "" {
		d.opts.NetworkMode = Disjoint
	}
	return d
}

// scratch returns the next empty buffer, with room for every seed.
func (d *decider) scratch() []*Seed {
	if d.bufs == nil {
		return make([]*Seed, 0, len(d.snap.Seeds))
	}
	b := d.bufs[d.next][:0]
	d.next = (d.next + 1) % len(d.bufs)
	return b
}

func (d *decider) release() {
	if d.bufs == nil {
		return
	}
	for i := range d.bufs {
		// Drop seed pointers so old snapshots can be collected. Steps only
		// append (never nil) from the start of a buffer, and every release
		// clears what was used, so the used part ends at the first nil.
		buf := d.bufs[i][:cap(d.bufs[i])]
		if used := slices.Index(buf, nil); used >= 0 {
			buf = buf[:used]
		}
		clear(buf)
		if cap(d.bufs[i]) < len(d.snap.Seeds) {
			d.bufs[i] = make([]*Seed, 0, len(d.snap.Seeds))
		}
	}
	d.usages.reset()
	// Drop the snapshot, the Shoot and the reasons handed out.
	*d = decider{bufs: d.bufs, bits: d.bits, scores: d.scores, usages: d.usages}
	deciderPool.Put(d)
}

func (d *decider) drop(s *Seed, code ReasonCode, reason string) {
	if d.explain {
		d.reasons[s.Name] = reason
		d.codes[s.Name] = code
	}
}

// filter keeps the seeds for which keep is true. why explains a dropped seed
// and is only called when explaining, so the fast path formats nothing. It
// fills a fresh slice so earlier step results stay intact for steps that need
// them (zone selection falls back to them).
func (d *decider) filter(seeds []*Seed, keep func(*Seed) bool, why func(*Seed) (ReasonCode, string)) []*Seed {
	out := d.scratch()
	for _, s := range seeds {
		if keep(s) {
			out = append(out, s)
			continue
		}
		if d.explain {
			code, reason := why(s)
			d.drop(s, code, reason)
		}
	}
	return out
}

// filterBy filters with a check that returns a code and reason ("" to keep)
// for filter; only for checks whose reason costs nothing in the fast path.
func (d *decider) filterBy(seeds []*Seed, check func(*Seed) (ReasonCode, string)) []*Seed {
	return d.filter(seeds, func(s *Seed) bool { code, _ := check(s); return code == "" }, check)
}

// fail is the unschedulable Decision of step; code is the decision's own
// (Decision.Code), "" when the seeds' codes say why.
func (d *decider) fail(step Step, code ReasonCode, format string, args ...any) Decision {
	return Decision{
		Step:    step,
		Message: fmt.Sprintf(format, args...),
		Reasons: d.reasons,
		Codes:   d.codes,
		Code:    code,
		Total:   len(d.snap.Seeds),
	}
}

// failErr is fail with err's message and code (a codedError's, else code).
func (d *decider) failErr(step Step, code ReasonCode, err error) Decision {
	if ce, ok := errors.AsType[*codedError](err); ok {
		code = ce.code
	}
	return d.fail(step, code, "%v", err)
}
