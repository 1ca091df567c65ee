package install

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// Prometheus jobs besides the ServiceMonitor's: the same scrape refused
// three ways, and cert-manager's controller.
const (
	jobNoToken     = "refused-no-token"
	jobNoRBAC      = "refused-no-rbac"
	jobWrongCA     = "refused-wrong-ca"
	jobCertManager = "cert-manager"
)

// promInstall is the kustomize base installed, its pod running, and a
// Prometheus scraping it as the ServiceMonitor says, with the shipped rules.
type promInstall struct {
	e    *env
	in   *installation
	objs []*unstructured.Unstructured
	pod  *pod
	prom *promServer
	job  string
}

// TestPrometheus runs Prometheus v0.316.0 (hack/rules/promtool.sh
// prometheus) against the installed kustomize base with the real
// cert-manager: the ServiceMonitor's scrape and the PrometheusRule as
// shipped. The subtests run in order on one installation.
func TestPrometheus(t *testing.T) {
	need(t)
	pi := startPrometheusInstall(t)
	t.Run("ServiceMonitorTargetUp", pi.targetUp)
	t.Run("RefusedScrapes", pi.refusedScrapes)
	t.Run("DocumentedMetrics", pi.documentedMetrics)
	t.Run("RulesHealthy", pi.rulesHealthy)
	t.Run("CertificateSeriesAgainstCertManager", pi.certificateSeries)
	t.Run("NoLeaderPendingFiringResolved", pi.noLeaderCycle)
	t.Run("SeedwardenDownPendingWhenStopped", pi.downPending)
}

// startPrometheusInstall installs, starts the pod and Prometheus.
func startPrometheusInstall(t *testing.T) *promInstall {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	binary, err := fromEnvOrScript("SEEDWARDEN_E2E_PROMETHEUS", "hack/rules/promtool.sh", "prometheus")
	must(t, err)
	pi := &promInstall{e: newEnv(t)}
	pi.in = pi.e.install(t, renderingBase, readRendering(t, renderingBase))
	pi.objs, pi.pod = pi.in.objs, pi.in.pod
	dir := filepath.Join(pi.e.dir, "prometheus")
	must(t, os.MkdirAll(dir, 0o755))

	// An identity without the metrics RBAC: a ServiceAccount of its own.
	_, err = pi.e.cs.CoreV1().ServiceAccounts(pi.pod.namespace).Create(ctx,
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "no-metrics-rbac"}}, metav1.CreateOptions{})
	must(t, err)
	ca := writeServiceMonitorCA(ctx, t, pi.e, pi.objs, dir)
	scraper := writeToken(ctx, t, pi.e, pi.pod.namespace, "seedwarden-metrics", dir)
	var jobs []promScrape
	pi.job, jobs = serviceMonitorJobs(t, pi.objs, pi.e.proxy.tcpURL(t), "seedwarden-0", []scrapeIdentity{
		{tokenFile: scraper, caFile: ca},
		{job: jobNoToken, caFile: ca},
		{job: jobNoRBAC, tokenFile: writeToken(ctx, t, pi.e, pi.pod.namespace, "no-metrics-rbac", dir), caFile: ca},
		{job: jobWrongCA, tokenFile: scraper, caFile: writeOtherCA(t, dir)},
	})
	jobs = append(jobs, promScrape{JobName: jobCertManager, StaticConfigs: []promStatic{{Targets: []string{strings.TrimSuffix(strings.TrimPrefix(pi.e.cm.controllerMetrics, "http://"), "/metrics")}}}})
	rules := filepath.Join(dir, "seedwarden-rules.yaml")
	must(t, os.WriteFile(rules, shippedRuleGroups(t, pi.objs), 0o600))
	cfg, err := promConfig(rules, jobs)
	must(t, err)
	pi.prom = startPrometheus(ctx, t, binary, dir, cfg)
	return pi
}

// shippedRuleGroups is the installed PrometheusRule's spec as a rule file,
// unchanged.
func shippedRuleGroups(t *testing.T, objs []*unstructured.Unstructured) []byte {
	t.Helper()
	rules := selectObjects(objs, ofKind("PrometheusRule"))
	if len(rules) != 1 {
		t.Fatalf("%d PrometheusRules in the installation", len(rules))
	}
	spec, ok := rules[0].Object["spec"]
	if !ok {
		t.Fatal("the PrometheusRule has no spec")
	}
	out, err := yaml.Marshal(spec)
	must(t, err)
	return out
}

// targetUp: the ServiceMonitor's scrape succeeds, with the metrics-scraper
// ServiceAccount's token, the CA of its Secret and its server name, through
// the Service's name. Breaking the metrics RBAC (metrics-scraper.yaml's
// ClusterRoleBinding, the ClusterRole) makes it fail with 403.
func (pi *promInstall) targetUp(t *testing.T) {
	eventually(t, time.Minute, promInterval, func() error {
		tg, err := pi.prom.target(pi.job)
		if err != nil {
			return err
		}
		if tg.Health != "up" {
			return fmt.Errorf("target %s: %s: %s", tg.ScrapeURL, tg.Health, tg.LastError)
		}
		return nil
	}, "the ServiceMonitor's target up")
	up, err := pi.prom.query(fmt.Sprintf(`up{job=%q}`, pi.job))
	must(t, err)
	if len(up) != 1 || up[0].float() != 1 {
		t.Fatalf("up{job=%q} = %v, want one sample 1", pi.job, up)
	}
}

// refusedScrapes: no token is 401, a token without the RBAC 403, a CA
// that did not sign the serving certificate an x509 error.
func (pi *promInstall) refusedScrapes(t *testing.T) {
	for job, want := range map[string]*regexp.Regexp{
		jobNoToken: regexp.MustCompile(`server returned HTTP status 401 Unauthorized`),
		jobNoRBAC:  regexp.MustCompile(`server returned HTTP status 403 Forbidden`),
		jobWrongCA: regexp.MustCompile(`x509: certificate signed by unknown authority`),
	} {
		eventually(t, 30*time.Second, promInterval, func() error {
			tg, err := pi.prom.target(job)
			if err != nil {
				return err
			}
			if tg.Health != "down" || !want.MatchString(tg.LastError) {
				return fmt.Errorf("target of %s: %s, last error %q; want down with %s", job, tg.Health, tg.LastError, want)
			}
			return nil
		}, job+" refused")
	}
}

// documentedMetrics: every seedwarden_ series Prometheus holds is a
// metric of docs/metrics.md, and every metric there is exported by the
// installation once a Shoot has been placed through the API server and a
// client without a certificate refused, but those of notYetObserved. Before
// that refusal there is no client-rejection series at all, though the
// readiness probe has run every 200ms since the pod started (issue 37).
func (pi *promInstall) documentedMetrics(t *testing.T) {
	documented := documentedMetricNames(t)
	rejections := fmt.Sprintf(`seedwarden_webhook_client_rejections_total{job=%q}`, pi.job)
	if res, err := pi.prom.query(rejections); err != nil || len(res) != 0 {
		t.Errorf("%s before any client was refused: %v (%v)", rejections, res, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	seed, err := pi.e.createShoot(ctx, "prometheus-metrics")
	must(t, err)
	if seed == "" {
		t.Fatal("the Shoot was not placed")
	}
	forged := tlsThroughProxy(t, pi.e.proxy.tcpURL(t), pi.in.serviceHost()+":443", nil)
	if err := forged.Handshake(); err == nil {
		_, err = forged.Read(make([]byte, 1)) // TLS 1.3: the refusal comes after the client's flight
		if err == nil {
			t.Fatal("the webhook port answered a client without a certificate")
		}
	}
	var exported map[string]bool
	eventually(t, 30*time.Second, promInterval, func() error {
		res, err := pi.prom.query(fmt.Sprintf(`group by (__name__) ({job=%q, __name__=~"seedwarden_.+"})`, pi.job))
		if err != nil {
			return err
		}
		exported = map[string]bool{}
		for _, s := range res {
			exported[metricBase(s.Metric["__name__"], documented)] = true
		}
		for _, want := range []string{"seedwarden_scheduling_decisions_total", "seedwarden_webhook_client_rejections_total"} {
			if !exported[want] {
				return fmt.Errorf("%s not scraped yet", want)
			}
		}
		return nil
	}, "the Shoot's and the refusal's series in Prometheus")
	res, err := pi.prom.query(rejections)
	must(t, err)
	if len(res) != 1 || res[0].Metric["reason"] != "missing" || res[0].float() != 1 {
		t.Errorf("%s after one client without a certificate: %v, want reason missing 1", rejections, res)
	}
	var undocumented, missing []string
	for name := range exported {
		if !documented[name] {
			undocumented = append(undocumented, name)
		}
	}
	for name := range documented {
		if !exported[name] && notYetObserved(name) == "" {
			missing = append(missing, name)
		}
	}
	sort.Strings(undocumented)
	sort.Strings(missing)
	if len(undocumented) > 0 {
		t.Errorf("exported but not in docs/metrics.md: %v", undocumented)
	}
	if len(missing) > 0 {
		t.Errorf("in docs/metrics.md but not exported by the installation: %v", missing)
	}
	for name := range documented {
		if r := notYetObserved(name); r != "" && !exported[name] {
			t.Logf("not exported here: %s: %s", name, r)
		}
	}
	t.Logf("%d documented metrics, %d exported by the installation", len(documented), len(exported))
}

// notYetObserved says why the documented metric name is not exported by
// this installation ("": it must be): the parts the base's configuration
// leaves off export nothing (docs/metrics.md), and counters with labels
// have no series before their first count.
func notYetObserved(name string) string {
	for prefix, part := range map[string]string{
		"seedwarden_autoscaler_": "autoscaler.enabled is false in the base",
		"seedwarden_headroom_":   "the base configures no headroom profile",
		"seedwarden_seeddrain_":  "seedDrain.enabled is false in the base",
		"seedwarden_audit_":      "audit.enabled is false in the base",
	} {
		if strings.HasPrefix(name, prefix) {
			return "part off: " + part
		}
	}
	return map[string]string{
		"seedwarden_rejected_resources_total":              "counts writes refused for their size; none here",
		"seedwarden_reservations_expired_total":            "counts reservations ended by time; none within this test",
		"seedwarden_reservations_refused_total":            "counts reservations over a limit; none here",
		"seedwarden_scheduling_retries_total":              "counts the retry controller's attempts, which start only when a bind of the announced seed is retried",
		"seedwarden_validations_total":                     "counts the validating webhooks' answers; they see the test's Shoot only at its bind, and this env's CRD-served Shoots have no binding subresource",
		"seedwarden_leadership_terms_ended_total":          "counts ended terms; none before NoLeaderPendingFiringResolved, which checks it",
		"seedwarden_capacity_reservation_duration_seconds": "observed on cluster-wide reservations; a histogram vector without a sample before the first",
		"seedwarden_guard_refusals_total":                  "counts requests a guard's rules refuse; none here",
		"seedwarden_pending_shoots_unschedulable":          "pending Shoots per reason code, on the leader; no Shoot here waits for a seed",
	}[name]
}

// documentedMetricNames are the metric names of docs/metrics.md's tables.
func documentedMetricNames(t *testing.T) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(tools.root, "docs", "metrics.md"))
	must(t, err)
	out := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `(seedwarden_[a-z0-9_]+)`").FindAllStringSubmatch(string(data), -1) {
		out[m[1]] = true
	}
	if len(out) == 0 {
		t.Fatal("no metric in docs/metrics.md")
	}
	return out
}

// metricBase is name without a histogram's or summary's suffix when the
// name without it is documented.
func metricBase(name string, documented map[string]bool) string {
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok && documented[base] {
			return base
		}
	}
	return name
}

// rulesHealthy: Prometheus loaded every shipped rule and evaluates each
// without error.
func (pi *promInstall) rulesHealthy(t *testing.T) {
	var shipped struct {
		Groups []struct {
			Rules []struct {
				Alert  string `json:"alert"`
				Record string `json:"record"`
			} `json:"rules"`
		} `json:"groups"`
	}
	must(t, yaml.Unmarshal(shippedRuleGroups(t, pi.objs), &shipped))
	var want []string
	for _, g := range shipped.Groups {
		for _, r := range g.Rules {
			want = append(want, r.Alert+r.Record)
		}
	}
	slices.Sort(want)
	eventually(t, 30*time.Second, promInterval, func() error {
		rules, err := pi.prom.rules()
		if err != nil {
			return err
		}
		var got []string
		for _, r := range rules {
			got = append(got, r.Name)
			if r.LastEvaluation.IsZero() {
				return fmt.Errorf("rule %s not evaluated yet", r.Name)
			}
			if r.Health != "ok" {
				return fmt.Errorf("rule %s: health %s: %s", r.Name, r.Health, r.LastError)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			return fmt.Errorf("rules loaded %v, shipped %v", got, want)
		}
		return nil
	}, "every shipped rule loaded and healthy")
}

// noLeaderCycle: SeedwardenRetryControllerNoLeader (for: 5m, as shipped)
// for a real cause: another holder takes the retry controller's Lease, so
// the replica cannot lead; pending at once, firing after its `for`,
// resolved once the Lease is free again and the replica leads.
func (pi *promInstall) noLeaderCycle(t *testing.T) {
	const alert = "SeedwardenRetryControllerNoLeader"
	ctx := context.Background()
	leases := pi.e.cs.CoordinationV1().Leases(pi.pod.namespace)
	const leaseName = "seedwarden-pending-shoots"
	if st, err := pi.prom.alertState(alert); err != nil || st != "inactive" {
		t.Fatalf("%s before the cause: %s (%v)", alert, st, err)
	}
	holder, hour := "intruder", int32(3600)
	eventually(t, 30*time.Second, 200*time.Millisecond, func() error {
		l, err := leases.Get(ctx, leaseName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		now := metav1.NewMicroTime(time.Now())
		l.Spec.HolderIdentity, l.Spec.LeaseDurationSeconds, l.Spec.RenewTime, l.Spec.AcquireTime = &holder, &hour, &now, &now
		_, err = leases.Update(ctx, l, metav1.UpdateOptions{})
		return err
	}, "the Lease taken by another holder")
	caused := time.Now()
	pending := pi.prom.waitAlert(t, alert, "pending", time.Minute)
	firing := pi.prom.waitAlert(t, alert, "firing", 6*time.Minute)
	if d := firing.Sub(pending); d < 5*time.Minute-promInterval {
		t.Errorf("%s firing %s after pending, before its for: 5m", alert, d.Round(time.Second))
	}
	must(t, leases.Delete(ctx, leaseName, metav1.DeleteOptions{}))
	released := time.Now()
	resolved := pi.prom.waitAlert(t, alert, "inactive", time.Minute)
	ended, err := pi.prom.query(fmt.Sprintf(`seedwarden_leadership_terms_ended_total{job=%q, reason="lease_lost"}`, pi.job))
	must(t, err)
	if len(ended) != 1 || ended[0].float() < 1 {
		t.Errorf("seedwarden_leadership_terms_ended_total{reason=\"lease_lost\"} after the Lease was taken: %v", ended)
	}
	t.Logf("%s: pending %s after the Lease was taken, firing %s later, resolved %s after it was freed",
		alert, pending.Sub(caused).Round(time.Second), firing.Sub(pending).Round(time.Second), resolved.Sub(released).Round(time.Second))
}

// downPending: with the server stopped, its target goes down and
// SeedwardenDown is pending (it fires after its for: 5m).
func (pi *promInstall) downPending(t *testing.T) {
	const alert = "SeedwardenDown"
	if st, err := pi.prom.alertState(alert); err != nil || st != "inactive" {
		t.Fatalf("%s while seedwarden runs: %s (%v)", alert, st, err)
	}
	stopped := time.Now()
	_, _, err := pi.pod.proc.Stop(30 * time.Second)
	must(t, err)
	pending := pi.prom.waitAlert(t, alert, "pending", time.Minute)
	t.Logf("%s pending %s after the server was stopped", alert, pending.Sub(stopped).Round(time.Second))
}

func timeNow() time.Time { return time.Now() }
