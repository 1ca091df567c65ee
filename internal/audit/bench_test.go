package audit

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/landscapegen"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// The audit at 100,000 Shoots on 1,000 seeds (BENCHMARKS.md §28), every
// 10th seed tainted; landscapegen's odd seeds are of a provider the
// CloudProfile does not enable, so 60,000 Shoots break a rule. Baseline:
// CheckStaying on each full Shoot, as an audit that listed the Shoots
// from the API server would check them (the List itself not counted).
const (
	benchSeeds  = 1000
	benchShoots = 100000
)

type benchLandscape struct {
	scanner Scanner // the Reconciler's: keys decoded by the audit before
	snap    *placement.Snapshot
	full    []*api.Shoot
	reduced []*cache.ReducedShoot
	want    int // results: rules broken, per Shoot
}

// newBenchLandscape: distinct gives every Shoot tolerations of its own (a
// key per Shoot: nothing shared, the memo's worst case).
func newBenchLandscape(b *testing.B, distinct bool) *benchLandscape {
	b.Helper()
	objs := landscapegen.Landscape(benchSeeds, benchShoots)
	l := &benchLandscape{}
	for _, o := range objs {
		switch x := o.(type) {
		case *api.Seed:
			var i int
			if _, err := fmt.Sscanf(x.Name, "seed-%d", &i); err == nil && i%10 == 0 {
				x.Spec.Taints = append(x.Spec.Taints, api.SeedTaint{Key: "audit-bench"})
			}
		case *api.Shoot:
			if distinct {
				x.Spec.Tolerations = append(x.Spec.Tolerations, api.Toleration{Key: "own-" + x.Name})
			}
			l.full = append(l.full, x)
			r, err := cache.TransformShoot(x)
			if err != nil {
				b.Fatal(err)
			}
			l.reduced = append(l.reduced, r.(*cache.ReducedShoot))
		}
	}
	store := cache.NewStore(cache.Options{})
	store.Load(objs)
	l.snap = store.Snapshot()
	l.want = l.checkEach()
	return l
}

// checkEach is the baseline: CheckStaying on every full Shoot; it returns
// the rules broken, counted per Shoot as Scan's results are.
func (l *benchLandscape) checkEach() int {
	n := 0
	for _, s := range l.full {
		vs := placement.CheckStaying(l.snap, *s.Spec.SeedName, s)
		for i, v := range vs {
			if !slices.ContainsFunc(vs[:i], func(p placement.Violation) bool { return p.Code == v.Code }) {
				n++
			}
		}
	}
	return n
}

func (l *benchLandscape) audit(b *testing.B) {
	b.Helper()
	f := l.scanner.Scan(l.snap, slices.Values(l.reduced))
	for ns, rs := range ByNamespace(f.Results) {
		NewReport(ns, rs, 100, nil, time.Unix(0, 0))
	}
	_ = f.Violating()
	if len(f.Results) != l.want || f.Checked != benchShoots {
		b.Fatalf("%d results of %d Shoots checked, want %d of %d", len(f.Results), f.Checked, l.want, benchShoots)
	}
}

func BenchmarkAuditCheckEachShoot(b *testing.B) {
	l := newBenchLandscape(b, false)
	b.ReportAllocs()
	for b.Loop() {
		if n := l.checkEach(); n != l.want {
			b.Fatalf("%d results, want %d", n, l.want)
		}
	}
}

func BenchmarkAudit(b *testing.B) {
	for _, tc := range []struct {
		name     string
		distinct bool
	}{{"shared", false}, {"distinct", true}} {
		b.Run(tc.name, func(b *testing.B) {
			l := newBenchLandscape(b, tc.distinct)
			l.audit(b) // steady state: the leader audits again and again
			b.ReportAllocs()
			for b.Loop() {
				l.audit(b)
			}
		})
	}
}
