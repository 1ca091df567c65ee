package difftest

// cidr draws a network: IPv4 mostly, IPv6 when v6 (or stressed), an odd
// one now and then.
func (g *gen) cidr(v6 bool) string {
	switch {
	case g.on(fOddCIDR) && g.chance(0.5):
		return g.pickList(oddCIDRs)
	case v6 || (g.on(fIPv6) && g.chance(0.5)):
		return g.pickList(ipv6CIDRs)
	}
	return g.word(g.pickList(ipv4CIDRs))
}

// seedNetworks: pods and services always (the API requires them), nodes
// and shootDefaults sometimes. A shootDefaults that lacks pods or services
// only comes with crashPartialDefaults (Gardener dereferences both).
func (g *gen) seedNetworks() object {
	n := object{"pods": g.cidr(false), "services": g.cidr(false)}
	if g.chance(0.5) {
		n["nodes"] = g.cidr(false)
	}
	if g.on(fShootDefaults) || g.chance(0.1) {
		d := object{"pods": g.cidr(g.chance(0.4)), "services": g.cidr(g.chance(0.4))}
		if g.crash == crashPartialDefaults && g.chance(0.6) {
			delete(d, g.pick("pods", "services"))
		}
		n["shootDefaults"] = d
	}
	return n
}

// shootNetworking is nil (no network check at all) or a networking section
// whose pods, services and nodes may each be missing, with any ipFamilies.
func (g *gen) shootNetworking() object {
	if g.chance(0.1) && !g.on(fIPv6) && !g.on(fShootDefaults) {
		return nil
	}
	families := []string{"IPv4"}
	if g.on(fIPv6) || g.on(fShootDefaults) {
		options := [][]string{{"IPv6"}, {"IPv4", "IPv6"}, {"IPv6", "IPv4"}, {}, {"IPv4"}, {"IPv6", "IPv6"}, {"ipv6"}}
		families = options[g.r.IntN(len(options))]
	}
	v6 := len(families) > 0 && families[0] == "IPv6"
	n := object{"type": "calico"}
	if len(families) > 0 || g.chance(0.5) {
		n["ipFamilies"] = families
	}
	missing := 0.05
	if g.on(fShootDefaults) {
		missing = 0.6
	}
	for _, k := range []string{"pods", "services", "nodes"} {
		if !g.chance(missing) {
			n[k] = g.cidr(v6)
		}
	}
	return n
}

// statusNetworking is what a Shoot that ran before carries: lists of
// networks, some of them empty.
func (g *gen) statusNetworking() object {
	st := object{}
	for _, k := range []string{"nodes", "pods", "services"} {
		if g.chance(0.25) {
			continue
		}
		var list []string
		for range 1 + g.r.IntN(2) {
			list = append(list, g.cidr(g.chance(0.3)))
		}
		st[k] = list
	}
	return st
}
