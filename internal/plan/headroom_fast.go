package plan

import (
	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// headroomFast counts what headroomPlain counts with one decision per seed
// instead of one per Shoot. It relies on usage changing nothing in a
// decision but which seeds have room and which of them wins: whether a seed
// passes the filters and the strategy's cut does not depend on how full it
// or any other seed is, except that a full seed drops out at the capacity
// check. So each seed chosen takes copies until it is full, whatever order
// they come in, and the copies stop only when a decision finds no seed with
// room. Filling the chosen seed at once therefore ends at the same count;
// TestHeadroomFastMatchesPlain holds it to that on generated landscapes.
func headroomFast(v *View, shoot *api.Shoot, opts placement.Options, limit int) int {
	n := 0
	for n < limit {
		_, seed := v.decide(shoot, opts, nil)
		if seed == nil {
			break
		}
		alloc, ok := seed.Allocatable()
		take := limit - n
		if ok {
			take = min(take, int(alloc-v.usage[seed]))
		}
		v.charge(shoot.Namespace, seed, int64(take))
		n += take
	}
	return n
}
