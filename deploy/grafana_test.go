package manifests_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/seedwarden/seedwarden/internal/metrics"
)

func TestGrafanaDashboard(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(grafanaDir, dashboardFile))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Title  string `json:"title"`
		UID    string `json:"uid"`
		Panels []struct {
			ID      int    `json:"id"`
			Type    string `json:"type"`
			Title   string `json:"title"`
			Targets []struct {
				Expr  string `json:"expr"`
				RefID string `json:"refId"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatal(err)
	}
	if dash.UID == "" || dash.Title == "" {
		t.Error("no uid or title")
	}
	var exprs []string
	ids := map[int]bool{}
	for _, p := range dash.Panels {
		if ids[p.ID] {
			t.Errorf("panel id %d twice", p.ID)
		}
		ids[p.ID] = true
		if p.Type != "row" && len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			if strings.Count(tg.Expr, "(") != strings.Count(tg.Expr, ")") {
				t.Errorf("panel %q: unbalanced parentheses in %s", p.Title, tg.Expr)
			}
			exprs = append(exprs, tg.Expr)
		}
	}
	all := strings.Join(exprs, "\n")
	for _, m := range []string{
		metrics.DecisionsTotalName,
		metrics.DurationName + "_bucket",
		metrics.SeedChargedShootsName,
		metrics.SeedAllocatableShootsName,
		metrics.SeedShootsName,
		metrics.SeedUtilizationName,
		metrics.HeadroomShootsName,
		metrics.HeadroomAlertThresholdName,
		metrics.HeadroomDurationName + "_bucket",
		metrics.HeadroomLastSuccessName,
		"seedwarden_rejected_resources_total",
		metrics.GuardRefusalsTotalName,
		"seedwarden_certificate_expiry_timestamp_seconds",
		"seedwarden_certificate_ready",
		"seedwarden_pending_shoots",
		metrics.CacheStaleSecondsName,
		"controller_runtime_webhook_requests_total",
		"controller_runtime_webhook_latency_seconds_bucket",
	} {
		if !strings.Contains(all, m) {
			t.Errorf("no panel queries %s", m)
		}
	}
	if !strings.Contains(all, "histogram_quantile(0.99, sum by (le) (rate("+metrics.DurationName+"_bucket") ||
		!strings.Contains(all, "histogram_quantile(0.5, sum by (le) (rate("+metrics.DurationName+"_bucket") {
		t.Error("no p50/p99 of the scheduling duration")
	}

	k := readKustomization(t, grafanaDir)
	if len(k.ConfigMapGenerator) != 1 || k.ConfigMapGenerator[0].Options.Labels["grafana_dashboard"] == "" ||
		!reflect.DeepEqual(k.ConfigMapGenerator[0].Files, []string{dashboardFile}) {
		t.Errorf("the dashboard ConfigMap generator: %+v", k.ConfigMapGenerator)
	}
}
