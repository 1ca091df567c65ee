package plan

import (
	"fmt"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// Headroom counts how many more Shoots like the template could be placed on
// the view's landscape right now, one after another as AddShoots places
// them, stopping at limit (seeds without allocatable take any number). It
// leaves the view as it found it. The count is Headroom's fast path
// (headroom_fast.go); headroomPlain is its specification.
func Headroom(snap *placement.Snapshot, like *api.Shoot, opts placement.Options, limit int) (int, error) {
	if err := checkHeadroomArgs(like, limit); err != nil {
		return 0, err
	}
	return headroomFast(NewView(snap, nil), newShootLike(like, like.Name), opts, limit), nil
}

func checkHeadroomArgs(like *api.Shoot, limit int) error {
	if like == nil {
		return fmt.Errorf("headroom: no Shoot to copy")
	}
	if limit <= 0 {
		return fmt.Errorf("headroom: limit %d: must be at least 1", limit)
	}
	return nil
}

// headroomPlain places copies of shoot one by one until none fits or limit
// are placed: exactly what AddShoots does.
func headroomPlain(v *View, shoot *api.Shoot, opts placement.Options, limit int) int {
	n := 0
	for n < limit {
		_, seed := v.decide(shoot, opts, nil)
		if seed == nil {
			break
		}
		v.charge(shoot.Namespace, seed, 1)
		n++
	}
	return n
}
