package main

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzDecodeScenario: whatever bytes arrive as a scenario, parsing and
// decoding into Gardener's types end in a landscape or an error, never a
// panic, and a landscape always has the Shoot to place.
func FuzzDecodeScenario(f *testing.F) {
	for _, name := range []string{"case-1-00000.json", "case-1-00001.json", "case-8-00000.json"} {
		raw, err := os.ReadFile(filepath.Join(corpusDir, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	f.Add([]byte(`{"name":"x","strategy":"SameRegion","networkOverlap":"AllowIPv4","objects":[{}],"shoot":{}}`))
	f.Add([]byte(`{"name":"x","strategy":"SameRegion","networkOverlap":"AllowIPv4","objects":[],"shoot":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}}`))
	f.Add([]byte(`{"objects":null,"shoot":null}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		s, err := parseScenario(raw)
		if err != nil {
			return
		}
		l, err := decodeLandscape(s, linkedOverlapRule())
		if err == nil && l.shoot == nil {
			t.Fatalf("a landscape without the Shoot to place from %q", raw)
		}
	})
}
