package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// corpusDir is the project's recorded conformance corpus.
const corpusDir = "../../../../internal/placement/testdata/conformance"

// TestCorpus decides every corpus scenario of the network rule this test
// binary links and compares with the recorded expectation. The plain build
// covers AllowIPv4; the Disjoint half needs the overlay that
// hack/gardener-bins.sh writes:
//
//	go test -overlay ../../.cache/gardener/disjoint/overlay.json ./cmd/decide
func TestCorpus(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(corpusDir, "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no corpus in %s: %v", corpusDir, err)
	}
	own := linkedOverlapRule()
	decided := 0
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		s, err := parseScenario(raw)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if s.NetworkOverlap != own {
			continue
		}
		decided++
		var want expect
		if err := json.Unmarshal(s.Expect, &want); err != nil {
			t.Fatalf("%s: expect: %v", s.Name, err)
		}
		l, err := decodeLandscape(s, own)
		if err != nil {
			t.Errorf("%s: %v", s.Name, err)
			continue
		}
		got, undefined, err := decide(context.Background(), l)
		if err != nil {
			t.Errorf("%s: %v", s.Name, err)
			continue
		}
		if undefined != "" {
			t.Errorf("%s: %s", s.Name, undefined)
		}
		if msg := disagreement(want, got); msg != "" {
			t.Errorf("%s (%s, %s): %s\n recorded: %+v\n gardener: %+v", s.Name, s.Strategy, own, msg, want, got)
		}
		// The recorded messages predate corpus v2, which kept deletion
		// timestamps: where one is set, an earlier filter may now be the one
		// that leaves no seed. Elsewhere they are Gardener's text exactly.
		if want.Unschedulable && !hasDeleting(l) && want.ReferenceError != got.ReferenceError {
			t.Errorf("%s: message differs\n recorded: %s\n gardener: %s", s.Name, want.ReferenceError, got.ReferenceError)
		}
	}
	t.Logf("%d corpus scenarios of rule %s decided", decided, own)
	if decided < len(paths)/4 {
		t.Fatalf("only %d of %d corpus scenarios use rule %s; the corpus or the rule probe is off", decided, len(paths), own)
	}
}

// disagreement says how a decision differs from a recorded one, or "".
func disagreement(want, got expect) string {
	switch {
	case want.Unschedulable != got.Unschedulable:
		return "schedulability differs"
	case want.Unschedulable:
		return ""
	case !slices.Contains(got.Tied, want.Seed):
		return "recorded seed is not among Gardener's tied seeds"
	case !slices.Equal(slices.Sorted(slices.Values(want.Tied)), got.Tied):
		return "tied sets differ"
	}
	return ""
}

func hasDeleting(l *landscape) bool {
	return slices.ContainsFunc(l.objects, func(o client.Object) bool { return o.GetDeletionTimestamp() != nil })
}
