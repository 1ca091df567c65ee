package difftest

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMutateIsDeterministic(t *testing.T) {
	bases := Generate(DefaultSeed, 40)
	for i := range 200 {
		a, err := Mutate(bases, 3, i)
		require.NoError(t, err)
		b, err := Mutate(bases, 3, i)
		require.NoError(t, err)
		require.Equal(t, a, b, "mutant %d depends on (bases, seed, i) only", i)
	}
}

// TestMutantChangesOneString: a mutant is its base with exactly one string
// (a value or a map key) different, the rest byte-equal once re-encoded.
func TestMutantChangesOneString(t *testing.T) {
	bases := Generate(DefaultSeed, 40)
	byName := map[string]Scenario{}
	for _, b := range bases {
		byName[b.Name] = b
	}
	for i := range 300 {
		m, err := Mutate(bases, 11, i)
		require.NoError(t, err)
		base := byName[strings.Fields(m.Change)[0]]
		require.NotEmpty(t, base.Name, m.Change)
		require.Len(t, m.Objects, len(base.Objects))
		differ := 0
		for j := range base.Objects {
			differ += leafDiffs(t, base.Objects[j], m.Objects[j])
		}
		differ += leafDiffs(t, base.Shoot, m.Shoot)
		// A key renamed onto an existing one, or a string set to itself,
		// changes one leaf or none; nothing changes two.
		assert.LessOrEqual(t, differ, 2, "%s", m.Change) // a renamed key: one gone, one new
		assert.Equal(t, base.Strategy, m.Strategy)
		assert.Equal(t, base.NetworkOverlap, m.NetworkOverlap)
	}
}

// leafDiffs counts the string leaves (and keys) present in one document and
// not the other.
func leafDiffs(t *testing.T, a, b json.RawMessage) int {
	t.Helper()
	la, lb := leaves(t, a), leaves(t, b)
	n := 0
	for k, v := range la {
		if lb[k] != v {
			n++
		}
	}
	for k := range lb {
		if _, ok := la[k]; !ok {
			n++
		}
	}
	return n
}

func leaves(t *testing.T, raw json.RawMessage) map[string]string {
	t.Helper()
	v, err := decodeNumbers(raw)
	require.NoError(t, err)
	out := map[string]string{}
	var walk func(v any, path string)
	walk = func(v any, path string) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				walk(e, path+"\x00"+k)
			}
		case []any:
			for j, e := range x {
				walk(e, path+"\x00#"+string(rune('0'+j)))
			}
		default:
			b, _ := json.Marshal(x)
			out[path] = string(b)
		}
	}
	walk(v, "")
	return out
}

// TestEdgeValuesCoverTheKinds: the edge values include every kind the
// issue names: empty, `*`, whitespace, case variants, the Kubernetes length
// limits and past them, and another field's string.
func TestEdgeValuesCoverTheKinds(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	seen := map[string]bool{}
	for range 2000 {
		v := edgeValue(r, "testing", []string{"eu-west-1"})
		switch {
		case v == "":
			seen["empty"] = true
		case v == "*":
			seen["star"] = true
		case strings.TrimSpace(v) != v:
			seen["whitespace"] = true
		case strings.EqualFold(v, "testing") && v != "testing":
			seen["case"] = true
		case len(v) == 63, len(v) == 253:
			seen["at the limit"] = true
		case len(v) == 64, len(v) == 254:
			seen["past the limit"] = true
		case v == "eu-west-1":
			seen["other kind"] = true
		case v == "testin":
			seen["prefix"] = true
		}
	}
	for _, k := range []string{"empty", "star", "whitespace", "case", "at the limit", "past the limit", "other kind", "prefix"} {
		assert.True(t, seen[k], k)
	}
}

// TestGeneratorDrawsEdgeValues: over a default run the generator writes
// edge values into the fields placement reads.
func TestGeneratorDrawsEdgeValues(t *testing.T) {
	counts := map[string]int{}
	for _, sc := range Generate(DefaultSeed, 2000) {
		all := string(sc.Shoot)
		for _, o := range sc.Objects {
			all += string(o)
		}
		for name, s := range map[string]string{
			"star": `":"*"`, "leading space": `":" `, "253 bytes": strings.Repeat("a", 60),
			"seed named like a region": `"kind":"Seed","metadata":{"name":"eu-`,
		} {
			if strings.Contains(all, s) {
				counts[name]++
			}
		}
		var shoot struct {
			Spec struct{ Purpose *string } `json:"spec"`
		}
		require.NoError(t, json.Unmarshal(sc.Shoot, &shoot))
		if p := shoot.Spec.Purpose; p != nil && !slices.Contains(purposes, *p) {
			counts["odd purpose"]++
		}
	}
	for name, n := range counts {
		t.Logf("%s: %d scenarios", name, n)
	}
	for _, name := range []string{"star", "leading space", "253 bytes", "odd purpose"} {
		assert.Greater(t, counts[name], 5, name)
	}
}
