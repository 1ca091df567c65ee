package difftest

// shoot is the new Shoot to place: no spec.seedName, in the Shoot's namespace.
func (g *gen) shoot() object {
	spec := object{
		"region":     g.word(g.region),
		"kubernetes": object{},
		"provider":   object{"type": g.word(g.provider), "workers": g.workers()},
	}
	g.profileRef(spec)
	if n := g.shootNetworking(); n != nil {
		spec["networking"] = n
	}
	if g.on(fPurpose) || g.chance(0.5) {
		spec["purpose"] = g.word(g.pickList(purposes))
	}
	if g.on(fSelectors) || g.chance(0.1) {
		sel := g.labelSelector()
		if g.on(fProviderTypes) {
			sel["providerTypes"] = g.words(g.some(providers, 2, false))
		}
		spec["seedSelector"] = sel
	}
	if t := g.tolerations(); len(t) > 0 {
		spec["tolerations"] = t
	}
	if cp := g.controlPlane(); cp != nil {
		spec["controlPlane"] = cp
	}
	if g.on(fAccess) || g.chance(0.1) {
		var acc []object
		for _, n := range g.words(g.some(accessNames, 2, g.on(fDuplicates) || g.on(fAccess))) {
			acc = append(acc, object{"name": n})
		}
		spec["accessRestrictions"] = acc
	}
	if d, ok := g.domain(); ok {
		spec["dns"] = object{"domain": d}
	}
	status := object{}
	if g.on(fStatusNetworking) {
		status["networking"] = g.statusNetworking()
	}
	return object{
		"apiVersion": apiCore, "kind": "Shoot",
		"metadata": object{"name": "shoot", "namespace": g.namespace},
		"spec":     spec, "status": status,
	}
}

// workers are 1-3 pools with zones of the Shoot's region (or none);
// workerless Shoots have none at all.
func (g *gen) workers() []object {
	if g.on(fWorkerless) {
		return nil
	}
	var out []object
	for i := range 1 + g.r.IntN(3) {
		w := object{"name": "pool-" + string(rune('a'+i)), "machine": object{"type": "m5.large"}, "minimum": 1, "maximum": 3}
		if g.chance(0.5) || g.on(fHAZones) {
			pool := []string{g.region + "-a", g.region + "-b", g.region + "-c", "other-zone"}
			if g.on(fEmpty) {
				pool = append(pool, "")
			}
			w["zones"] = g.words(g.some(pool, 2, g.on(fDuplicates)))
		}
		out = append(out, w)
	}
	return out
}

// profileRef names the profile by spec.cloudProfileName, spec.cloudProfile
// (with or without kind) or both; stressed, a NamespacedCloudProfile or a
// profile that does not exist.
func (g *gen) profileRef(spec object) {
	name := profileName
	if g.on(fProfileRef) && g.chance(0.3) {
		name = g.pick(otherProfile, "missing-profile")
	}
	switch {
	case g.on(fProfileRef) && g.chance(0.5):
		spec["cloudProfile"] = object{"kind": "NamespacedCloudProfile", "name": g.pick(nsProfileName, "missing-ncp")}
	case g.chance(0.4):
		spec["cloudProfileName"] = name
	case g.chance(0.5):
		spec["cloudProfile"] = object{"kind": "CloudProfile", "name": name}
	default:
		spec["cloudProfile"] = object{"name": name}
	}
	if g.on(fProfileRef) && g.chance(0.3) {
		spec["cloudProfileName"] = g.pick(profileName, otherProfile)
	}
}

func (g *gen) tolerations() []object {
	if !g.on(fTaints) && !g.chance(0.3) {
		return nil
	}
	return g.keyValues(3)
}

// controlPlane: high availability (node or zone) and control-plane zones,
// alone or together.
func (g *gen) controlPlane() object {
	if !g.on(fHAZones) && !g.chance(0.25) {
		return nil
	}
	cp := object{}
	if g.chance(0.6) {
		cp["highAvailability"] = object{"failureTolerance": object{"type": g.word(g.pick("zone", "node", "zone"))}}
	}
	if g.chance(0.35) {
		cp["zones"] = g.words(g.some([]string{g.region + "-a", g.region + "-b", g.region + "-c"}, 3, g.on(fDuplicates)))
	}
	return cp
}

// domain: none, a custom one, or one under a seed default domain, right
// (<shoot>.<project>.<default>) or not.
func (g *gen) domain() (string, bool) {
	// With two Projects claiming the namespace, which one owns it shows
	// only in the domain check.
	if !g.on(fDomain) && !(g.contested && g.chance(0.8)) && !g.chance(0.1) {
		return "", false
	}
	d := g.word(g.pickList(domains))
	project := g.projectName
	if project == "" || g.chance(0.2) {
		project = g.pick("proj", "aaa", "zzz")
	}
	if g.on(fEmpty) {
		return g.pick("shoot."+project+".", "."+d, d), true
	}
	switch g.r.IntN(6) {
	case 0:
		return "custom.example.net", true
	case 1:
		return "", true
	case 2:
		return "other." + project + "." + d, true
	}
	return "shoot." + project + "." + d, true
}
