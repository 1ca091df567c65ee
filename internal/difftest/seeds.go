package difftest

import (
	"fmt"
	"slices"
	"strings"
)

// pickShootPlace chooses the Shoot's provider and region and the regions
// the seeds are drawn from (the Shoot's own most often).
func (g *gen) pickShootPlace() {
	g.provider = g.pickList(providers)
	g.region = g.pickList(regionsOf[g.provider])
	// Two draws of the family: a very long name, else maybe a non-ASCII one.
	longName := g.on(fLongRegion)
	unicodeName := !longName && g.on(fLongRegion)
	switch {
	case longName:
		// Around 500 letters: name distances of about 1,000 to the others.
		g.region = longRegion(490+g.r.IntN(20), g.pick("", "-west-1", "-north"))
	case unicodeName:
		// Name distance counts runes, not bytes.
		g.region = g.pickList(unicodeRegions)
	}
	g.regions = []string{g.region}
	for _, p := range providers {
		for _, r := range regionsOf[p] {
			if r != g.region {
				g.regions = append(g.regions, r)
			}
		}
	}
	if g.on(fLongRegion) {
		g.regions = append(g.regions, longRegion(495+g.r.IntN(10), g.pick("", "-west-1")))
		g.regions = append(g.regions, g.pickList(unicodeRegions))
	}
	if g.on(fEmpty) {
		g.regions = append(g.regions, "")
		if g.chance(0.3) {
			g.region = ""
			g.regions[0] = ""
		}
	}
}

// seed returns Seed number i.
func (g *gen) seed(i int) object {
	provider := g.provider
	if g.chance(0.2) || g.on(fProviderTypes) {
		provider = g.pickList(providers)
	}
	region := g.region
	if !g.chance(0.45) {
		region = g.pickList(g.regions)
	}
	provider, region = g.word(provider), g.word(region)
	meta := object{"name": g.seedName(i)}
	if labels := g.labels(); len(labels) > 0 {
		meta["labels"] = labels
	}
	if g.on(fEmergency) {
		meta["annotations"] = object{"shoot.gardener.cloud/emergency-stop-reconciliations": g.word(g.pick("true", "false", "True", ""))}
	}
	if g.on(fDeleting) {
		meta["deletionTimestamp"] = timestamp
		meta["finalizers"] = []string{"gardener"}
	}
	spec := object{
		"provider": object{"type": provider, "region": region, "zones": g.zones(region)},
		"networks": g.seedNetworks(),
		"dns":      g.seedDNS(),
	}
	if s := g.settings(); s != nil {
		spec["settings"] = s
	}
	if t := g.taints(); len(t) > 0 {
		spec["taints"] = t
	}
	if a := g.seedAccess(); len(a) > 0 {
		spec["accessRestrictions"] = a
	}
	backup := g.chance(0.5)
	if backup {
		spec["backup"] = object{"provider": provider, "credentialsRef": object{"apiVersion": "v1", "kind": "Secret", "namespace": gardenNamespace, "name": "backup"}}
	}
	return object{"apiVersion": apiCore, "kind": "Seed", "metadata": meta, "spec": spec, "status": g.seedStatus(backup)}
}

func (g *gen) labels() object {
	out := object{}
	for _, k := range g.words(g.some(labelKeys, 3, false)) {
		out[k] = g.word(g.pickList(labelValues))
		if g.on(fEmpty) {
			out[k] = ""
		}
	}
	return out
}

// zones are 0-4 zones of the region, sometimes repeated (a repeated zone
// counts again towards the three a zonal control plane needs) or of
// another region.
func (g *gen) zones(region string) []string {
	pool := []string{region + "-a", region + "-b", region + "-c", region + "-d"}
	if g.on(fHAZones) {
		pool = append(pool, g.region+"-a", g.region+"-b")
	}
	if g.on(fEmpty) {
		pool = append(pool, "")
	}
	z := g.words(g.some(pool, 4, g.on(fDuplicates)))
	if z == nil {
		return []string{}
	}
	return z
}

func (g *gen) settings() object {
	if g.crash == crashNoScheduling && g.chance(0.3) {
		return nil
	}
	s := object{}
	switch {
	case g.crash == crashNoScheduling && g.chance(0.3):
	case g.on(fInvisible):
		s["scheduling"] = object{"visible": false}
	default:
		s["scheduling"] = object{"visible": true}
	}
	if g.on(fHAZones) || g.chance(0.2) {
		s["zoneSelection"] = object{"mode": g.word(g.pick("Enforce", "Prefer", "Prefer", "Enforce", "", "enforce"))}
	}
	return s
}

func (g *gen) taints() []object {
	if !g.on(fTaints) && !g.chance(0.2) {
		return nil
	}
	return g.keyValues(2)
}

// keyValues is up to limit taints or tolerations over taintKeys (repeated
// when duplicates are stressed), some with a value: both sides of
// Gardener's TaintsAreTolerated.
func (g *gen) keyValues(limit int) []object {
	var out []object
	for _, k := range g.words(g.some(taintKeys, limit, g.on(fDuplicates))) {
		kv := object{"key": k}
		if g.chance(0.4) {
			kv["value"] = g.value()
		}
		out = append(out, kv)
	}
	return out
}

func (g *gen) seedAccess() []object {
	if !g.on(fAccess) && !g.chance(0.15) {
		return nil
	}
	var out []object
	for _, n := range g.words(g.some(accessNames, 2, g.on(fDuplicates))) {
		out = append(out, object{"name": n})
	}
	return out
}

func (g *gen) seedDNS() object {
	if !g.on(fDomain) && !g.contested && !g.chance(0.15) {
		return object{}
	}
	var defaults []object
	pool := domains
	if g.on(fEmpty) {
		pool = append(slices.Clone(domains), "")
	}
	for _, d := range g.words(g.some(pool, 2, false)) {
		defaults = append(defaults, object{"type": "aws-route53", "domain": d,
			"credentialsRef": object{"apiVersion": "v1", "kind": "Secret", "namespace": gardenNamespace, "name": "dns"}})
	}
	if defaults == nil {
		return object{}
	}
	return object{"defaults": defaults}
}

// seedStatus is ready unless readiness is stressed: then lastOperation may
// be missing and conditions False, Unknown, missing or given twice.
func (g *gen) seedStatus(backup bool) object {
	status := object{}
	if !g.on(fReadiness) || g.chance(0.6) {
		status["lastOperation"] = object{"description": "", "lastUpdateTime": timestamp, "progress": 100, "state": "Succeeded", "type": "Reconcile"}
	}
	var conds []object
	for _, t := range []string{"GardenletReady", "BackupBucketsReady"} {
		if t == "BackupBucketsReady" && !backup && !g.chance(0.3) {
			continue
		}
		st := "True"
		if g.on(fReadiness) {
			st = g.word(g.pick("True", "False", "Unknown", "", "true"))
		}
		if st != "" {
			conds = append(conds, condition(t, st))
		}
		if g.on(fReadiness) && g.on(fDuplicates) {
			conds = append(conds, condition(t, g.pick("True", "False")))
		}
	}
	if len(conds) > 0 {
		status["conditions"] = conds
	}
	return status
}

// value is a taint's or toleration's value; "" is a value too (it matches
// only "" or no value).
func (g *gen) value() string {
	if g.on(fEmpty) {
		return ""
	}
	return g.word(g.pickList(taintValues))
}

// seedName is Seed number i's name; with edge values on, sometimes another
// kind's name (a seed named like a region or a taint key), never one a
// seed before it has (a name is a key of the landscape).
func (g *gen) seedName(i int) string {
	name := fmt.Sprintf("seed-%02d", i)
	if g.on(fEdgeStrings) && g.chance(edgeOdds) {
		// Not one of the seed-NN names a later seed takes.
		if other := g.pickList(crossKind); !strings.HasPrefix(other, "seed-") && !slices.Contains(g.seedNames, other) {
			return other
		}
	}
	return name
}

func condition(t, status string) object {
	return object{"type": t, "status": status, "lastTransitionTime": timestamp, "lastUpdateTime": timestamp,
		"reason": strings.ReplaceAll(t, "Ready", ""), "message": "generated"}
}
