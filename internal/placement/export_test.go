package placement

import (
	"math"

	"github.com/seedwarden/seedwarden/internal/api"
)

// Variant is one way to decide, for the tests that hold them to each other
// (the external ones build snapshots through internal/cache, an import
// cycle for this package's own tests): a path and, for the fast path, from
// how many seeds it goes through the seed index.
type Variant struct {
	Name      string
	path      path
	indexFrom int
	noNarrow  bool
}

var (
	// Plain is the specification: the filters one at a time.
	Plain = Variant{"plain", plainPath, minIndexed, false}
	// Explain is Plain recording why each seed was dropped.
	Explain = Variant{"explain", explainPath, minIndexed, false}
	// Fast is the fast path as Decide takes it.
	Fast = Variant{"fast", fastPath, minIndexed, false}
	// Scan and Indexed are the fast path never and always going through the
	// index, so tests cover both ways on landscapes of any size.
	Scan    = Variant{"scan", fastPath, math.MaxInt, false}
	Indexed = Variant{"indexed", fastPath, 0, false}

	// FastVariants are the fast path's ways, each held to Plain.
	FastVariants = []Variant{Fast, Scan, Indexed}
	// Variants are every way.
	Variants = []Variant{Plain, Explain, Fast, Scan, Indexed}
)

const (
	MinIndexed  = minIndexed
	InlineZones = inlineZones
)

// Run decides as v does.
func (v Variant) Run(snap *Snapshot, shoot *api.Shoot, opts Options) Decision {
	d := newDecider(snap, shoot, opts, v.path)
	d.indexFrom, d.noNarrow = v.indexFrom, v.noNarrow
	defer d.release()
	return d.decide(d.chooser())
}

// NarrowedFirst reports whether Decide's first, narrowed attempt
// (fast_narrow.go) leaves seeds, so tests can show they exercise it.
func NarrowedFirst(snap *Snapshot, shoot *api.Shoot, opts Options) bool {
	d := newDecider(snap, shoot, opts, fastPath)
	defer d.release()
	if _, ok := d.prepare(); !ok {
		return false
	}
	if d.narrowing = d.narrowRule(); !d.narrowing.on {
		return false
	}
	d.narrow = true
	seeds, _ := d.filterSteps()
	return len(seeds) > 0
}
