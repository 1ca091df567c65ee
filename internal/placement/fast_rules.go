package placement

import (
	"hash/maphash"
	"slices"

	"github.com/seedwarden/seedwarden/internal/api"
)

// The rules of steps 4-6 as the fast path (fast.go) applies them: the
// Shoot's values hashed once per decision, compared with the hashes NewSeed
// digested into every Seed.

// providerRule is providerMatches with the accepted types hashed: without
// providerTypes the seed's provider must be the Shoot's, otherwise one of
// them, "*" for any.
type providerRule struct {
	any    bool
	names  []string // the accepted types, hashes[i] = strHash(names[i]) for i < maxHashed
	hashes [maxHashed]uint64
	// one is the Shoot's type, the only accepted one when the profile lists
	// none (names is nil then).
	one string
}

// maxHashed bounds the hashes a rule keeps inline (no allocation per
// decision); a rule with more names compares the rest as strings.
const maxHashed = 8

func newProviderRule(shootType string, enabled []string) providerRule {
	if len(enabled) == 0 {
		p := providerRule{one: shootType}
		p.hashes[0] = strHash(shootType)
		return p
	}
	if slices.Contains(enabled, "*") {
		return providerRule{any: true}
	}
	p := providerRule{names: enabled}
	for i, t := range enabled[:min(len(enabled), maxHashed)] {
		p.hashes[i] = strHash(t)
	}
	return p
}

func (p *providerRule) matches(s *Seed) bool {
	switch {
	case p.any:
		return true
	case p.names == nil:
		return s.providerHash == p.hashes[0] && s.providerType == p.one
	}
	for i, t := range p.names {
		if (i >= maxHashed || s.providerHash == p.hashes[i]) && s.providerType == t {
			return true
		}
	}
	return false
}

// matchesHash is matches on a seed's provider hash alone: true for every
// seed matches accepts (and, on a collision, for another).
func (p *providerRule) matchesHash(h uint64) bool {
	switch {
	case p.any || len(p.names) > maxHashed:
		return true
	case p.names == nil:
		return h == p.hashes[0]
	}
	return slices.Contains(p.hashes[:len(p.names)], h)
}

// zoneRule is steps 5 and 6 as the fast path applies them; hasThreeZones
// and selectZones (filter_zones.go) are the plain version.
type zoneRule struct {
	kind    zoneKind
	cpZones []string // zoneControlPlane: the control-plane zones
	// zoneWorkers: the worker pools' zones, the first maxHashed inline with
	// their hashes (comparing zones is most of the pass's work, and integers
	// compare cheaper than strings), the rest in more.
	n      int
	names  [maxHashed]string
	hashes [maxHashed]uint64
	more   []string
}

type zoneKind uint8

const (
	zoneNone         zoneKind = iota // no zones asked for: every seed stays
	zoneThree                        // failure tolerance "zone": at least 3 zones
	zoneControlPlane                 // every control-plane zone offered
	zoneWorkers                      // worker-pool zones steer (Enforce, Prefer)
)

func newZoneRule(shoot *api.Shoot) zoneRule {
	if failureToleranceZone(shoot) {
		return zoneRule{kind: zoneThree}
	}
	if cp := shoot.Spec.ControlPlane; cp != nil && len(cp.Zones) > 0 {
		return zoneRule{kind: zoneControlPlane, cpZones: cp.Zones}
	}
	var z zoneRule
	for _, w := range shoot.Spec.Provider.Workers {
		for _, name := range w.Zones {
			if z.n < maxHashed {
				z.names[z.n], z.hashes[z.n] = name, strHash(name)
				z.n++
			} else {
				z.more = append(z.more, name)
			}
		}
	}
	if z.n > 0 {
		z.kind = zoneWorkers
	}
	return z
}

// sharedBy reports whether the seed offers one of the worker pools' zones.
// Equal hashes are confirmed on the strings.
func (z *zoneRule) sharedBy(s *Seed) bool {
	inline := min(len(s.zones), inlineZones)
	for i, h := range s.zoneHashes[:inline] {
		for j, w := range z.hashes[:z.n] {
			if h == w && s.zones[i] == z.names[j] {
				return true
			}
		}
	}
	for _, zone := range s.zones[inline:] {
		if slices.Contains(z.names[:z.n], zone) {
			return true
		}
	}
	for _, zone := range s.zones {
		if slices.Contains(z.more, zone) {
			return true
		}
	}
	return false
}

func containsAll(have, want []string) bool {
	for _, z := range want {
		if !slices.Contains(have, z) {
			return false
		}
	}
	return true
}

// zoneSelection is a seed's settings.zoneSelection.mode as an enum.
type zoneSelection uint8

const (
	zoneOther zoneSelection = iota // unset or another value: zone selection leaves the seed
	zoneEnforce
	zonePrefer
)

// inlineZones is how many zone hashes a Seed keeps inline; seeds with more
// zones compare the rest as strings.
const inlineZones = 4

// hashKey is fixed for the process, so hashes digested into a Seed compare
// with hashes of a Shoot's values taken at decision time. Equal hashes are
// always confirmed on the strings (or, in the index, only widen what is
// visited), so a collision costs time, never a wrong decision.
var hashKey = maphash.MakeSeed()

func strHash(v string) uint64 { return maphash.String(hashKey, v) }
