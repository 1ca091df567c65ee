package difftest

import (
	"fmt"
	"strings"
)

// cloudProfiles returns the profile the Shoot names (rarely none of that
// name), maybe a second one, and a NamespacedCloudProfile in the Shoot's
// namespace; each with or without a seedSelector.
func (g *gen) cloudProfiles() []object {
	out := []object{{
		"apiVersion": apiCore, "kind": "CloudProfile",
		"metadata": object{"name": profileName},
		"spec":     g.profileSpec(),
	}}
	if g.on(fProfileRef) || g.on(fRegionConfigs) {
		out = append(out, object{
			"apiVersion": apiCore, "kind": "CloudProfile",
			"metadata": object{"name": otherProfile},
			"spec":     g.profileSpec(),
		})
	}
	if g.on(fProfileRef) {
		out = append(out, object{
			"apiVersion": apiCore, "kind": "NamespacedCloudProfile",
			"metadata": object{"name": nsProfileName, "namespace": projectNamespace},
			"spec":     object{"parent": object{"kind": "CloudProfile", "name": profileName}},
			"status":   object{"cloudProfileSpec": g.profileSpec()},
		})
	}
	return out
}

func (g *gen) profileSpec() object {
	spec := object{"type": g.provider, "kubernetes": object{}, "regions": []object{{"name": g.region}}}
	if !g.on(fSelectors) && !g.on(fProviderTypes) && !g.chance(0.15) {
		return spec
	}
	sel := g.labelSelector()
	if g.on(fProviderTypes) || g.chance(0.3) {
		types := g.words(g.some(append([]string{"*"}, providers...), 2, g.on(fDuplicates)))
		if types == nil {
			types = []string{}
		}
		sel["providerTypes"] = types
	}
	spec["seedSelector"] = sel
	return spec
}

// labelSelector matches on the generated labels; a stressed draw may use
// every operator and, rarely, one Kubernetes refuses.
func (g *gen) labelSelector() object {
	sel := object{}
	if g.chance(0.5) {
		sel["matchLabels"] = object{g.word(g.pickList(labelKeys)): g.word(g.pickList(labelValues))}
	}
	if g.chance(0.4) {
		op := g.pick("In", "NotIn", "Exists", "DoesNotExist")
		e := object{"key": g.word(g.pickList(labelKeys)), "operator": g.word(op)}
		if op == "In" || op == "NotIn" {
			e["values"] = g.words(g.some(labelValues, 3, false))
		}
		if g.on(fSelectors) && g.chance(0.15) {
			e["operator"] = g.pick("Gt", "Bogus") // refused by the selector conversion
		}
		sel["matchExpressions"] = []object{e}
	}
	if g.on(fSelectors) && g.chance(0.05) {
		sel["matchLabels"] = object{"bad key!": "x"}
	}
	return sel
}

// projects: usually one Project owning the Shoot's namespace; stressed,
// none, a deleting one, or another one claiming the same namespace.
func (g *gen) projects() []object {
	g.namespace = projectNamespace
	if g.stressed(fProject) && g.chance(0.3) {
		g.namespace = otherNamespace
	}
	project := func(name, ns string) object {
		p := object{"apiVersion": apiCore, "kind": "Project", "metadata": object{"name": name}, "spec": object{"namespace": ns}}
		if g.on(fDeleting) && g.chance(0.5) {
			p["metadata"].(object)["deletionTimestamp"] = timestamp
			p["metadata"].(object)["finalizers"] = []string{"gardener"}
		}
		return p
	}
	out := []object{project("proj", projectNamespace)}
	g.projectName = map[string]string{projectNamespace: "proj"}[g.namespace]
	if g.on(fProject) {
		switch g.r.IntN(4) {
		case 0:
			if !g.stressed(fProject) {
				break
			}
			out = nil
			g.projectName = ""
		case 1, 2:
			// Claims the same namespace: only one owner can be right. "zzz"
			// comes last in the list but not by name.
			name := g.pick("aaa", "zzz", "zzz")
			out = append(out, project(name, g.namespace))
			g.contested = true
			if name < g.projectName || g.projectName == "" {
				g.projectName = name
			}
		}
	}
	return out
}

// existingShoots give the seeds their usage: on spec.seedName, and on
// status.seedName too while migrating; some name seeds that do not exist.
func (g *gen) existingShoots() []object {
	n := g.r.IntN(13)
	var out []object
	for i := range n {
		ns := projectNamespace
		if g.chance(0.2) {
			ns = g.pick(otherNamespace, "garden-x")
		}
		meta := object{"name": fmt.Sprintf("existing-%02d", i), "namespace": ns}
		if g.on(fDeleting) && g.chance(0.3) {
			meta["deletionTimestamp"] = timestamp
			meta["finalizers"] = []string{"gardener"}
		}
		spec := object{"cloudProfileName": profileName, "region": g.region, "provider": object{"type": g.provider}, "kubernetes": object{}}
		if g.chance(0.9) {
			spec["seedName"] = g.usageSeed()
		}
		if g.on(fEmpty) {
			spec["seedName"] = ""
		}
		status := object{}
		if g.on(fCapacity) && g.chance(0.4) {
			status["seedName"] = g.usageSeed()
		}
		out = append(out, object{"apiVersion": apiCore, "kind": "Shoot", "metadata": meta, "spec": spec, "status": status})
	}
	return out
}

// usageSeed favours the first seeds, so usages differ, and some seeds tie.
func (g *gen) usageSeed() string {
	if g.chance(0.05) {
		return "seed-gone"
	}
	n := len(g.seedNames)
	return g.seedNames[min(g.r.IntN(n), g.r.IntN(n))]
}

// setCapacities sets status.allocatable.shoots near each seed's usage, so
// that the one place left, or none, decides; stressed, in odd notations.
func (g *gen) setCapacities(existing []object) {
	usage := map[string]int{}
	for _, s := range existing {
		spec := ""
		if v, ok := s["spec"].(object)["seedName"].(string); ok {
			spec = v
			usage[v]++
		}
		if v, ok := s["status"].(object)["seedName"].(string); ok && v != spec {
			usage[v]++
		}
	}
	for i, s := range g.seeds {
		if !g.on(fCapacity) && !g.chance(0.4) {
			continue
		}
		u := usage[g.seedNames[i]]
		status := s["status"].(object)
		status["capacity"] = object{"shoots": fmt.Sprint(u + 5)}
		status["allocatable"] = object{"shoots": g.quantity(u)}
		if g.on(fCapacity) && g.chance(0.1) {
			status["allocatable"] = object{"cpu": "10"} // no shoots: no limit
		}
	}
}

// quantity is a shoots quantity at or around usage u.
func (g *gen) quantity(u int) string {
	d := g.r.IntN(4) - 1
	if !g.on(fCapacity) {
		return fmt.Sprint(max(u+d, 0))
	}
	switch g.r.IntN(7) {
	case 0:
		return fmt.Sprintf("%dm", (u+d)*1000+g.pickInt(-500, -1, 1, 500))
	case 1:
		return fmt.Sprintf("%d.5", u+d)
	case 2:
		return fmt.Sprintf("%de0", u+d)
	case 3:
		return g.pick("0", "-1", "1k", "1Ki", "0.1", "100m", "1e30", "9223372036854775807")
	}
	return fmt.Sprint(u + d)
}

func (g *gen) pickInt(vals ...int) int { return vals[g.r.IntN(len(vals))] }

// annotationList writes a scheduling.gardener.cloud/cloudprofiles value with
// the spaces and empty entries people leave in it.
func annotationList(names []string, spaced bool) string {
	if spaced {
		return " " + strings.Join(names, " , ") + ","
	}
	return strings.Join(names, ",")
}
