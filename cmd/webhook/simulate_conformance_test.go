package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seedwarden/seedwarden/internal/placement"
)

// TestSimulateConformanceCorpus runs `webhook simulate -f DIR` over the whole
// recorded corpus and compares every output line with the scenario's expect.
// Every seed an unschedulable line gives a reason carries a reason code,
// the counts add up to them, and a line without seed reasons has the
// decision's code.
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
			Reasons       map[string]string
			Code          placement.ReasonCode
			Codes         map[string]placement.ReasonCode
			Counts        map[placement.ReasonCode]int
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
			checkLineCodes(t, sc.Name, got.Reasons, got.Code, got.Codes, got.Counts)
			continue
		}
		require.True(t, got.Seed == sc.Expect.Seed || slices.Contains(sc.Expect.Tied, got.Seed),
			"%s: reference chose %s (tied %v), simulate says %s", sc.Name, sc.Expect.Seed, sc.Expect.Tied, line)
	}
}

func checkLineCodes(t *testing.T, name string, reasons map[string]string, code placement.ReasonCode, codes map[string]placement.ReasonCode, counts map[placement.ReasonCode]int) {
	t.Helper()
	require.True(t, code != "" || len(codes) > 0, "%s: unschedulable without a code", name)
	total := 0
	for seed := range reasons {
		require.NotEmpty(t, codes[seed], "%s: seed %s has a reason but no code", name, seed)
	}
	require.Len(t, codes, len(reasons), name)
	for _, n := range counts {
		total += n
	}
	require.Equal(t, len(codes), total, "%s: counts add up to the seeds with a code", name)
}
