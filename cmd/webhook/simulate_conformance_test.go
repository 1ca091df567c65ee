package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSimulateConformanceCorpus runs `webhook simulate -f DIR` over the whole
// recorded corpus and compares every output line with the scenario's expect.
func TestSimulateConformanceCorpus(t *testing.T) {
	dir := filepath.Join("..", "..", "internal", "placement", "testdata", "conformance")
	code, out, errOut := runCmd(t, "simulate", "-f", dir)
	require.Equal(t, exitOK, code, errOut)

	lines := strings.Split(strings.TrimSpace(out), "\n")
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	require.NoError(t, err)
	require.Len(t, lines, len(files))
	for i, line := range lines {
		var got struct {
			Name          string `json:"name"`
			Seed          string `json:"seed"`
			Unschedulable bool   `json:"unschedulable"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &got), line)
		raw, err := os.ReadFile(files[i])
		require.NoError(t, err)
		var sc struct {
			Name   string `json:"name"`
			Expect struct {
				Seed          string   `json:"seed"`
				Tied          []string `json:"tied"`
				Unschedulable bool     `json:"unschedulable"`
			} `json:"expect"`
		}
		require.NoError(t, json.Unmarshal(raw, &sc))
		require.Equal(t, sc.Name, got.Name, "lines come in file-name order")
		if sc.Expect.Unschedulable {
			require.True(t, got.Unschedulable, "%s: reference was unschedulable, simulate says %s", sc.Name, line)
			continue
		}
		require.True(t, got.Seed == sc.Expect.Seed || slices.Contains(sc.Expect.Tied, got.Seed),
			"%s: reference chose %s (tied %v), simulate says %s", sc.Name, sc.Expect.Seed, sc.Expect.Tied, line)
	}
}
