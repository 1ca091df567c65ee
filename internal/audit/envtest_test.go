package audit

import (
	"context"
	"iter"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/metrics"
	"github.com/seedwarden/seedwarden/internal/placement"
	"github.com/seedwarden/seedwarden/internal/testenv"
)

// On a real kube-apiserver with the upstream Report CRD: the audit creates
// a report per namespace in violation (the API server accepts them), capped
// with the count of all; an unchanged audit writes nothing; a new term
// adopts the reports and writes nothing either; when the taint goes the
// reports go.
func TestEnvtestReports(t *testing.T) {
	_, cfg := testenv.Start(t, "testdata")
	ctx := context.Background()
	c, err := client.New(cfg, client.Options{})
	require.NoError(t, err)
	for _, ns := range []string{"garden-a", "garden-b"} {
		require.NoError(t, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	}
	snap := snapshot(seed("tainted", "t"), seed("plain"))
	shoots := []*api.Shoot{
		shoot("garden-a", "a1", "tainted"), shoot("garden-a", "a2", "tainted"), shoot("garden-a", "a3", "tainted"),
		shoot("garden-a", "ok", "tainted", "t"), shoot("garden-b", "b1", "tainted"), shoot("garden-b", "b2", "plain"),
	}
	reg := prometheus.NewRegistry()
	now := time.Unix(1700000000, 0)
	newReconciler := func() *Reconciler {
		return &Reconciler{
			Client: c, Reader: c, Limit: 2, Interval: time.Minute,
			Snapshot: func() *placement.Snapshot { return snap },
			Shoots:   func() iter.Seq[*cache.ReducedShoot] { return reduced(t, shoots...) },
			Metrics:  metrics.New(reg, metrics.GroupAudit), Log: testr.New(t),
			Now: func() time.Time { return now },
		}
	}
	r := newReconciler()
	require.NoError(t, r.adopt(ctx))
	f, err := r.Audit(ctx)
	require.NoError(t, err)
	assert.Len(t, f.Results, 4)

	a := getReport(ctx, t, c, "garden-a")
	assert.Equal(t, int64(3), nested(t, a, "summary", "fail"), "the summary counts all")
	results, _, _ := unstructured.NestedSlice(a.Object, "results")
	require.Len(t, results, 2, "the report lists resultsLimit")
	res := results[0].(map[string]any)
	assert.Equal(t, "TaintNotTolerated", res["rule"])
	assert.Equal(t, "fail", res["result"])
	assert.Equal(t, "a1", res["resources"].([]any)[0].(map[string]any)["name"])
	assert.Equal(t, int64(1), nested(t, getReport(ctx, t, c, "garden-b"), "summary", "fail"))
	assert.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP seedwarden_audit_violating_shoots Shoots whose seed breaks a placement rule today, by seed and rule (a placement reason code), as of the last audit.
# TYPE seedwarden_audit_violating_shoots gauge
seedwarden_audit_violating_shoots{rule="TaintNotTolerated",seed="tainted"} 4
`), metrics.AuditViolatingShootsName))

	// Unchanged: no write, from this term or a new one that adopts.
	rv := a.GetResourceVersion()
	now = now.Add(time.Minute)
	_, err = r.Audit(ctx)
	require.NoError(t, err)
	r2 := newReconciler()
	require.NoError(t, r2.adopt(ctx))
	_, err = r2.Audit(ctx)
	require.NoError(t, err)
	assert.Equal(t, rv, getReport(ctx, t, c, "garden-a").GetResourceVersion(), "written without a change")

	// One Shoot tolerates now: garden-b's report goes, garden-a's changes.
	shoots[4] = shoot("garden-b", "b1", "tainted", "t")
	_, err = r2.Audit(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(3), nested(t, getReport(ctx, t, c, "garden-a"), "summary", "fail"))
	assertNoReport(ctx, t, c, "garden-b")

	// The taint goes: every report goes, the metric is empty.
	snap = snapshot(seed("tainted"), seed("plain"))
	f, err = r2.Audit(ctx)
	require.NoError(t, err)
	assert.Empty(t, f.Results)
	assertNoReport(ctx, t, c, "garden-a")
	assert.Zero(t, testutil.CollectAndCount(reg, metrics.AuditViolatingShootsName))
}

func getReport(ctx context.Context, t *testing.T, c client.Client, ns string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(ReportGVK)
	require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: ns, Name: ReportName}, u))
	return u
}

func assertNoReport(ctx context.Context, t *testing.T, c client.Client, ns string) {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(ReportGVK)
	err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: ReportName}, u)
	assert.True(t, client.IgnoreNotFound(err) == nil && err != nil, "report %s/%s: %v", ns, ReportName, err)
}

func nested(t *testing.T, u *unstructured.Unstructured, fields ...string) int64 {
	t.Helper()
	v, ok, err := unstructured.NestedInt64(u.Object, fields...)
	require.NoError(t, err)
	require.True(t, ok, "%v", fields)
	return v
}

// Without the Report CRD the audit waits and says so: it never returns an
// error, which would end the term of all the leader-only work (the retry
// controller's too). Once the CRD is there, it writes its reports.
func TestEnvtestRunWaitsForTheCRD(t *testing.T) {
	_, cfg := testenv.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := client.New(cfg, client.Options{})
	require.NoError(t, err)
	require.NoError(t, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "garden-a"}}))
	snap := snapshot(seed("tainted", "t"))
	r := &Reconciler{
		Client: c, Reader: c, Limit: 10, Interval: 100 * time.Millisecond,
		Snapshot: func() *placement.Snapshot { return snap },
		Shoots:   func() iter.Seq[*cache.ReducedShoot] { return reduced(t, shoot("garden-a", "a", "tainted")) },
		Log:      testr.New(t),
	}
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	time.Sleep(time.Second) // ten intervals without the CRD
	select {
	case err := <-done:
		t.Fatalf("Run returned without the CRD: %v", err)
	default:
	}
	_, err = envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{Paths: []string{"testdata"}})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(ReportGVK)
		return c.Get(ctx, client.ObjectKey{Namespace: "garden-a", Name: ReportName}, u) == nil
	}, 30*time.Second, 100*time.Millisecond, "no report once the CRD is installed")
	cancel()
	require.NoError(t, <-done)
}
