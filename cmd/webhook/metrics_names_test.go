package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/seedwarden/seedwarden/internal/autoscaler"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/certwatch"
	"github.com/seedwarden/seedwarden/internal/config"
	"github.com/seedwarden/seedwarden/internal/handlers"
	"github.com/seedwarden/seedwarden/internal/metrics"
	"github.com/seedwarden/seedwarden/internal/operationsapi"
	"github.com/seedwarden/seedwarden/internal/testenv"
)

// The shipped dashboard and alerts, whose metric names must exist.
const (
	dashboardPath      = "../../deploy/grafana/seedwarden-dashboard.json"
	prometheusRulePath = "../../deploy/manifests/prometheusrule.yaml"
	runbooksPath       = "../../docs/operations.md"
)

// clusterOnlyMetrics are registered only against a cluster, by the parts
// that need one; TestMetricNamesCluster checks them there.
var clusterOnlyMetrics = map[string]string{
	metrics.PendingShootsName:              "the retry controller (GroupPending)",
	metrics.PendingOldestAgeName:           "the retry controller (GroupPending)",
	metrics.SchedulingRetriesName:          "the retry controller (GroupPending)",
	metrics.RetryControllerLeaderName:      "the retry controller (GroupPending)",
	"leader_election_master_status":        "controller-runtime's leader election of the retry controller",
	metrics.ReservationDurationName:        "capacity.coordination apiserver (GroupReservations)",
	metrics.ReservationConflictsName:       "capacity.coordination apiserver (GroupReservations)",
	metrics.ReservationBatchSizeName:       "capacity.coordination apiserver (GroupReservations)",
	metrics.CertificateReadyName:           "the certificate watch (GroupCertificates)",
	metrics.CertificateExpiryTimestampName: "the certificate watch (GroupCertificates)",
	metrics.CacheStaleSecondsName:          "the informer cache",
	metrics.CacheMaxStalenessName:          "the informer cache",
	metrics.AutoscalerCurrentReplicasName:  "the SeedAutoscaler controller (GroupAutoscaler), per SeedAutoscaler",
	metrics.AutoscalerDesiredReplicasName:  "the SeedAutoscaler controller (GroupAutoscaler), per SeedAutoscaler",
	metrics.AutoscalerShortName:            "the SeedAutoscaler controller (GroupAutoscaler), per SeedAutoscaler",
	metrics.AutoscalerReplicasNotReadyName: "the SeedAutoscaler controller (GroupAutoscaler), per SeedAutoscaler",
	metrics.SeedDrainShootsName:            "the SeedDrain controller (GroupSeedDrain), per SeedDrain",
	metrics.SeedDrainLastProgressName:      "the SeedDrain controller (GroupSeedDrain), per SeedDrain",
	metrics.AuditViolatingShootsName:       "the placement audit (GroupAudit), per seed and rule in violation",
	metrics.AuditLastRunName:               "the placement audit (GroupAudit), after its first audit",
	metrics.AuditDurationName:              "the placement audit (GroupAudit), after its first audit",
}

// eventOnlyMetrics have no series until an event that these tests do not
// cause; the test named checks each on the server.
var eventOnlyMetrics = map[string]string{
	// A TLS handshake refused by server.clientAuth.
	metrics.ClientRejectionsTotalName: "TestServeClientAuthentication",
}

// clusterChildEnv marks the process TestMetricNamesCluster starts.
const clusterChildEnv = "SEEDWARDEN_METRIC_NAMES_CLUSTER_CHILD"

// targetLabels are the labels Prometheus (and the Prometheus Operator) set
// on every scraped series: a metric's own label of that name would become
// exported_<name>.
var targetLabels = []string{"namespace", "pod", "job", "instance", "service", "container", "endpoint", "node"}

var metricNameRE = regexp.MustCompile(`\b(?:seedwarden|controller_runtime|leader_election)_[a-z0-9_]+\b`)

// referencedMetrics are the metric names the dashboard's queries, the
// alerts' expressions and the runbooks' PromQL read.
func referencedMetrics(t *testing.T) []string {
	t.Helper()
	var exprs []string
	data, err := os.ReadFile(dashboardPath)
	require.NoError(t, err)
	var dash struct {
		Panels []struct {
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	require.NoError(t, json.Unmarshal(data, &dash))
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
		}
	}
	data, err = os.ReadFile(prometheusRulePath)
	require.NoError(t, err)
	var rule struct {
		Spec struct {
			Groups []struct {
				Rules []struct {
					Expr string `json:"expr"`
				} `json:"rules"`
			} `json:"groups"`
		} `json:"spec"`
	}
	require.NoError(t, yaml.Unmarshal(data, &rule))
	for _, g := range rule.Spec.Groups {
		for _, r := range g.Rules {
			exprs = append(exprs, r.Expr)
		}
	}
	data, err = os.ReadFile(runbooksPath)
	require.NoError(t, err)
	exprs = append(exprs, promqlBlocks(string(data))...)
	var names []string
	for _, e := range exprs {
		for _, n := range metricNameRE.FindAllString(e, -1) {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	slices.Sort(names)
	require.NotEmpty(t, names)
	return names
}

// promqlBlocks are the ```promql code blocks of a Markdown document.
func promqlBlocks(doc string) []string {
	var out []string
	for _, part := range strings.Split(doc, "```promql\n")[1:] {
		block, _, _ := strings.Cut(part, "```")
		out = append(out, block)
	}
	return out
}

// families maps each metric family of a text exposition to its type.
func families(text string) map[string]string {
	out := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 4 && f[0] == "#" && f[1] == "TYPE" {
			out[f[2]] = f[3]
		}
	}
	return out
}

// served reports whether name is a family of fams, or a histogram's
// (summary's) _bucket, _sum or _count series.
func served(fams map[string]string, name string) bool {
	if _, ok := fams[name]; ok {
		return true
	}
	for suffix, types := range map[string][]string{"_bucket": {"histogram"}, "_sum": {"histogram", "summary"}, "_count": {"histogram", "summary"}} {
		if base, ok := strings.CutSuffix(name, suffix); ok && slices.Contains(types, fams[base]) {
			return true
		}
	}
	return false
}

// histogramBase is name without a histogram's series suffix.
func histogramBase(name string) string {
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok {
			return base
		}
	}
	return name
}

// checkConventions checks seedwarden's metrics in a scrape against the
// Prometheus naming conventions: promlint (counters end in _total, base
// units, snake_case, help text), no label that clashes with a target
// label, ratios end in _ratio, timestamps in _timestamp_seconds.
func checkConventions(t *testing.T, text string) {
	t.Helper()
	var ours strings.Builder
	for line := range strings.Lines(text) {
		name := line
		if f := strings.Fields(line); len(f) > 2 && f[0] == "#" {
			name = f[2]
		}
		if strings.HasPrefix(name, "seedwarden_") {
			ours.WriteString(line)
		}
	}
	problems, err := promlint.New(strings.NewReader(ours.String())).Lint()
	require.NoError(t, err)
	assert.Empty(t, problems, "promlint")

	labelRE := regexp.MustCompile(`^(seedwarden_[a-z0-9_]+)\{(.*)\} `)
	for line := range strings.Lines(ours.String()) {
		m := labelRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		for pair := range strings.SplitSeq(m[2], ",") {
			label, _, _ := strings.Cut(pair, "=")
			assert.NotContains(t, targetLabels, label, "%s has label %q, which clashes with a target label", m[1], label)
		}
	}
	helpRE := regexp.MustCompile(`(?m)^# HELP (seedwarden_[a-z0-9_]+) (.*)$`)
	for _, m := range helpRE.FindAllStringSubmatch(ours.String(), -1) {
		name, help := m[1], strings.ToLower(m[2])
		if strings.Contains(help, "divided by") || strings.HasSuffix(name, "_ratio") {
			assert.True(t, strings.HasSuffix(name, "_ratio"), "%s is a ratio: its name ends in _ratio", name)
		}
		if strings.Contains(help, "unix seconds") {
			assert.True(t, strings.HasSuffix(name, "_timestamp_seconds"), "%s is a timestamp: its name ends in _timestamp_seconds", name)
		}
	}
}

// TestMetricNamesLandscape starts the server on a landscape file with
// every part that runs without a cluster (validating webhooks, headroom
// profiles with alertBelow, scoring, a reservation limit), causes each kind
// of event once, and checks that every metric the dashboard and the alerts
// read is served (or registered only against a cluster), and that names
// follow the conventions.
func TestMetricNamesLandscape(t *testing.T) {
	certDir := devCertDir(t)
	keyFile := placementKeyFile(t)
	port, metricsPort, healthPort := freePort(t), freePort(t), freePort(t)
	cfg := writeFile(t, "config.yaml", configHeader+fmt.Sprintf(`
server: {port: %d, certDir: %s}
metrics: {bindAddress: "127.0.0.1:%d", seedLabels: [environment]}
health: {bindAddress: "127.0.0.1:%d"}
placement: {keyFile: %s}
scoring: {scorers: [{name: LeastAllocated, weight: 1}]}
reservations: {maxPerNamespace: 1}
resourceSize:
  limits:
  - {apiGroups: [core.gardener.cloud], apiVersions: ["*"], resources: [shoots], size: 2Ki}
headroom: {interval: 1s, profiles: [{name: eu, alertBelow: 5, shoot: %s}]}
`, port, certDir, metricsPort, healthPort, keyFile, yamlToJSON(t, "../../examples/shoot.yaml")))
	srv := startLandscape(t, cfg, healthPort)
	defer srv.stopAndWait(t, 30*time.Second)
	client := devClient(t, certDir)
	url := func(path string) string { return fmt.Sprintf("https://localhost:%d%s", port, path) }
	jane := authenticationv1.UserInfo{Username: "jane.doe@example.com", Groups: []string{"system:authenticated"}}
	shoot := yamlToJSON(t, "../../examples/shoot.yaml")

	// Two placements in one namespace: the second reservation is refused
	// by reservations.maxPerNamespace.
	send(t, client, url(handlers.MutateShootsPath), "uid-1", admissionv1.Create, "", shoot, nil, jane)
	other := []byte(strings.Replace(string(shoot), `"name":"webshop"`, `"name":"webshop-2"`, 1))
	send(t, client, url(handlers.MutateShootsPath), "uid-2", admissionv1.Create, "", other, nil, jane)
	send(t, client, url(handlers.WebhookBindingPath), "uid-3", admissionv1.Create, "", setSeed(t, shoot, "aws-eu1"), nil, jane)
	big := []byte(strings.Replace(string(shoot), `"purpose":"evaluation"`, `"purpose":"evaluation","x":"`+strings.Repeat("x", 3000)+`"`, 1))
	send(t, client, url(handlers.WebhookResourceSizePath), "uid-4", admissionv1.Create, "", big, nil, jane)

	metricsURL := fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort)
	var text string
	require.Eventually(t, func() bool {
		text = body(t, metricsURL)
		return served(families(text), metrics.HeadroomShootsName)
	}, 15*time.Second, 50*time.Millisecond, "no headroom exported")
	fams := families(text)
	for _, name := range referencedMetrics(t) {
		if reason, ok := clusterOnlyMetrics[histogramBase(name)]; ok {
			t.Logf("%s: only against a cluster (%s)", name, reason)
			continue
		}
		if test, ok := eventOnlyMetrics[name]; ok {
			t.Logf("%s: no series without its event (checked by %s)", name, test)
			continue
		}
		assert.True(t, served(fams, name), "the dashboard or an alert reads %s, which the server does not serve", name)
	}
	checkConventions(t, text)
}

// TestMetricNamesCluster starts the server against a kube-apiserver with
// the parts that need one (retry controller with leader election, capacity
// reservations through the API server, the certificate watch, the informer
// cache) and checks that the metrics only they register are served, by
// the conventions.
//
// controller-runtime allows one controller of a name per process, and
// TestServeCluster runs the retry controller: this test runs in a process
// of its own (the test binary again).
func TestMetricNamesCluster(t *testing.T) {
	if ranInChild(t) {
		return
	}
	env, restCfg := testenv.Start(t, "../../e2e/crds", "../../internal/certwatch/testdata/crds",
		"../../deploy/manifests/crd-seedautoscalers.yaml", "../../internal/autoscaler/testdata", "../../deploy/manifests/crd-seeddrains.yaml",
		"../../internal/audit/testdata")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	scheme := cache.NewScheme()
	require.NoError(t, certwatch.AddToScheme(scheme))
	require.NoError(t, autoscaler.AddToScheme(scheme))
	c, err := client.New(restCfg, client.Options{Scheme: scheme})
	require.NoError(t, err)
	createLandscape(ctx, t, c, "garden", "garden-dev", "seedwarden")
	_ = createReadyCertificate(ctx, t, c)
	createSeedAutoscaler(ctx, t, c, "garden")
	// A drain of a seed the landscape does not have: nothing to move and
	// nothing cordoned, but its series.
	require.NoError(t, c.Create(ctx, &operationsapi.SeedDrain{ObjectMeta: metav1.ObjectMeta{Name: "drain-gone"},
		Spec: operationsapi.SeedDrainSpec{SeedName: "no-such-seed"}}))
	// A Shoot bound to a seed that is gone, for the audit.
	orphan := &unstructured.Unstructured{}
	require.NoError(t, orphan.UnmarshalJSON(yamlToJSON(t, "../../examples/shoot.yaml")))
	orphan.SetName("orphan")
	require.NoError(t, unstructured.SetNestedField(orphan.Object, "no-such-seed", "spec", "seedName"))
	require.NoError(t, c.Create(ctx, orphan))
	// A Shoot no seed fits, for the retry controller.
	pending := &unstructured.Unstructured{}
	require.NoError(t, pending.UnmarshalJSON(yamlToJSON(t, "../../examples/shoot-unschedulable.yaml")))
	require.NoError(t, c.Create(ctx, pending))

	certDir := devCertDir(t)
	port, metricsPort, healthPort := freePort(t), freePort(t), freePort(t)
	cfg := writeFile(t, "config.yaml", configHeader+fmt.Sprintf(`
server: {port: %d, certDir: %s}
metrics: {bindAddress: "127.0.0.1:%d"}
health: {bindAddress: "127.0.0.1:%d"}
placement: {keyFile: %s, mode: patch}
schedulerName: default-scheduler
certificate: {namespace: seedwarden, name: seedwarden-webhook}
capacity: {coordination: apiserver}
pendingShoots: {bindMode: update}
leaderElection: {namespace: seedwarden}
autoscaler: {enabled: true, dryRun: true, syncPeriod: 1s}
seedDrain: {enabled: true, syncPeriod: 1s}
audit: {enabled: true, interval: 10s}
`, port, certDir, metricsPort, healthPort, placementKeyFile(t)))
	t.Setenv(config.PodNamespaceEnv, "seedwarden")
	srv := startCluster(ctx, t, cfg, adminKubeconfig(t, env), healthPort)
	defer srv.stopAndWait(t, 30*time.Second)
	// A placement reserves through the API server.
	jane := authenticationv1.UserInfo{Username: "jane.doe@example.com", Groups: []string{"system:authenticated"}}
	resp := send(t, devClient(t, certDir), fmt.Sprintf("https://localhost:%d%s", port, handlers.MutateShootsPath), "uid-1", admissionv1.Create, "", yamlToJSON(t, "../../examples/shoot.yaml"), nil, jane)
	require.True(t, resp.Allowed, "%+v", resp.Result)

	metricsURL := fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort)
	var text string
	var missing []string
	require.Eventually(t, func() bool {
		text = body(t, metricsURL)
		fams := families(text)
		missing = missing[:0]
		for name := range clusterOnlyMetrics {
			if !served(fams, name) {
				missing = append(missing, name)
			}
		}
		return len(missing) == 0
	}, 30*time.Second, 100*time.Millisecond, "not served against a cluster: %v", &missing)
	assert.Regexp(t, `(?m)^`+metrics.RetryControllerLeaderName+` 1$`, text, "this replica leads")
	assert.Regexp(t, `(?m)^`+metrics.CacheMaxStalenessName+` 30$`, text, "cache.maxStaleness's default")
	checkConventions(t, text)
}

// ranInChild runs the test in a new process of the test binary unless
// this is that process; it reports whether it did.
func ranInChild(t *testing.T) bool {
	t.Helper()
	if os.Getenv(clusterChildEnv) != "" {
		return false
	}
	testenv.RequireAssets(t)
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), clusterChildEnv+"=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "--- PASS: "+t.Name(), "%s", out)
	return true
}

// createReadyCertificate creates the serving certificate's Certificate,
// ready and expiring in 90 days, as cert-manager would, and returns its
// notAfter.
func createReadyCertificate(ctx context.Context, t *testing.T, c client.Client) metav1.Time {
	t.Helper()
	notAfter := metav1.NewTime(time.Now().Add(90 * 24 * time.Hour).Truncate(time.Second))
	cert := &cmv1.Certificate{
		ObjectMeta: metav1.ObjectMeta{Namespace: "seedwarden", Name: "seedwarden-webhook"},
		Spec: cmv1.CertificateSpec{
			SecretName: "seedwarden-webhook-tls",
			DNSNames:   []string{"seedwarden.seedwarden.svc"},
			IssuerRef:  cmmeta.IssuerReference{Name: "seedwarden-ca", Kind: "Issuer"},
		},
	}
	require.NoError(t, c.Create(ctx, cert))
	cert.Status = cmv1.CertificateStatus{
		NotAfter:   &notAfter,
		Conditions: []cmv1.CertificateCondition{{Type: cmv1.CertificateConditionReady, Status: cmmeta.ConditionTrue, Reason: "Ready"}},
	}
	require.NoError(t, c.Status().Update(ctx, cert))
	return notAfter
}
