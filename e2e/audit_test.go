package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	syaml "sigs.k8s.io/yaml"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/audit"
)

// reportCRD is the upstream OpenReports Report CRD the audit writes to.
const reportCRD = "internal/audit/testdata/openreports.io_reports.yaml"

// auditInterval is the e2e webhook's audit.interval.
const auditInterval = 10 * time.Second

// auditConfig runs the placement audit in the webhook under test.
var auditConfig = fmt.Sprintf(`
audit:
  enabled: true
  interval: %s
`, auditInterval)

// installReportCRD installs the OpenReports Report CRD and waits until it
// is served.
func (st *suite) installReportCRD(ctx context.Context) error {
	data, err := os.ReadFile(filepath.Join(st.root, reportCRD))
	if err != nil {
		return err
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := syaml.Unmarshal(data, crd); err != nil {
		return fmt.Errorf("%s: %w", reportCRD, err)
	}
	if err := st.c.Create(ctx, crd); err != nil {
		return fmt.Errorf("%s: %w", reportCRD, err)
	}
	if err := poll(ctx, 30*time.Second, 100*time.Millisecond, func() error {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(audit.ReportGVK.GroupVersion().WithKind("ReportList"))
		return st.c.List(ctx, l)
	}); err != nil {
		return fmt.Errorf("Report CRD not served: %w", err)
	}
	logf("OpenReports Report CRD installed from %s", reportCRD)
	return nil
}

// auditedSeed holds Shoots in the landscape on both targets.
const (
	auditedSeed = "aws-eu1"
	auditTaint  = "e2e.seedwarden.io/audit"
	auditRule   = "TaintNotTolerated"
)

// TestAuditReportsTaintedSeed: tainting a seed that holds Shoots makes
// the leader's audit list exactly those Shoots, with the rule, in their
// namespace's Report within one audit interval, and its metric count them;
// untainting clears both. The metric's series, as scraped throughout, are
// then replayed (one scrape a minute) in a promtool test of the shipped
// rules, where SeedwardenPlacementViolations fires with their count and
// resolves.
func TestAuditReportsTaintedSeed(t *testing.T) {
	st := need(t)
	st.startTest(t)
	ctx := context.Background()

	// Before: no result for the seed's rule (other findings left alone).
	eventually(t, 2*auditInterval, func() error {
		if got := st.auditResults(ctx, auditedSeed, auditRule); len(got) > 0 {
			return fmt.Errorf("results before the taint: %v", got)
		}
		return nil
	})
	rec := st.recordAuditSeries(auditedSeed, auditRule)
	defer rec.stop()

	want := st.shootsOn(ctx, t, auditedSeed)
	require.NotEmpty(t, want, "the landscape has Shoots on %s", auditedSeed)
	st.setSeedTaint(ctx, t, auditedSeed, true)
	tainted := time.Now()
	t.Cleanup(func() { st.setSeedTaint(ctx, t, auditedSeed, false) })

	// Within one interval (and the watch's delay): exactly those Shoots.
	eventually(t, auditInterval+5*time.Second, func() error {
		got := st.auditResults(ctx, auditedSeed, auditRule)
		if !slices.Equal(got, want) {
			return fmt.Errorf("report lists %v, want %v", got, want)
		}
		if n := rec.last(); n != float64(len(want)) {
			return fmt.Errorf("%s{seed=%q,rule=%q} is %v, want %d", "seedwarden_audit_violating_shoots", auditedSeed, auditRule, n, len(want))
		}
		return nil
	})
	logf("audit: %d Shoots of %s reported %s after %s", len(want), auditedSeed, auditRule, time.Since(tainted).Round(100*time.Millisecond))
	// Held for the promtool replay: 40 scrapes.
	for rec.count(float64(len(want))) < 40 {
		time.Sleep(200 * time.Millisecond)
	}

	st.setSeedTaint(ctx, t, auditedSeed, false)
	eventually(t, auditInterval+5*time.Second, func() error {
		if got := st.auditResults(ctx, auditedSeed, auditRule); len(got) > 0 {
			return fmt.Errorf("results after the taint went: %v", got)
		}
		if n := rec.last(); n != 0 {
			return fmt.Errorf("the metric still counts %v", n)
		}
		return nil
	})
	for time.Since(rec.lastChange()) < 3*time.Second {
		time.Sleep(200 * time.Millisecond)
	}
	rec.stop()
	st.replayAuditSeries(t, rec, len(want))
}

// shootsOn lists (namespace/name, sorted) the Shoots on seed that are not
// being deleted and tolerate no taint: the ones the taint concerns.
func (st *suite) shootsOn(ctx context.Context, t *testing.T, seed string) []string {
	t.Helper()
	var l api.ShootList
	require.NoError(t, st.c.List(ctx, &l))
	var out []string
	for _, s := range l.Items {
		if ptr.Deref(s.Spec.SeedName, "") == seed && s.DeletionTimestamp == nil &&
			!slices.ContainsFunc(s.Spec.Tolerations, func(tol api.Toleration) bool { return tol.Key == auditTaint }) {
			out = append(out, s.Namespace+"/"+s.Name)
		}
	}
	slices.Sort(out)
	return out
}

// setSeedTaint adds or removes the audit's taint on the seed.
func (st *suite) setSeedTaint(ctx context.Context, t *testing.T, name string, on bool) {
	t.Helper()
	eventually(t, 10*time.Second, func() error {
		var seed api.Seed
		if err := st.c.Get(ctx, client.ObjectKey{Name: name}, &seed); err != nil {
			return err
		}
		taints := slices.DeleteFunc(slices.Clone(seed.Spec.Taints), func(tt api.SeedTaint) bool { return tt.Key == auditTaint })
		if on {
			taints = append(taints, api.SeedTaint{Key: auditTaint})
		}
		if slices.Equal(taints, seed.Spec.Taints) {
			return nil
		}
		// A merge patch of the taints only: an Update of the typed Seed
		// would drop what internal/api does not model.
		patch := client.MergeFrom(seed.DeepCopy())
		seed.Spec.Taints = taints
		return st.c.Patch(ctx, &seed, patch)
	})
}

// auditResults are the namespace/name of the Shoots that the audit's
// Reports list for seed and rule, sorted.
func (st *suite) auditResults(ctx context.Context, seed, rule string) []string {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(audit.ReportGVK.GroupVersion().WithKind("ReportList"))
	if err := st.c.List(ctx, l, client.MatchingLabels{audit.LabelManagedBy: audit.Source}); err != nil {
		return []string{"list: " + err.Error()}
	}
	var out []string
	for _, r := range l.Items {
		results, _, _ := unstructured.NestedSlice(r.Object, "results")
		for _, x := range results {
			res, _ := x.(map[string]any)
			props, _ := res["properties"].(map[string]any)
			if res["rule"] != rule || props[audit.PropertySeed] != seed {
				continue
			}
			for _, o := range res["resources"].([]any) {
				ref := o.(map[string]any)
				out = append(out, fmt.Sprint(ref["namespace"], "/", ref["name"]))
			}
		}
	}
	slices.Sort(out)
	return out
}

// seriesRecorder scrapes seedwarden_audit_violating_shoots of one seed and
// rule every 500 ms: the value of each scrape (0: no series).
type seriesRecorder struct {
	mu      sync.Mutex
	values  []float64
	changed time.Time
	done    chan struct{}
	once    sync.Once
	stopped chan struct{}
}

func (st *suite) recordAuditSeries(seed, rule string) *seriesRecorder {
	r := &seriesRecorder{done: make(chan struct{}), stopped: make(chan struct{}), changed: time.Now()}
	go func() {
		defer close(r.stopped)
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-r.done:
				return
			case <-tick.C:
			}
			samples, err := scrape(st.metricsURL())
			if err != nil {
				continue
			}
			v := 0.0
			for _, s := range samples {
				if s.name == "seedwarden_audit_violating_shoots" && s.labels["seed"] == seed && s.labels["rule"] == rule {
					v = s.value
				}
			}
			r.mu.Lock()
			if n := len(r.values); n == 0 || r.values[n-1] != v {
				r.changed = time.Now()
			}
			r.values = append(r.values, v)
			r.mu.Unlock()
		}
	}()
	return r
}

func (r *seriesRecorder) stop() {
	r.once.Do(func() { close(r.done) })
	<-r.stopped
}

func (r *seriesRecorder) last() float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.values) == 0 {
		return -1
	}
	return r.values[len(r.values)-1]
}

func (r *seriesRecorder) count(v float64) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, x := range r.values {
		if x == v {
			n++
		}
	}
	return n
}

func (r *seriesRecorder) lastChange() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.changed
}

// replayAuditSeries writes the recorded scrapes as a promtool test (each
// scrape one minute of rule evaluation, a 0 scrape no sample: the series
// is gone then) and runs it against the shipped rules: the alert is
// pending for its 30 minutes, fires with the count, and resolves once the
// series is gone.
func (st *suite) replayAuditSeries(t *testing.T, rec *seriesRecorder, n int) {
	t.Helper()
	promtool := filepath.Join(st.root, ".cache", "tools", "bin", "promtool")
	if p := os.Getenv("SEEDWARDEN_PROMTOOL"); p != "" {
		promtool = p
	}
	if _, err := os.Stat(promtool); err != nil {
		t.Fatalf("promtool: %v (bash hack/rules/promtool.sh builds it)", err)
	}
	rec.mu.Lock()
	values := slices.Clone(rec.values)
	rec.mu.Unlock()
	first := slices.Index(values, float64(n))
	end := first + slices.Index(values[first:], 0) // the first scrape without the series
	require.Greater(t, end-first, 31, "the violation was scraped %d times; the replay needs more than the alert's 30 minutes", end-first)
	words := make([]string, len(values))
	for i, v := range values {
		words[i] = "_"
		if v != 0 {
			words[i] = fmt.Sprint(v)
		}
	}
	seriesText := strings.Join(words, " ")
	require.NoError(t, os.WriteFile(filepath.Join(st.work, "audit-series.txt"), []byte(seriesText+"\n"), 0o600))
	logf("audit: seedwarden_audit_violating_shoots{seed=%q,rule=%q}, one scrape each 500ms: %s", auditedSeed, auditRule, seriesText)

	data, err := os.ReadFile(filepath.Join(st.root, "deploy", "manifests", "prometheusrule.yaml"))
	require.NoError(t, err)
	var rule struct {
		Spec map[string]any `json:"spec"`
	}
	require.NoError(t, syaml.Unmarshal(data, &rule))
	spec, err := syaml.Marshal(rule.Spec)
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "rules.yaml"), spec, 0o600))
	desc := fmt.Sprintf("%d Shoots on seed %s break the placement rule %s (a placement reason code) for 30 minutes: a change to the seed, its CloudProfile or the Shoots since they were placed that the binding guard would refuse today. The OpenReports Report seedwarden-placement of each project namespace lists them.", n, auditedSeed, auditRule)
	test := fmt.Sprintf(`rule_files: [rules.yaml]
evaluation_interval: 1m
tests:
- interval: 1m
  input_series:
  - series: 'seedwarden_audit_violating_shoots{job="seedwarden",namespace="seedwarden",pod="seedwarden-0",seed=%q,rule=%q}'
    values: %q
  alert_rule_test:
  - eval_time: %dm
    alertname: SeedwardenPlacementViolations
    exp_alerts: []
  - eval_time: %dm
    alertname: SeedwardenPlacementViolations
    exp_alerts:
    - exp_labels: {severity: warning, seed: %q, rule: %q}
      exp_annotations:
        summary: 'Shoots on seed %s break placement rule %s'
        description: %q
        runbook_url: https://github.com/seedwarden/seedwarden/blob/main/docs/operations.md#seedwardenplacementviolations
  - eval_time: %dm
    alertname: SeedwardenPlacementViolations
    exp_alerts: []
`, auditedSeed, auditRule, seriesText, first+29, first+31, auditedSeed, auditRule, auditedSeed, auditRule, desc, end+6)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "audit.test.yaml"), []byte(test), 0o600))
	out, err := exec.Command(promtool, "test", "rules", filepath.Join(dir, "audit.test.yaml")).CombinedOutput()
	require.NoError(t, err, "promtool test rules:\n%s\n%s", out, test)
	assert.Contains(t, string(out), "SUCCESS")
	logf("audit: promtool replay of the recorded series: SeedwardenPlacementViolations pending at %dm, firing at %dm, resolved at %dm", first+29, first+31, end+6)
}
