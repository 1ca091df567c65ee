package manifests_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/seedwarden/seedwarden/internal/metrics"
)

// The headroom alert compares the metrics seedwarden exports, per profile,
// with the lowest replica's headroom, and names the profile.
func TestPrometheusRule(t *testing.T) {
	rule := findU(t, manifests(t), "PrometheusRule", namespace, "seedwarden")
	groups, _, _ := unstructured.NestedSlice(rule.Object, "spec", "groups")
	var alert map[string]any
	for _, g := range groups {
		rules, _, _ := unstructured.NestedSlice(g.(map[string]any), "rules")
		for _, r := range rules {
			if r.(map[string]any)["alert"] == "SeedwardenHeadroomLow" {
				alert = r.(map[string]any)
			}
		}
	}
	if alert == nil {
		t.Fatal("no alert SeedwardenHeadroomLow")
	}
	expr, _ := alert["expr"].(string)
	for _, want := range []string{
		"min by (profile) (" + metrics.HeadroomShootsName + ")",
		"< on (profile)",
		"by (profile) (" + metrics.HeadroomAlertThresholdName + ")",
	} {
		if !strings.Contains(expr, want) {
			t.Errorf("expr %q does not contain %q", expr, want)
		}
	}
	if strings.Count(expr, "(") != strings.Count(expr, ")") {
		t.Errorf("unbalanced parentheses in %s", expr)
	}
	if metrics.HeadroomProfileLabel != "profile" {
		t.Errorf("the metrics' profile label is %q", metrics.HeadroomProfileLabel)
	}
	if alert["for"] != "15m" {
		t.Errorf("for = %v, want 15m", alert["for"])
	}
	ann, _, _ := unstructured.NestedStringMap(alert, "annotations")
	for _, k := range []string{"summary", "description"} {
		if !strings.Contains(ann[k], "{{ $labels.profile }}") {
			t.Errorf("annotation %s does not name the profile: %q", k, ann[k])
		}
	}
}

// The rule unit tests (promtool's format) and the rule file promtool reads
// them against, written from the shipped PrometheusRule's spec.
const (
	ruleFile       = "manifests/prometheusrule.yaml"
	ruleTestsDir   = "rules_test"
	ruleTestTarget = "seedwarden-rules.yaml" // rule_files in the tests
	runbookFile    = "../docs/operations.md"
	runbookBase    = "https://github.com/seedwarden/seedwarden/blob/main/docs/operations.md#"
	promtoolScript = "../hack/rules/promtool.sh"
)

type alertingRule struct {
	Alert       string            `json:"alert"`
	Record      string            `json:"record"`
	Expr        string            `json:"expr"`
	For         string            `json:"for"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

type ruleGroup struct {
	Name  string         `json:"name"`
	Rules []alertingRule `json:"rules"`
}

// shippedRuleSpec is the PrometheusRule's spec as raw YAML (what promtool
// reads, untouched) and decoded.
func shippedRuleSpec(t *testing.T) ([]byte, []ruleGroup) {
	t.Helper()
	data, err := os.ReadFile(ruleFile)
	require.NoError(t, err)
	var obj struct {
		Kind string         `json:"kind"`
		Spec map[string]any `json:"spec"`
	}
	require.NoError(t, yaml.Unmarshal(data, &obj))
	require.Equal(t, "PrometheusRule", obj.Kind)
	spec, err := yaml.Marshal(obj.Spec)
	require.NoError(t, err)
	var decoded struct {
		Groups []ruleGroup `json:"groups"`
	}
	require.NoError(t, yaml.UnmarshalStrict(spec, &decoded), "the spec holds only groups of rules with known fields")
	require.NotEmpty(t, decoded.Groups)
	return spec, decoded.Groups
}

func alerts(groups []ruleGroup) []alertingRule {
	var out []alertingRule
	for _, g := range groups {
		for _, r := range g.Rules {
			if r.Alert != "" {
				out = append(out, r)
			}
		}
	}
	return out
}

// promtool runs the rule checks and unit tests on the shipped spec: every
// alert fires on its synthetic series and resolves.
func TestPrometheusRuleUnitTests(t *testing.T) {
	promtool := promtoolBinary(t)
	spec, _ := shippedRuleSpec(t)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, ruleTestTarget), spec, 0o600))
	tests, err := filepath.Glob(filepath.Join(ruleTestsDir, "*.test.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, tests)
	args := []string{"test", "rules"}
	for _, f := range tests {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		dst := filepath.Join(dir, filepath.Base(f))
		require.NoError(t, os.WriteFile(dst, data, 0o600))
		args = append(args, dst)
	}
	runPromtool(t, promtool, "check", "rules", filepath.Join(dir, ruleTestTarget))
	runPromtool(t, promtool, args...)
}

func runPromtool(t *testing.T, promtool string, args ...string) {
	t.Helper()
	start := time.Now()
	out, err := exec.Command(promtool, args...).CombinedOutput()
	require.NoError(t, err, "promtool %s:\n%s", strings.Join(args, " "), out)
	t.Logf("promtool %s (%s):\n%s", args[0]+" "+args[1], time.Since(start).Round(time.Millisecond), out)
}

// promtoolBinary is $SEEDWARDEN_PROMTOOL, or the one hack/rules/promtool.sh
// builds from the module proxy into .cache/tools/bin once per machine (a
// cold build takes minutes: with -short the test skips instead).
func promtoolBinary(t *testing.T) string {
	if p := os.Getenv("SEEDWARDEN_PROMTOOL"); p != "" {
		return p
	}
	if testing.Short() {
		if p, err := filepath.Abs("../.cache/tools/bin/promtool"); err == nil {
			if _, err := os.Stat(p); err == nil {
				return p
			}
		}
		t.Skip("-short: no promtool in .cache/tools/bin (bash hack/rules/promtool.sh builds it)")
	}
	start := time.Now()
	var stderr bytes.Buffer
	cmd := exec.Command("bash", promtoolScript)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "building promtool:\n%s", stderr.String())
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if stderr.Len() > 0 {
		t.Logf("%s(%s)", stderr.String(), time.Since(start).Round(time.Second))
	}
	return lines[len(lines)-1]
}

// The unit tests cover every alert of the rule file, each firing at one
// evaluation and resolved at a later one of the same test group.
func TestPrometheusRuleEveryAlertTested(t *testing.T) {
	_, groups := shippedRuleSpec(t)
	type evalCase struct {
		EvalTime  string `json:"eval_time"`
		Alertname string `json:"alertname"`
		ExpAlerts []any  `json:"exp_alerts"`
	}
	var file struct {
		RuleFiles []string `json:"rule_files"`
		Tests     []struct {
			Name  string     `json:"name"`
			Cases []evalCase `json:"alert_rule_test"`
		} `json:"tests"`
	}
	fired, resolved := map[string]bool{}, map[string]bool{}
	tests, err := filepath.Glob(filepath.Join(ruleTestsDir, "*.test.yaml"))
	require.NoError(t, err)
	for _, f := range tests {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		require.NoError(t, yaml.Unmarshal(data, &file), f)
		assert.Equal(t, []string{ruleTestTarget}, file.RuleFiles, f)
		for _, tg := range file.Tests {
			firedAt := map[string]time.Duration{}
			for _, c := range tg.Cases {
				at, err := time.ParseDuration(c.EvalTime)
				require.NoError(t, err, "%s: %s: eval_time", f, tg.Name)
				if len(c.ExpAlerts) > 0 {
					if _, ok := firedAt[c.Alertname]; !ok {
						firedAt[c.Alertname] = at
					}
					fired[c.Alertname] = true
				} else if first, ok := firedAt[c.Alertname]; ok && at > first {
					resolved[c.Alertname] = true
				}
			}
		}
	}
	for _, a := range alerts(groups) {
		assert.True(t, fired[a.Alert], "no rule unit test in %s shows %s firing", ruleTestsDir, a.Alert)
		assert.True(t, resolved[a.Alert], "no rule unit test in %s shows %s resolving after it fired", ruleTestsDir, a.Alert)
	}
}

// Every alert is explained: a severity, a summary and description, and a
// runbook_url whose anchor is a section of docs/operations.md with the
// meaning, impact, diagnosis and mitigation.
func TestPrometheusRuleRunbooks(t *testing.T) {
	_, groups := shippedRuleSpec(t)
	doc, err := os.ReadFile(runbookFile)
	require.NoError(t, err)
	sections := runbookSections(string(doc))
	names := map[string]bool{}
	for _, a := range alerts(groups) {
		assert.False(t, names[a.Alert], "alert %s twice", a.Alert)
		names[a.Alert] = true
		assert.Regexp(t, `^Seedwarden[A-Z][A-Za-z]+$`, a.Alert)
		assert.Contains(t, []string{"warning", "critical"}, a.Labels["severity"], "%s: severity", a.Alert)
		assert.NotEmpty(t, a.For, "%s: for", a.Alert)
		for _, k := range []string{"summary", "description"} {
			assert.NotEmpty(t, a.Annotations[k], "%s: annotation %s", a.Alert, k)
		}
		assert.Equal(t, runbookBase+strings.ToLower(a.Alert), a.Annotations["runbook_url"], "%s: runbook_url", a.Alert)
		body, ok := sections[a.Alert]
		if !assert.True(t, ok, "%s has no section (### %s) in %s", a.Alert, a.Alert, runbookFile) {
			continue
		}
		for _, part := range []string{"Meaning", "Impact", "Diagnosis", "Mitigation"} {
			assert.Contains(t, body, "**"+part+".**", "%s: the runbook says nothing under %s", a.Alert, part)
		}
		assert.Contains(t, body, "```promql", "%s: the diagnosis has no PromQL", a.Alert)
	}
	for name := range sections {
		assert.True(t, names[name], "%s documents %s, which is no alert of %s", runbookFile, name, ruleFile)
	}
}

// runbookSections maps each "### Seedwarden..." heading of the runbook
// document to the text up to the next heading of that level or above.
func runbookSections(doc string) map[string]string {
	heading := regexp.MustCompile(`(?m)^(#{1,3}) (.*)$`)
	out := map[string]string{}
	idx := heading.FindAllStringSubmatchIndex(doc, -1)
	for i, m := range idx {
		title := doc[m[4]:m[5]]
		if doc[m[2]:m[3]] != "###" || !strings.HasPrefix(title, "Seedwarden") {
			continue
		}
		end := len(doc)
		if i+1 < len(idx) {
			end = idx[i+1][0]
		}
		out[title] = doc[m[1]:end]
	}
	return out
}

// SeedwardenDown reads up of the job the ServiceMonitor's scrape produces:
// the value of the Service's label that jobLabel names. Renaming either
// would make the alert fire forever (absent) or never.
func TestSeedwardenDownWatchesTheServiceMonitorsJob(t *testing.T) {
	docs := manifests(t)
	sm := findU(t, docs, "ServiceMonitor", namespace, "seedwarden")
	jobLabel, _, _ := unstructured.NestedString(sm.Object, "spec", "jobLabel")
	require.NotEmpty(t, jobLabel, "the ServiceMonitor sets no jobLabel: job would be the Service's name")
	svc := findU(t, docs, "Service", namespace, serviceName)
	job := svc.GetLabels()[jobLabel]
	require.NotEmpty(t, job, "the Service has no label %s", jobLabel)
	_, groups := shippedRuleSpec(t)
	var down *alertingRule
	for _, a := range alerts(groups) {
		if a.Alert == "SeedwardenDown" {
			down = &a
		}
	}
	require.NotNil(t, down, "no alert SeedwardenDown")
	assert.Equal(t, fmt.Sprintf("absent(up{job=%q} == 1)", job), strings.TrimSpace(down.Expr))
	assert.Equal(t, "critical", down.Labels["severity"])
}

// docs/operations.md's alert table lists every shipped alert once, linked
// to its section, with the rule's `for`.
func TestOperationsAlertTable(t *testing.T) {
	doc, err := os.ReadFile(runbookFile)
	require.NoError(t, err)
	row := regexp.MustCompile(`(?m)^\| \[(Seedwarden[A-Za-z]+)\]\(#([a-z]+)\) \| (warning|critical) \| (.*), for (\d+[smh]) \|$`)
	type entry struct{ anchor, severity, forDur string }
	table := map[string]entry{}
	for _, m := range row.FindAllStringSubmatch(string(doc), -1) {
		_, dup := table[m[1]]
		assert.False(t, dup, "%s has two rows", m[1])
		table[m[1]] = entry{m[2], m[3], m[5]}
	}
	_, groups := shippedRuleSpec(t)
	for _, a := range alerts(groups) {
		e, ok := table[a.Alert]
		if !assert.True(t, ok, "%s: no row in %s's alert table", a.Alert, runbookFile) {
			continue
		}
		assert.Equal(t, strings.ToLower(a.Alert), e.anchor, "%s: link", a.Alert)
		assert.Equal(t, a.Labels["severity"], e.severity, "%s: severity", a.Alert)
		assert.Equal(t, a.For, e.forDur, "%s: for", a.Alert)
		delete(table, a.Alert)
	}
	assert.Empty(t, table, "rows for alerts that are not shipped")
}
