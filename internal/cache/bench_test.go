package cache

import (
	"fmt"
	"testing"

	"github.com/seedwarden/seedwarden/internal/api"
)

// benchStore holds n Shoots spread over 100 seeds.
func benchStore(b *testing.B, n int) *Store {
	b.Helper()
	s := NewStore(Options{})
	for i := range 100 {
		s.Apply(seed(fmt.Sprintf("seed-%03d", i), 10000))
	}
	for i := range n {
		s.Apply(shoot(fmt.Sprintf("p-%d", i%1000), fmt.Sprint("s-", i), fmt.Sprintf("seed-%03d", i%100), ""))
	}
	return s
}

// BenchmarkSnapshot shows that taking a snapshot does not depend on the number
// of Shoots.
func BenchmarkSnapshot(b *testing.B) {
	for _, n := range []int{0, 1000, 100000} {
		b.Run(fmt.Sprint("shoots=", n), func(b *testing.B) {
			s := benchStore(b, n)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				snap := s.Snapshot()
				_ = snap.Usage(snap.Seeds[0])
			}
		})
	}
}

// BenchmarkApplyShootUpdate is the hot path of the Shoot informer: a status
// update that moves the Shoot's charge between two seeds.
func BenchmarkApplyShootUpdate(b *testing.B) {
	s := benchStore(b, 100000)
	shoots := [2]*api.Shoot{
		shoot("p-1", "s-1", "seed-001", ""),
		shoot("p-1", "s-1", "seed-002", "seed-001"),
	}
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		s.Apply(shoots[i&1])
		i++
	}
}

// BenchmarkPlace measures Place with the reservation loop (stand-in decider).
func BenchmarkPlace(b *testing.B) {
	s := benchStore(b, 1000)
	s.decide = leastUsedDecide
	sh := shoot("p", "new", "", "")
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		s.Place(sh, placementOpts, "k")
	}
}

// BenchmarkApplyShootUpdateThenSpread is BenchmarkApplyShootUpdate with a
// ProjectSpread read after each update, its worst case: the namespace's view
// is rebuilt every time (the copy writers do not make, spread.go).
func BenchmarkApplyShootUpdateThenSpread(b *testing.B) {
	s := benchStore(b, 100000)
	shoots := [2]*api.Shoot{
		shoot("p-1", "s-1", "seed-001", ""),
		shoot("p-1", "s-1", "seed-002", "seed-001"),
	}
	snap := s.Snapshot()
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		s.Apply(shoots[i&1])
		if len(snap.ProjectShoots("p-1")) == 0 {
			b.Fatal("no Shoots of p-1")
		}
		i++
	}
}
