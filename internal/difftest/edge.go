package difftest

import (
	"math/rand/v2"
	"strings"
)

// Edge values: what a string field becomes when the generator (feature
// fEdgeStrings) or the mutation search (Mutate) stresses it. Gardener's API
// accepts most of them in the fields placement reads, and nobody records
// them: empty, `*`, whitespace, case variants, lengths at and past the
// Kubernetes limits, a prefix, and a string of another kind of field.

// edgeLengths are the lengths at which Kubernetes' name rules change: a
// label value or name part (63), a DNS subdomain (253), past both.
var edgeLengths = []int{63, 64, 253, 254, 300}

// crossKind are strings of every kind of field the generator fills, for a
// value taken from another kind: a seed named like a region, a provider type
// like a zone, an access restriction named like a label key.
var crossKind = func() []string {
	out := []string{"seed-00", "seed-01", "proj", "garden", projectNamespace, profileName, "eu-west-1-a", "Enforce", "zone", "True"}
	for _, l := range [][]string{providers, labelKeys, labelValues, taintKeys, taintValues, accessNames, domains, purposes} {
		out = append(out, l...)
	}
	for _, p := range providers {
		out = append(out, regionsOf[p]...)
	}
	return out
}()

// edgeValue draws what old becomes; pool holds strings of other fields.
func edgeValue(r *rand.Rand, old string, pool []string) string {
	switch r.IntN(9) {
	case 0:
		return ""
	case 1:
		return "*"
	case 2:
		return []string{" ", "\t", " " + old, old + " ", old + "\n"}[r.IntN(5)]
	case 3:
		return caseVariant(r, old)
	case 4:
		return long(old, edgeLengths[r.IntN(len(edgeLengths))])
	case 5:
		if len(old) > 1 {
			return old[:len(old)-1] // a prefix: matching must be whole
		}
		return old + "-"
	case 6:
		return []string{old + ".", "." + old, old + "/", "x/" + old}[r.IntN(4)]
	}
	if len(pool) == 0 {
		return ""
	}
	return pool[r.IntN(len(pool))]
}

// caseVariant is old in other letter cases ("Testing", "TESTING", "tESTING"),
// or old with an upper-case letter added when it has no letters.
func caseVariant(r *rand.Rand, old string) string {
	var v string
	switch r.IntN(3) {
	case 0:
		v = strings.ToUpper(old)
	case 1:
		if old != "" {
			v = strings.ToUpper(old[:1]) + old[1:]
		}
	default:
		v = strings.Map(func(c rune) rune {
			if c >= 'a' && c <= 'z' {
				return c - 'a' + 'A'
			}
			if c >= 'A' && c <= 'Z' {
				return c - 'A' + 'a'
			}
			return c
		}, old)
	}
	if v == old {
		return old + "X"
	}
	return v
}

// long is old repeated (or letters, for an empty old) to exactly n bytes.
func long(old string, n int) string {
	if old == "" {
		old = "a"
	}
	return strings.Repeat(old, n/len(old)+1)[:n]
}
