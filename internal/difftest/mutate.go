package difftest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
)

// Mutation search: a recorded scenario with one string changed to an edge
// value, so the rules are compared on the names Gardener's API accepts but
// nobody records: empty, `*`, whitespace, case variants, very long, and a
// string taken from another kind of field (a seed named like a region, an
// access restriction named like a label key).

// Mutant is a scenario derived from a base scenario by one change.
type Mutant struct {
	Scenario
	// Change says which string became what, for the failure message.
	Change string
	// Base is the recorded answer of the scenario mutated (nil when it has
	// none), to count the mutants that changed Gardener's decision.
	Base *Expect
}

// keyedMaps are the maps whose keys placement reads (label selectors match
// them, annotations switch rules on, region configs are keyed by region), so
// a key is mutated like a value there.
var keyedMaps = []string{"labels", "matchLabels", "annotations", "data"}

// skippedKeys hold timestamps: changing them tests the decoder, not
// placement. An object's own apiVersion and kind route the decoding and are
// skipped too (skippedTop); a cloudProfile reference's kind is not.
var (
	skippedKeys = []string{"deletionTimestamp", "lastUpdateTime", "lastTransitionTime", "creationTimestamp"}
	skippedTop  = []string{"apiVersion", "kind"}
)

// readPaths are the fields placement reads a string from (paths without
// list indexes; a keyed map stands for its keys and values); a mutant
// changes one of them most of the time, and any other string now and then,
// since a field placement ignores is where a rule it misses would be.
var readPaths = []string{
	"metadata.name", "metadata.namespace", "metadata.labels", "metadata.annotations", "data",
	"spec.namespace", "spec.region", "spec.provider.type", "spec.provider.region", "spec.provider.zones",
	"spec.provider.workers.zones", "spec.seedName", "status.seedName", "spec.cloudProfileName",
	"spec.cloudProfile.name", "spec.cloudProfile.kind", "spec.parent.name", "spec.parent.kind", "spec.purpose",
	"spec.networking.pods", "spec.networking.services", "spec.networking.nodes", "spec.networking.ipFamilies",
	"spec.networks.pods", "spec.networks.services", "spec.networks.nodes", "spec.networks.ipFamilies",
	"spec.networks.shootDefaults.pods", "spec.networks.shootDefaults.services",
	"status.networking.pods", "status.networking.services", "status.networking.nodes",
	"spec.taints.key", "spec.taints.value", "spec.tolerations.key", "spec.tolerations.value",
	"spec.accessRestrictions.name", "spec.dns.domain", "spec.dns.defaults.domain",
	"spec.settings.zoneSelection.mode", "status.conditions.type", "status.conditions.status",
	"status.lastOperation.type", "status.lastOperation.state", "status.allocatable.shoots",
	"spec.controlPlane.zones", "spec.controlPlane.highAvailability.failureTolerance.type",
	"seedSelector.matchLabels", "seedSelector.matchExpressions.key", "seedSelector.matchExpressions.operator",
	"seedSelector.matchExpressions.values", "seedSelector.providerTypes",
}

// isRead says whether the field at path (a spot's field) is one placement reads.
func isRead(field string) bool {
	return slices.ContainsFunc(readPaths, func(p string) bool {
		return field == p || strings.HasPrefix(field, p+".") || strings.HasSuffix(field, "."+p)
	})
}

// fieldOf is a path without its object and list indexes:
// doc[3].spec.taints[0].key is spec.taints.key.
func fieldOf(path string) string {
	var b strings.Builder
	depth := 0
	for _, c := range path {
		switch {
		case c == '[':
			depth++
		case c == ']':
			depth--
		case depth == 0:
			b.WriteRune(c)
		}
	}
	f := b.String()
	if i := strings.IndexByte(f, '.'); strings.HasPrefix(f, "doc") && i >= 0 {
		return f[i+1:]
	}
	return f
}

// readOdds is how often the changed string is one of readFields.
const readOdds = 0.85

// Mutate returns mutant i of the given seed: a base drawn from bases and
// one of its strings, or one part of a list or YAML string, replaced by an
// edge value (edge.go) or another string of the same scenario. It depends
// only on (bases, seed, i).
func Mutate(bases []Scenario, seed uint64, i int) (Mutant, error) {
	r := rand.New(rand.NewPCG(seed, uint64(i)^0x6d75746174))
	base := bases[r.IntN(len(bases))]
	docs := make([]any, 0, len(base.Objects)+1)
	for _, raw := range append(slices.Clip(base.Objects), base.Shoot) {
		v, err := decodeNumbers(raw)
		if err != nil {
			return Mutant{}, fmt.Errorf("scenario %s: %w", base.Name, err)
		}
		docs = append(docs, v)
	}
	d := pickDoc(r, docs)
	var all, read []spot
	pool := map[string]bool{}
	for j, v := range docs {
		var mine []spot
		collect(v, fmt.Sprintf("doc[%d]", j), true, &mine, pool)
		if j == d {
			all = mine
		}
	}
	for _, s := range all {
		if isRead(s.field) {
			read = append(read, s)
		}
	}
	if len(all) == 0 {
		return Mutant{}, fmt.Errorf("scenario %s: no string to mutate in doc[%d]", base.Name, d)
	}
	spots := all
	if len(read) > 0 && r.Float64() < readOdds {
		spots = read
	}
	s := spots[r.IntN(len(spots))]
	names := append(slices.Sorted(maps.Keys(pool)), crossKind...)
	to, what := mutateString(r, s.old, names)
	s.set(to)

	m := Mutant{Change: fmt.Sprintf("%s %s%s: %q -> %q", base.Name, s.path, what, short(s.old), short(to)), Base: base.Expect}
	m.Name = fmt.Sprintf("mutant-%d-%05d", seed, i)
	m.Strategy, m.NetworkOverlap = base.Strategy, base.NetworkOverlap
	for _, v := range docs[:len(docs)-1] {
		m.Objects = append(m.Objects, marshal(v))
	}
	m.Shoot = marshal(docs[len(docs)-1])
	return m, nil
}

// docOdds weigh which object a mutant changes, by kind: mostly the Shoot
// to place and the Seeds, whose fields the filters read; existing Shoots,
// which only count towards usage, are most of a scenario's objects and
// would otherwise take most mutants.
var docOdds = map[string]float64{"new": 0.35, "Seed": 0.35, "other": 0.22, "Shoot": 0.08}

// pickDoc draws the index of the object to change: the new Shoot is the
// last of docs.
func pickDoc(r *rand.Rand, docs []any) int {
	byKind := map[string][]int{"new": {len(docs) - 1}}
	for j, v := range docs[:len(docs)-1] {
		k, _ := v.(map[string]any)["kind"].(string)
		if k != "Seed" && k != "Shoot" {
			k = "other"
		}
		byKind[k] = append(byKind[k], j)
	}
	x := r.Float64()
	for _, k := range []string{"new", "Seed", "other", "Shoot"} {
		if x -= docOdds[k]; x < 0 && len(byKind[k]) > 0 {
			return byKind[k][r.IntN(len(byKind[k]))]
		}
	}
	return len(docs) - 1
}

// mutateString replaces old whole, or, for a list or a YAML document (a
// cloudprofiles annotation, a region config's distances), one of its parts,
// so the parser's handling of each part is compared too.
func mutateString(r *rand.Rand, old string, names []string) (string, string) {
	parts := splitParts(old)
	if len(parts) < 3 || r.IntN(2) == 0 {
		return edgeValue(r, old, names), ""
	}
	var words []int // indexes of the parts between separators
	for j, p := range parts {
		if !strings.ContainsAny(p, partSeparators) {
			words = append(words, j)
		}
	}
	j := words[r.IntN(len(words))]
	from := parts[j]
	parts[j] = edgeValue(r, from, names)
	return strings.Join(parts, ""), fmt.Sprintf(" (part %q)", short(from))
}

// partSeparators split lists and YAML maps into parts.
const partSeparators = ",:\n"

// splitParts cuts s into runs of separators and runs of anything else.
func splitParts(s string) []string {
	var out []string
	start := 0
	for j := 1; j <= len(s); j++ {
		if j == len(s) || strings.ContainsRune(partSeparators, rune(s[j])) != strings.ContainsRune(partSeparators, rune(s[j-1])) {
			out = append(out, s[start:j])
			start = j
		}
	}
	return out
}

// spot is one mutable string: a value, or a key of a keyed map. field is
// its path without indexes (fieldOf; a key's is its map's).
type spot struct {
	path, field, old string
	set              func(string)
}

func collect(v any, path string, top bool, spots *[]spot, pool map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		field := path[strings.LastIndex(path, ".")+1:]
		keyed := !top && slices.Contains(keyedMaps, field)
		for _, k := range slices.Sorted(maps.Keys(x)) {
			p := path + "." + k
			if keyed {
				pool[k] = true
				*spots = append(*spots, spot{path: p + " (key)", field: fieldOf(path), old: k, set: func(n string) {
					if _, taken := x[n]; !taken {
						x[n] = x[k]
						delete(x, k)
						return
					}
					delete(x, k) // the same key as another: that one stays
				}})
			}
			if slices.Contains(skippedKeys, k) || (top && slices.Contains(skippedTop, k)) {
				continue
			}
			if s, ok := x[k].(string); ok {
				pool[s] = true
				*spots = append(*spots, spot{path: p, field: fieldOf(p), old: s, set: func(n string) { x[k] = n }})
				continue
			}
			collect(x[k], p, false, spots, pool)
		}
	case []any:
		for j := range x {
			p := fmt.Sprintf("%s[%d]", path, j)
			if s, ok := x[j].(string); ok {
				pool[s] = true
				*spots = append(*spots, spot{path: p, field: fieldOf(p), old: s, set: func(n string) { x[j] = n }})
				continue
			}
			// The objects of a list are tops only at the scenario's level.
			collect(x[j], p, false, spots, pool)
		}
	}
}

func decodeNumbers(raw json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // integers past 2^53 survive the round trip
	var v any
	err := dec.Decode(&v)
	return v, err
}

func short(s string) string {
	if len(s) > 40 {
		return fmt.Sprintf("%s...(%d bytes)", s[:20], len(s))
	}
	return s
}
