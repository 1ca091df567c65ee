package plan

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/landscapegen"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// planBenchSeeds and planBenchShoots size the planning benchmarks: the
// generated landscape (internal/landscapegen) with backup on every seed,
// plus planBenchDrained Shoots on seed-00001, the seed the drain empties.
const (
	planBenchSeeds   = 1000
	planBenchShoots  = 100_000
	planBenchDrained = 500
	planBenchNew     = 10_000
	// planBenchAllocatable leaves each seed 450 free places after the
	// generator's 100 Shoots.
	planBenchAllocatable = 550
)

// planBenchLandscape is loaded once: building it costs far more than a plan.
func planBenchLandscape(b *testing.B) (*placement.Snapshot, []*api.Shoot) {
	b.Helper()
	objs := landscapegen.Landscape(planBenchSeeds, planBenchShoots)
	var shoots []*api.Shoot
	for _, o := range objs {
		switch o := o.(type) {
		case *api.Seed:
			o.Spec.Backup = &api.SeedBackup{Provider: o.Spec.Provider.Type}
			o.Status.Conditions = append(o.Status.Conditions, api.Condition{Type: api.ConditionBackupBucketsReady, Status: api.ConditionTrue})
			// Room for the 10,000 new Shoots on the 25 aws seeds of the
			// template's region, and for the drained seed's 600.
			o.Status.Allocatable[api.ResourceShoots] = *resource.NewQuantity(planBenchAllocatable, resource.DecimalSI)
		case *api.Shoot:
			shoots = append(shoots, o)
		}
	}
	for i := range planBenchDrained {
		s := landscapegen.NewShoot(fmt.Sprintf("drain-%03d", i))
		s.Spec.SeedName, s.Status.SeedName = ptr.To("seed-00001"), ptr.To("seed-00001")
		objs = append(objs, s)
		shoots = append(shoots, s)
	}
	store := cache.NewStore(cache.Options{})
	store.Load(objs)
	return store.Snapshot(), shoots
}

// planBenchOptions are Gardener's default strategy, as in BENCHMARKS.md §1.
var planBenchOptions = placement.Options{Strategy: placement.SameRegion}

// BenchmarkDecideBaseline is one decision of the template Shoot on the
// unchanged snapshot: what each step of a plan costs at least.
func BenchmarkDecideBaseline(b *testing.B) {
	snap, _ := planBenchLandscape(b)
	shoot := landscapegen.NewShoot("baseline")
	b.ReportAllocs()
	for b.Loop() {
		if d := placement.Decide(snap, shoot, planBenchOptions); !d.Schedulable() {
			b.Fatal(d.Summary())
		}
	}
}

// BenchmarkPlanAddShoots places 10,000 new Shoots in sequence on 1,000 seeds.
func BenchmarkPlanAddShoots(b *testing.B) {
	snap, shoots := planBenchLandscape(b)
	ops := []Operation{AddShoots{Like: landscapegen.NewShoot("new"), Count: planBenchNew}}
	b.ReportAllocs()
	for b.Loop() {
		r, err := Run(snap, shoots, planBenchOptions, ops)
		if err != nil || len(r.Placed) != planBenchNew {
			b.Fatalf("placed %d: %v", len(r.Placed), err)
		}
	}
}

// BenchmarkPlanDrain moves the 500 Shoots of one seed (and the 100 the
// generator put there) to the other 999.
func BenchmarkPlanDrain(b *testing.B) {
	snap, shoots := planBenchLandscape(b)
	ops := []Operation{Drain{Seed: "seed-00001"}}
	b.ReportAllocs()
	for b.Loop() {
		r, err := Run(snap, shoots, planBenchOptions, ops)
		if err != nil || len(r.Placed) < planBenchDrained {
			b.Fatalf("moved %d: %v", len(r.Placed), err)
		}
	}
}
