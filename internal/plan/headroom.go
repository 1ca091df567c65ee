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

// SoftHeadroom is Headroom with every seed held to its soft limit
// (placement.Policies.SoftLimit: policies.softLimitPercent, or the seed's
// own annotation): how many more Shoots like the template fit before any
// seed passes its soft limit. Seeds without a soft limit count up to
// their allocatable, so without soft limits it is Headroom.
//
// The seeds are held to their soft limits by charging each with the
// places between its soft limit and its allocatable: the count does not
// depend on which seed takes which copy (headroomFast), so a preference
// that changes the order changes nothing here. TestSoftHeadroomIsRoomUnderSoftLimits
// holds it to a landscape whose allocatable is the soft limit.
func SoftHeadroom(snap *placement.Snapshot, like *api.Shoot, opts placement.Options, limit int) (int, error) {
	if err := checkHeadroomArgs(like, limit); err != nil {
		return 0, err
	}
	v := NewView(snap, nil)
	for _, s := range v.all {
		soft, ok := opts.Policies.SoftLimit(s)
		if !ok {
			continue
		}
		alloc, _ := s.Allocatable()
		v.usage[s] += alloc - soft
	}
	return headroomFast(v, newShootLike(like, like.Name), opts, limit), nil
}

// HasSoftLimits says whether any seed of the landscape has a soft limit:
// without one SoftHeadroom is Headroom, and need not be counted again.
func HasSoftLimits(snap *placement.Snapshot, p *placement.Policies) bool {
	for _, s := range snap.Seeds {
		if _, ok := p.SoftLimit(s); ok {
			return true
		}
	}
	return false
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
