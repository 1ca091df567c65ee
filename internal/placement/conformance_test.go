package placement_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/landscape"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// scenario is a file of testdata/conformance, recorded from Gardener's own
// scheduler (see testdata/CONFORMANCE.md). The files are copied verbatim from the shared
// corpus and never edited.
type scenario struct {
	Name           string                `json:"name"`
	Strategy       placement.Strategy    `json:"strategy"`
	NetworkOverlap placement.NetworkMode `json:"networkOverlap"`
	Objects        json.RawMessage       `json:"objects"`
	Shoot          api.Shoot             `json:"shoot"`
	Expect         struct {
		Seed           string   `json:"seed"`
		Tied           []string `json:"tied"`
		Unschedulable  bool     `json:"unschedulable"`
		ReferenceError string   `json:"referenceError"`
	} `json:"expect"`
}

// TestConformance runs every recorded scenario through the same entry point
// the webhook uses (cache.Store.Place over a store loaded with the landscape)
// and requires the reference's outcome: a seed among the tied ones, or
// unschedulable exactly when the reference was.
func TestConformance(t *testing.T) {
	scenarios := loadScenarios(t)
	passed := 0
	for _, ls := range scenarios {
		sc := ls.scenario
		d := ls.store.Place(&sc.Shoot, placement.Options{Strategy: sc.Strategy, NetworkMode: sc.NetworkOverlap}, "")

		switch {
		case sc.Expect.Unschedulable && d.Schedulable():
			t.Errorf("%s: reference was unschedulable (%s), we chose %q", sc.Name, sc.Expect.ReferenceError, d.Seed)
		case !sc.Expect.Unschedulable && !d.Schedulable():
			t.Errorf("%s: reference chose %q, we found none: %s", sc.Name, sc.Expect.Seed, d.Summary())
		case !sc.Expect.Unschedulable && !slices.Contains(sc.Expect.Tied, d.Seed) && d.Seed != sc.Expect.Seed:
			t.Errorf("%s: reference chose %q (tied %v), we chose %q (tied %v)", sc.Name, sc.Expect.Seed, sc.Expect.Tied, d.Seed, d.Tied)
		default:
			passed++
		}
	}
	// Printed, not only logged, so plain `go test` output shows the count.
	fmt.Printf("conformance: %d/%d scenarios agree with the reference\n", passed, len(scenarios))
}

// loadedScenario is a scenario with a Store loaded with its landscape.
type loadedScenario struct {
	scenario
	store *cache.Store
}

// loadScenarios reads every scenario of testdata/conformance and loads its
// landscape into a Store of its own.
func loadScenarios(t *testing.T) []loadedScenario {
	t.Helper()
	files, err := filepath.Glob("testdata/conformance/*.json")
	require.NoError(t, err)
	require.Len(t, files, corpusSize, "the corpus is copied whole")
	out := make([]loadedScenario, 0, len(files))
	for _, f := range files {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		var sc scenario
		require.NoError(t, json.Unmarshal(raw, &sc), f)
		objs, err := landscape.Decode(sc.Objects)
		require.NoError(t, err, f)
		store := cache.NewStore(cache.Options{GardenNamespace: "garden"})
		store.Load(objs)
		out = append(out, loadedScenario{scenario: sc, store: store})
	}
	return out
}
