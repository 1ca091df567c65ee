package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seedwarden/seedwarden/internal/config"
	"github.com/seedwarden/seedwarden/internal/plan"
)

// The headroom a server exports for a profile is the number of Shoots
// `plan --add-shoots LIMIT --like TEMPLATE` places on the same landscape
// with the same options: the gauges promise what plan shows.
func TestServeLandscapeHeadroomMatchesPlan(t *testing.T) {
	certDir := devCertDir(t)
	port, metricsPort, healthPort := freePort(t), freePort(t), freePort(t)
	template := string(yamlToJSON(t, "../../examples/shoot.yaml"))
	templates := []string{
		template,
		// Only the two eu-central-1 seeds, both with allocatable.
		strings.Replace(template, `"spec":{`, `"spec":{"seedSelector":{"matchLabels":{"seed.gardener.cloud/region":"eu-central-1"}},`, 1),
		template,
		strings.Replace(template, `"name":"aws"`, `"name":"no-such-cloud-profile"`, 1),
	}
	cfgText := configHeader + fmt.Sprintf(`
server: {port: %d, certDir: %s}
metrics: {bindAddress: "127.0.0.1:%d"}
health: {bindAddress: "127.0.0.1:%d"}
scoring: {scorers: [{name: LeastAllocated, weight: 2}, {name: RegionDistance, weight: 1}]}
headroom:
  interval: 1s
  profiles:
  - {name: accept-eu-central, limit: 1000, alertBelow: 250, shoot: %s}
  - {name: accept-eu-selected, limit: 1000, shoot: %s}
  - {name: accept-eu-capped, limit: 7, shoot: %s}
  - {name: accept-unknown-profile, shoot: %s}
`, port, certDir, metricsPort, healthPort, templates[0], templates[1], templates[2], templates[3])
	cfg, err := config.Parse([]byte(cfgText), configChecks...)
	require.NoError(t, err)
	cfgPath := writeFile(t, "config.yaml", cfgText)
	srv := startLandscape(t, cfgPath, healthPort)
	defer srv.stopAndWait(t, 30*time.Second)
	profiles, err := headroomProfiles(cfg)
	require.NoError(t, err)
	require.Len(t, profiles, 4)

	metricsURL := fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort)
	var exported map[string]int
	require.Eventually(t, func() bool {
		exported = headroomSamples(t, body(t, metricsURL), "seedwarden_headroom_shoots")
		for _, p := range profiles {
			if _, ok := exported[p.Name]; !ok {
				return false
			}
		}
		return true
	}, 15*time.Second, 50*time.Millisecond)

	// What `webhook plan --add-shoots LIMIT --like TEMPLATE` places on the
	// same landscape with the same configuration.
	for i, p := range profiles {
		like := writeFile(t, fmt.Sprintf("template-%d.json", i), templates[i])
		code, out, errOut := runCmd(t, "plan", "--landscape", "../../examples/landscape.yaml", "--config", cfgPath,
			"--add-shoots", strconv.Itoa(p.Limit), "--like", like, "-o", "json")
		require.Contains(t, []int{exitOK, exitIncomplete}, code, errOut)
		var report plan.Report
		require.NoError(t, json.Unmarshal([]byte(out), &report))
		assert.Equal(t, len(report.Placed), exported[p.Name], "profile %s", p.Name)
	}
	// Known answers: once eu-central-1's 96 + 98 free places are taken,
	// Shoots go to aws-us1 (with RegionDistance the strategy is a
	// preference, not a filter), which has no limit, so the count stops at
	// the limit; a seed selector keeps them to eu-central-1; the cap stops at
	// 7; an unknown cloud profile places nothing.
	assert.Equal(t, map[string]int{"accept-eu-central": 1000, "accept-eu-selected": 194, "accept-eu-capped": 7, "accept-unknown-profile": 0}, exported)

	m := body(t, metricsURL)
	assert.Equal(t, map[string]int{"accept-eu-central": 250}, headroomSamples(t, m, "seedwarden_headroom_alert_threshold_shoots"))
	assert.Contains(t, m, `seedwarden_headroom_duration_seconds_count{profile="accept-eu-central"}`)
	assert.Contains(t, srv.stderr.String(), "no-such-cloud-profile", "why the profile fits nowhere is logged")
}

// headroomSamples are the values of metric by profile, for the profiles
// this file's tests configure (the registry is process-wide).
func headroomSamples(t *testing.T, metrics, name string) map[string]int {
	t.Helper()
	re := regexp.MustCompile(`(?m)^` + name + `\{profile="(accept-[a-z-]+)"\} (\S+)$`)
	out := map[string]int{}
	for _, m := range re.FindAllStringSubmatch(metrics, -1) {
		v, err := strconv.ParseFloat(m[2], 64)
		require.NoError(t, err)
		out[m[1]] = int(v)
	}
	return out
}
