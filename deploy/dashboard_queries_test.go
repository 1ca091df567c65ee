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
			ID      int `json:"id"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	require.NoError(t, json.Unmarshal(data, &dash))
	var rules []map[string]string
	for _, p := range dash.Panels {
		for i, tg := range p.Targets {
			rules = append(rules, map[string]string{
				"record": fmt.Sprintf("dashboard:panel_%d:query_%d", p.ID, i),
				"expr":   dashboardVariables.Replace(tg.Expr),
			})
		}
	}
	require.NotEmpty(t, rules)
	out, err := yaml.Marshal(map[string]any{"groups": []any{map[string]any{"name": "dashboard", "rules": rules}}})
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "dashboard-queries.yaml")
	require.NoError(t, os.WriteFile(file, out, 0o600))
	runPromtool(t, promtool, "check", "rules", file)
}
