package manifests_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// dashboardVariables stand in for the dashboard's template variables so
// that its queries are plain PromQL.
var dashboardVariables = strings.NewReplacer(
	"$__rate_interval", "5m",
	"$seed_label", "label_environment",
	"$job", "seedwarden",
	"$namespace", "seedwarden",
)

// Every query of the Grafana dashboard is valid PromQL: promtool checks
// them as recording rules.
func TestGrafanaDashboardQueriesParse(t *testing.T) {
	promtool := promtoolBinary(t)
	data, err := os.ReadFile(filepath.Join(grafanaDir, dashboardFile))
	require.NoError(t, err)
	var dash struct {
		Panels []struct {
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	require.NoError(t, json.Unmarshal(data, &dash))
	var exprs []string
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			exprs = append(exprs, dashboardVariables.Replace(tg.Expr))
		}
	}
	checkQueries(t, promtool, exprs)
}

// Every line of the runbooks' PromQL blocks is a valid query.
func TestRunbookQueriesParse(t *testing.T) {
	promtool := promtoolBinary(t)
	doc, err := os.ReadFile(runbookFile)
	require.NoError(t, err)
	var exprs []string
	for _, part := range strings.Split(string(doc), "```promql\n")[1:] {
		block, _, _ := strings.Cut(part, "```")
		for line := range strings.Lines(block) {
			if line = strings.TrimSpace(line); line != "" {
				exprs = append(exprs, line)
			}
		}
	}
	checkQueries(t, promtool, exprs)
}

// checkQueries has promtool check exprs as recording rules.
func checkQueries(t *testing.T, promtool string, exprs []string) {
	t.Helper()
	require.NotEmpty(t, exprs)
	rules := make([]map[string]string, 0, len(exprs))
	for i, e := range exprs {
		rules = append(rules, map[string]string{"record": fmt.Sprintf("query:%d", i), "expr": e})
	}
	out, err := yaml.Marshal(map[string]any{"groups": []any{map[string]any{"name": "queries", "rules": rules}}})
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "queries.yaml")
	require.NoError(t, os.WriteFile(file, out, 0o600))
	runPromtool(t, promtool, "check", "rules", file)
}
