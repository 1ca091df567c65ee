package difftest

import (
	"fmt"
	"math"
	"strings"
)

// regionConfigs returns 0-3 region-config ConfigMaps. Stressed: several that
// name the profile (the first by name wins), ones outside the garden
// namespace or without the purpose label, annotations with spaces, tables
// that do not parse and odd distances.
func (g *gen) regionConfigs() []object {
	n := 0
	switch {
	case g.on(fRegionConfigs):
		n = 1 + g.r.IntN(3)
	case g.chance(0.35) || g.on(fOddTable):
		n = 1
	}
	var out []object
	for i := range n {
		out = append(out, g.regionConfig(i))
	}
	return out
}

func (g *gen) regionConfig(i int) object {
	meta := object{
		"name":      fmt.Sprintf("region-%s", g.pick("a", "b", "c", "d")+fmt.Sprint(i)),
		"namespace": gardenNamespace,
		"labels":    object{"scheduling.gardener.cloud/purpose": "region-config"},
		"annotations": object{"scheduling.gardener.cloud/cloudprofiles": annotationList(
			g.profileNames(), g.on(fRegionConfigs))},
	}
	if g.on(fRegionConfigs) && g.chance(0.3) {
		switch g.r.IntN(4) {
		case 0:
			meta["namespace"] = projectNamespace
		case 1:
			meta["labels"] = object{"scheduling.gardener.cloud/purpose": "other"}
		case 2:
			delete(meta, "labels")
		default:
			delete(meta, "annotations")
		}
	}
	data := object{}
	for _, from := range g.some(g.regions, 4, false) {
		data[from] = g.table()
	}
	if g.chance(0.7) {
		data[g.region] = g.table()
	}
	return object{"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data}
}

// profileNames are the names a config's annotation lists: usually the
// Shoot's profile, sometimes only another one.
func (g *gen) profileNames() []string {
	names := g.some([]string{profileName, otherProfile, nsProfileName}, 3, false)
	if len(names) == 0 || (!g.on(fRegionConfigs) && g.chance(0.8)) {
		names = append(names, profileName)
	}
	return names
}

// table is one region's distance table: YAML mapping regions to distances,
// or, stressed, something that is not such a mapping.
func (g *gen) table() string {
	if g.on(fRegionConfigs) && g.chance(0.25) {
		return g.pick("- a\n", "foo", "eu-west-1: near\n", "eu-west-1: 1.5\n", "{}",
			"eu-west-1: 1\neu-west-1: 2\n", "", "[1, 2]", "eu-west-1: 0x10\n", "eu-west-1: 1_000\n",
			"null", "~", "  ", "# only a comment\n")
	}
	// Stressed, a table may hold only huge distances: whether any is a
	// candidate then turns on where Gardener's search starts (2^31-1).
	huge := g.on(fOddTable) && g.chance(0.7)
	var b strings.Builder
	for _, to := range g.some(g.regions, 6, false) {
		fmt.Fprintf(&b, "%s: %d\n", to, g.distance(huge))
	}
	if huge && g.chance(0.85) {
		// Or the own region counts as 0. Farthest of all, it leaves the
		// nearest huge entry to another region, which name distance would
		// not choose.
		d := g.distance(true)
		if g.chance(0.5) {
			d = math.MaxInt64
		}
		fmt.Fprintf(&b, "%s: %d\n", g.region, d)
	}
	return b.String()
}

// distance is a table entry: small ones tie often; stressed, values at and
// beyond the 32-bit limit and negative ones.
func (g *gen) distance(huge bool) int64 {
	if huge {
		vals := []int64{2147483648, 2147483649, 4294967296, 9223372036854775807}
		if g.chance(0.15) {
			vals = []int64{2147483646, 2147483647} // at the limit: still candidates
		}
		return vals[g.r.IntN(len(vals))]
	}
	if g.on(fOddTable) && g.chance(0.5) {
		vals := []int64{-5, -1, 2147483646, 2147483647, 2147483648, 4294967296, 9223372036854775807, 1000, 1001}
		return vals[g.r.IntN(len(vals))]
	}
	return int64(g.r.IntN(5) * 10)
}
