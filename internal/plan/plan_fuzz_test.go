package plan

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/landscapegen"
)

// FuzzPlan runs random operations on random landscapes: no panic, no error
// but an OpError for a seed that is not there, capacity holds on every seed,
// and every Shoot an operation tried is either placed or reported.
func FuzzPlan(f *testing.F) {
	f.Add(uint64(1), []byte{0, 1, 2, 3})
	f.Add(uint64(7), []byte{3, 3, 0, 0, 1, 2})
	f.Fuzz(func(t *testing.T, seed uint64, script []byte) {
		if len(script) > 16 {
			script = script[:16]
		}
		rng := rand.New(rand.NewPCG(seed, 3))
		snap, shoots := randomLandscape(rng, 1+rng.IntN(30))
		opts := randomOptions(rng)
		var ops []Operation
		newShoots := 0
		for i, b := range script {
			name := fmt.Sprintf("seed-%05d", int(b>>2)%(len(snap.Seeds)+2)) // sometimes unknown
			switch b % 4 {
			case 0:
				ops = append(ops, Drain{Seed: name})
			case 1:
				ops = append(ops, RemoveSeed{Seed: name})
			case 2:
				s := landscapegen.Seed(1000 + i)
				ops = append(ops, AddSeeds{Seeds: []*api.Seed{s}})
			case 3:
				n := 1 + int(b>>2)%20
				newShoots += n
				ops = append(ops, AddShoots{Like: landscapegen.NewShoot(fmt.Sprintf("new%d", i)), Count: n})
			}
		}
		r, err := Run(snap, shoots, opts, ops)
		if err != nil {
			var opErr *OpError
			if !errors.As(err, &opErr) {
				t.Fatalf("not an OpError: %v", err)
			}
			return
		}
		for _, row := range r.Seeds {
			if row.Allocatable != nil && row.After > max(row.Before, *row.Allocatable) {
				t.Fatalf("seed %s overfilled: %d -> %d of %d", row.Name, row.Before, row.After, *row.Allocatable)
			}
		}
		added := 0
		for _, p := range r.Placed {
			if p.From == "" {
				added++
			}
		}
		for _, u := range r.Unplaced {
			if u.From == "" {
				added++
			}
		}
		if added != newShoots {
			t.Fatalf("%d new Shoots asked for, %d placed or reported", newShoots, added)
		}
	})
}
