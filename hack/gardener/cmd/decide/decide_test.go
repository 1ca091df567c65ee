package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// landscapeJSON is a small scenario: two ready seeds in the shoot's region,
// seed-b already hosting one Shoot, so seed-a wins alone unless edit changes it.
func landscapeJSON(t *testing.T, rule string, edit func(s map[string]any)) []byte {
	t.Helper()
	seed := func(name string) map[string]any {
		return map[string]any{
			"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Seed",
			"metadata": map[string]any{"name": name},
			"spec": map[string]any{
				"dns":      map[string]any{},
				"networks": map[string]any{"pods": "10.1.0.0/16", "services": "10.2.0.0/16"},
				"provider": map[string]any{"type": "aws", "region": "eu-1"},
				"settings": map[string]any{"scheduling": map[string]any{"visible": true}},
			},
			"status": map[string]any{
				"conditions": []any{map[string]any{
					"type": "GardenletReady", "status": "True",
					"lastTransitionTime": "2023-11-14T22:13:20Z", "lastUpdateTime": "2023-11-14T22:13:20Z",
				}},
				"lastOperation": map[string]any{
					"description": "", "lastUpdateTime": "2023-11-14T22:13:20Z",
					"progress": 100, "state": "Succeeded", "type": "Reconcile",
				},
			},
		}
	}
	shoot := func(name string, seedName string) map[string]any {
		spec := map[string]any{
			"cloudProfileName": "aws", "region": "eu-1", "kubernetes": map[string]any{},
			"provider":   map[string]any{"type": "aws"},
			"networking": map[string]any{"nodes": "10.250.0.0/24", "ipFamilies": []any{"IPv4"}},
		}
		if seedName != "" {
			spec["seedName"] = seedName
		}
		return map[string]any{
			"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
			"metadata": map[string]any{"name": name, "namespace": "garden-proj"},
			"spec":     spec,
		}
	}
	s := map[string]any{
		"name": "small", "strategy": "SameRegion", "networkOverlap": rule,
		"objects": []any{
			map[string]any{
				"apiVersion": "core.gardener.cloud/v1beta1", "kind": "CloudProfile",
				"metadata": map[string]any{"name": "aws"}, "spec": map[string]any{"type": "aws"},
			},
			map[string]any{
				"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Project",
				"metadata": map[string]any{"name": "proj"}, "spec": map[string]any{"namespace": "garden-proj"},
			},
			seed("seed-b"), seed("seed-a"), shoot("existing", "seed-b"),
		},
		"shoot":  shoot("new", ""),
		"expect": map[string]any{"seed": "ignored", "tied": []any{"ignored"}},
	}
	if edit != nil {
		edit(s)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func objects(s map[string]any) []any { return s["objects"].([]any) }

func specOf(o any) map[string]any { return o.(map[string]any)["spec"].(map[string]any) }

func runDecide(t *testing.T, stdin []byte, args ...string) (int, []line, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(args, bytes.NewReader(stdin), &out, &errOut)
	var lines []line
	dec := json.NewDecoder(&out)
	for dec.More() {
		var l line
		if err := dec.Decode(&l); err != nil {
			t.Fatalf("output is not JSON lines: %v", err)
		}
		lines = append(lines, l)
	}
	return code, lines, errOut.String()
}

func TestDecisions(t *testing.T) {
	own := linkedOverlapRule()
	other := overlapDisjoint
	if own == overlapDisjoint {
		other = overlapAllowIPv4
	}
	tests := []struct {
		name  string
		rule  string
		edit  func(s map[string]any)
		check func(t *testing.T, l line)
	}{
		{"least used seed wins alone", own, nil, func(t *testing.T, l line) {
			wantExpect(t, l, expect{Seed: "seed-a", Tied: []string{"seed-a"}})
		}},
		{"equally used seeds are all tied", own, func(s map[string]any) {
			s["objects"] = append(objects(s)[:4], map[string]any{
				"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Seed",
				"metadata": map[string]any{"name": "seed-c"}, "spec": specOf(objects(s)[2]),
				"status": objects(s)[2].(map[string]any)["status"],
			})
		}, func(t *testing.T, l line) {
			wantExpect(t, l, expect{Seed: "seed-a", Tied: []string{"seed-a", "seed-b", "seed-c"}})
		}},
		{"no seed in the region is Gardener's error", own, func(s map[string]any) {
			specOf(s["shoot"])["region"] = "us-1"
		}, func(t *testing.T, l line) {
			if l.Expect == nil || !l.Expect.Unschedulable || !strings.Contains(l.Expect.ReferenceError, "no matching seed candidate") {
				t.Errorf("want unschedulable with Gardener's candidate error, got %+v", l)
			}
		}},
		{"an IPv4 shoot network inside the seed's pods is the rules' difference", own, func(s map[string]any) {
			specOf(s["shoot"])["networking"].(map[string]any)["nodes"] = "10.1.0.0/24"
		}, func(t *testing.T, l line) {
			if own == overlapAllowIPv4 {
				wantExpect(t, l, expect{Seed: "seed-a", Tied: []string{"seed-a"}})
			} else if l.Expect == nil || !l.Expect.Unschedulable || !strings.Contains(l.Expect.ReferenceError, "intersects with seed pod network") {
				t.Errorf("want unschedulable for the overlap, got %+v", l)
			}
		}},
		// Gardener takes the first matching region config its cache lists,
		// in no defined order: two that disagree make the answer undefined.
		{"two disagreeing region configs make the decision undefined", own, func(s map[string]any) {
			regionConfigs(s, "eu-1: 0\nus-1: 10\n", "eu-1: 10\nus-1: 0\n")
		}, func(t *testing.T, l line) {
			wantExpect(t, l, expect{Seed: "seed-a", Tied: []string{"seed-a"}})
			if !strings.Contains(l.Undefined, "with ConfigMap region-b listed first: seed seed-b") {
				t.Errorf("want undefined naming region-b's answer, got %q", l.Undefined)
			}
		}},
		{"two agreeing region configs leave it defined", own, func(s map[string]any) {
			regionConfigs(s, "eu-1: 0\nus-1: 10\n", "eu-1: 0\nus-1: 20\n")
		}, func(t *testing.T, l line) {
			wantExpect(t, l, expect{Seed: "seed-a", Tied: []string{"seed-a"}})
			if l.Undefined != "" {
				t.Errorf("want no undefined, got %q", l.Undefined)
			}
		}},
		{"the other network rule is refused", other, nil, func(t *testing.T, l line) {
			wantError(t, l, "networkOverlap")
		}},
		{"an unknown strategy is refused", own, func(s map[string]any) { s["strategy"] = "Nearest" }, func(t *testing.T, l line) {
			wantError(t, l, `strategy "Nearest"`)
		}},
		{"a field Gardener lacks is refused", own, func(s map[string]any) { specOf(objects(s)[2])["colour"] = "red" }, func(t *testing.T, l line) {
			wantError(t, l, "objects[2]")
		}},
		{"a kind outside the garden scheme is refused", own, func(s map[string]any) {
			objects(s)[0].(map[string]any)["kind"] = "Flower"
		}, func(t *testing.T, l line) {
			wantError(t, l, "objects[0]")
		}},
		{"two objects with one name are refused", own, func(s map[string]any) {
			s["objects"] = append(objects(s), objects(s)[3])
		}, func(t *testing.T, l line) {
			wantError(t, l, "loading objects")
		}},
		// Gardener dereferences shootDefaults.pods without a nil check when
		// a Shoot with workers has no pods network of its own.
		{"a seed with shoot defaults but no pods crashes Gardener", own, func(s map[string]any) {
			specOf(objects(s)[3])["networks"].(map[string]any)["shootDefaults"] = map[string]any{"services": "10.9.0.0/16"}
			specOf(s["shoot"])["provider"] = map[string]any{"type": "aws", "workers": []any{map[string]any{
				"name": "pool", "machine": map[string]any{"type": "m5.large"}, "minimum": 1, "maximum": 1,
			}}}
		}, func(t *testing.T, l line) {
			if l.Panic == "" || l.Expect != nil {
				t.Errorf("want a panic line, got %+v", l)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, lines, _ := runDecide(t, landscapeJSON(t, tt.rule, tt.edit))
			if code != exitDone || len(lines) != 1 {
				t.Fatalf("exit %d with %d lines, want 0 with 1", code, len(lines))
			}
			if lines[0].Name != "small" {
				t.Errorf("name %q, want small", lines[0].Name)
			}
			tt.check(t, lines[0])
		})
	}
}

// regionConfigs makes the scenario MinimalDistance with the Shoot in region
// "mid", seed-a in eu-1 and seed-b (no longer used) in us-1, and adds region
// configs region-a and region-b with the given distance tables for "mid".
func regionConfigs(s map[string]any, tableA, tableB string) {
	s["strategy"] = "MinimalDistance"
	specOf(s["shoot"])["region"] = "mid"
	specOf(objects(s)[2])["provider"] = map[string]any{"type": "aws", "region": "us-1"}
	cm := func(name, table string) map[string]any {
		return map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{
				"name": name, "namespace": "garden",
				"labels":      map[string]any{"scheduling.gardener.cloud/purpose": "region-config"},
				"annotations": map[string]any{"scheduling.gardener.cloud/cloudprofiles": "aws"},
			},
			"data": map[string]any{"mid": table},
		}
	}
	s["objects"] = append(objects(s)[:4], cm("region-a", tableA), cm("region-b", tableB))
}

func wantExpect(t *testing.T, l line, want expect) {
	t.Helper()
	if l.Expect == nil || l.Expect.Seed != want.Seed || strings.Join(l.Expect.Tied, ",") != strings.Join(want.Tied, ",") {
		t.Errorf("want %+v, got %+v (error %q, panic %q)", want, l.Expect, l.Error, l.Panic)
	}
}

func wantError(t *testing.T, l line, substr string) {
	t.Helper()
	if l.Expect != nil || !strings.Contains(l.Error, substr) {
		t.Errorf("want an error line naming %q, got %+v", substr, l)
	}
}

func TestStreamsAndExitCodes(t *testing.T) {
	one := landscapeJSON(t, linkedOverlapRule(), nil)
	dir := t.TempDir()
	file := filepath.Join(dir, "s.json")
	if err := os.WriteFile(file, append(append(one, '\n'), one...), 0o600); err != nil {
		t.Fatal(err)
	}

	code, lines, _ := runDecide(t, append(append(one, ' '), one...))
	if code != exitDone || len(lines) != 2 {
		t.Errorf("two scenarios on stdin: exit %d, %d lines", code, len(lines))
	}
	code, lines, _ = runDecide(t, nil, file, file)
	if code != exitDone || len(lines) != 4 {
		t.Errorf("two files of two: exit %d, %d lines", code, len(lines))
	}
	code, lines, stderr := runDecide(t, nil, file, filepath.Join(dir, "missing.json"))
	if code != exitUsage || len(lines) != 0 || !strings.Contains(stderr, "missing.json") {
		t.Errorf("missing file: exit %d, %d lines, stderr %q", code, len(lines), stderr)
	}
	code, _, _ = runDecide(t, nil, "-frobnicate")
	if code != exitUsage {
		t.Errorf("unknown flag: exit %d", code)
	}
	code, lines, stderr = runDecide(t, append(one, []byte(` {"name": `)...))
	if code != exitInput || len(lines) != 1 || !strings.Contains(stderr, "stdin") {
		t.Errorf("truncated stream: exit %d, %d lines, stderr %q", code, len(lines), stderr)
	}
	code, lines, _ = runDecide(t, []byte(`[1,2]`))
	if code != exitDone || len(lines) != 1 || lines[0].Error == "" {
		t.Errorf("a value that is no scenario: exit %d, lines %+v", code, lines)
	}
	var out, errOut bytes.Buffer
	if code := run([]string{"-network-overlap"}, nil, &out, &errOut); code != exitDone || strings.TrimSpace(out.String()) != linkedOverlapRule() {
		t.Errorf("-network-overlap: exit %d, %q", code, out.String())
	}
}
