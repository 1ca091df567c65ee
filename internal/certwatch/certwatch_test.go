package certwatch

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/cache/informertest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/seedwarden/seedwarden/internal/metrics"
)

const (
	testNamespace = "seedwarden"
	testName      = "seedwarden-webhook"
)

// logSink collects log lines as "LEVEL msg k=v ..." strings.
type logSink struct {
	mu    sync.Mutex
	lines []string
}

func (s *logSink) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.lines = append(s.lines, args)
	}, funcr.Options{})
}

// take returns the lines logged since the last call.
func (s *logSink) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.lines
	s.lines = nil
	return l
}

func newScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	require.NoError(t, AddToScheme(s))
	return s
}

func certificate(notAfter time.Time, conds ...cmv1.CertificateCondition) *cmv1.Certificate {
	c := &cmv1.Certificate{
		ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: testName},
		Spec: cmv1.CertificateSpec{
			SecretName: "seedwarden-webhook-tls",
			DNSNames:   []string{"seedwarden-webhook.seedwarden.svc"},
			IssuerRef:  cmmeta.IssuerReference{Name: "seedwarden-selfsigned", Kind: "Issuer"},
		},
	}
	if !notAfter.IsZero() {
		c.Status.NotAfter = &metav1.Time{Time: notAfter}
	}
	c.Status.Conditions = conds
	return c
}

func readyCond(status cmmeta.ConditionStatus, reason, message string) cmv1.CertificateCondition {
	return cmv1.CertificateCondition{Type: cmv1.CertificateConditionReady, Status: status, Reason: reason, Message: message}
}

// fixture is a Watcher on a fake client with its own registry, log and clock.
type fixture struct {
	t   *testing.T
	c   client.Client
	w   *Watcher
	reg *prometheus.Registry
	log *logSink
	now time.Time
}

// testExpiryWarning is the window the fixture's watcher warns within, as
// configured by default.
const testExpiryWarning = 7 * 24 * time.Hour

func newFixture(t *testing.T, objs ...client.Object) *fixture {
	f := &fixture{t: t, reg: prometheus.NewRegistry(), log: &logSink{}, now: time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)}
	f.c = fake.NewClientBuilder().WithScheme(newScheme(t)).WithObjects(objs...).
		WithStatusSubresource(&cmv1.Certificate{}).Build()
	f.w = New(testNamespace, testName, Options{
		Metrics:       metrics.New(f.reg, metrics.GroupCertificates),
		Log:           f.log.logger(),
		Reader:        f.c,
		Now:           func() time.Time { return f.now },
		ExpiryWarning: testExpiryWarning,
	})
	return f
}

func (f *fixture) reconcile() reconcile.Result {
	f.t.Helper()
	res, err := f.w.Reconcile(context.Background(), reconcile.Request{})
	require.NoError(f.t, err)
	return res
}

func (f *fixture) setStatus(notAfter time.Time, conds ...cmv1.CertificateCondition) {
	f.t.Helper()
	var c cmv1.Certificate
	require.NoError(f.t, f.c.Get(context.Background(), client.ObjectKey{Namespace: testNamespace, Name: testName}, &c))
	c.Status = certificate(notAfter, conds...).Status
	require.NoError(f.t, f.c.Status().Update(context.Background(), &c))
}

// expectMetrics compares both gauges; expiry < 0 means no expiry sample.
func (f *fixture) expectMetrics(ready float64, expiry int64) {
	f.t.Helper()
	want := fmt.Sprintf(`
# HELP %[1]s 1 when the webhook's cert-manager Certificate has condition Ready=True, else 0 (also when it is missing or cannot be watched).
# TYPE %[1]s gauge
%[1]s{certificate="%[2]s",certificate_namespace="%[3]s"} %[4]g
`, metrics.CertificateReadyName, testName, testNamespace, ready)
	if expiry >= 0 {
		want += fmt.Sprintf(`
# HELP %[1]s status.notAfter of the webhook's cert-manager Certificate, in Unix seconds; absent while the Certificate has none.
# TYPE %[1]s gauge
%[1]s{certificate="%[2]s",certificate_namespace="%[3]s"} %[4]d
`, metrics.CertificateExpiryTimestampName, testName, testNamespace, expiry)
	}
	assert.NoError(f.t, testutil.GatherAndCompare(f.reg, strings.NewReader(want), metrics.CertificateReadyName, metrics.CertificateExpiryTimestampName))
}

// expectLogs checks that exactly the lines with these messages (in order) were
// logged since the last call, each containing the given fragments.
func (f *fixture) expectLogs(want ...[]string) {
	f.t.Helper()
	got := f.log.take()
	if !assert.Len(f.t, got, len(want), "log lines: %q", got) {
		return
	}
	for i, frags := range want {
		for _, frag := range frags {
			assert.Contains(f.t, got[i], frag, "log line %d", i)
		}
	}
}

func TestReadyNotReadyReady(t *testing.T) {
	notAfter := time.Date(2026, 10, 30, 12, 0, 0, 0, time.UTC)
	f := newFixture(t, certificate(notAfter, readyCond(cmmeta.ConditionTrue, "Ready", "Certificate is up to date and has not expired")))

	res := f.reconcile()
	f.expectMetrics(1, notAfter.Unix())
	f.expectLogs([]string{`"msg"="Certificate is ready"`, `"certificate"="seedwarden/seedwarden-webhook"`, `"notAfter"="2026-10-30T12:00:00Z"`})
	// Next look: when the 7-day warning window opens.
	assert.Equal(t, notAfter.Add(-testExpiryWarning).Sub(f.now), res.RequeueAfter)

	// Status updates that change nothing log nothing.
	f.reconcile()
	f.expectLogs()

	f.setStatus(notAfter, readyCond(cmmeta.ConditionFalse, "DoesNotExist", "Issuing certificate as Secret does not exist"))
	f.reconcile()
	f.expectMetrics(0, notAfter.Unix())
	f.expectLogs([]string{`"msg"="Certificate is not ready"`, `"status"="False"`, `"reason"="DoesNotExist"`, `"message"="Issuing certificate as Secret does not exist"`})
	f.reconcile()
	f.expectLogs()

	// A new reason while still not ready is logged.
	f.setStatus(notAfter, readyCond(cmmeta.ConditionFalse, "Failed", "The certificate request has failed to complete"))
	f.reconcile()
	f.expectMetrics(0, notAfter.Unix())
	f.expectLogs([]string{`"msg"="Certificate is not ready"`, `"reason"="Failed"`})

	renewed := notAfter.Add(90 * 24 * time.Hour)
	f.setStatus(renewed, readyCond(cmmeta.ConditionTrue, "Ready", "Certificate is up to date and has not expired"))
	f.reconcile()
	f.expectMetrics(1, renewed.Unix())
	f.expectLogs([]string{`"msg"="Certificate is ready"`, `"notAfter"="2027-01-28T12:00:00Z"`})
}

func TestNoConditionsIsNotReady(t *testing.T) {
	f := newFixture(t, certificate(time.Time{}))
	res := f.reconcile()
	f.expectMetrics(0, -1) // no notAfter: no expiry sample
	f.expectLogs([]string{`"msg"="Certificate is not ready"`, `"status"="absent"`, `"message"="the Certificate has no Ready condition yet"`})
	assert.Zero(t, res.RequeueAfter)

	f.setStatus(time.Time{}, readyCond(cmmeta.ConditionUnknown, "", ""))
	f.reconcile()
	f.expectMetrics(0, -1)
	f.expectLogs([]string{`"msg"="Certificate is not ready"`, `"status"="Unknown"`})
}

func TestMissingCertificate(t *testing.T) {
	f := newFixture(t)
	res := f.reconcile()
	assert.Zero(t, res.RequeueAfter)
	f.expectMetrics(0, -1)
	f.expectLogs([]string{`"msg"="Certificate not found; reporting it as not ready"`})
	f.reconcile()
	f.expectLogs()

	// It appears, ready...
	notAfter := f.now.Add(60 * 24 * time.Hour)
	require.NoError(t, f.c.Create(context.Background(), certificate(time.Time{})))
	f.setStatus(notAfter, readyCond(cmmeta.ConditionTrue, "Ready", ""))
	f.reconcile()
	f.expectMetrics(1, notAfter.Unix())
	f.expectLogs([]string{`"msg"="Certificate is ready"`})

	// ...and is deleted: the expiry sample goes with it.
	require.NoError(t, f.c.Delete(context.Background(), certificate(time.Time{})))
	f.reconcile()
	f.expectMetrics(0, -1)
	f.expectLogs([]string{`"msg"="Certificate not found; reporting it as not ready"`})
}

func TestExpiryWarning(t *testing.T) {
	notAfter := time.Date(2026, 8, 10, 12, 0, 0, 0, time.UTC) // 9 days after f.now
	f := newFixture(t, certificate(notAfter, readyCond(cmmeta.ConditionTrue, "Ready", "")))

	res := f.reconcile()
	f.expectLogs([]string{`"msg"="Certificate is ready"`})
	assert.Equal(t, 2*24*time.Hour, res.RequeueAfter)

	// The window opens: one warning, at error level so log.level warn keeps it.
	f.now = f.now.Add(res.RequeueAfter)
	res = f.reconcile()
	f.expectLogs([]string{`"msg"="Certificate expires soon"`, `"error"=null`, `"expiresIn"="168h0m0s"`, `"notAfter"="2026-08-10T12:00:00Z"`, `"ready"=true`})
	assert.Equal(t, 7*24*time.Hour, res.RequeueAfter)
	f.now = f.now.Add(time.Hour)
	f.reconcile()
	f.expectLogs()

	// Expired: logged once.
	f.now = notAfter
	res = f.reconcile()
	assert.Zero(t, res.RequeueAfter)
	f.expectLogs([]string{`"msg"="Certificate has expired"`})
	f.reconcile()
	f.expectLogs()
	f.expectMetrics(1, notAfter.Unix())

	// Renewed: the next warning is for the new notAfter.
	renewed := notAfter.Add(8 * 24 * time.Hour)
	f.setStatus(renewed, readyCond(cmmeta.ConditionTrue, "Ready", ""))
	res = f.reconcile()
	f.expectLogs()
	assert.Equal(t, 24*time.Hour, res.RequeueAfter)
}

func TestExpiryWarningOptions(t *testing.T) {
	notAfter := time.Date(2026, 8, 3, 12, 0, 0, 0, time.UTC) // 2 days after now
	for _, tc := range []struct {
		window  time.Duration
		warn    bool
		requeue time.Duration
	}{
		{window: 24 * time.Hour, warn: false, requeue: 24 * time.Hour},
		{window: 72 * time.Hour, warn: true, requeue: 48 * time.Hour},
		{window: -1, warn: false, requeue: 0}, // off
		{window: 0, warn: false, requeue: 0},  // off
	} {
		t.Run(tc.window.String(), func(t *testing.T) {
			f := newFixture(t, certificate(notAfter, readyCond(cmmeta.ConditionTrue, "Ready", "")))
			f.w = New(testNamespace, testName, Options{ExpiryWarning: tc.window, Reader: f.c, Log: f.log.logger(), Now: func() time.Time { return f.now }})
			res := f.reconcile()
			assert.Equal(t, tc.requeue, res.RequeueAfter)
			lines := strings.Join(f.log.take(), "\n")
			assert.Equal(t, tc.warn, strings.Contains(lines, "Certificate expires soon"), lines)
		})
	}
}

func TestReadErrorIsReturned(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(newScheme(t)).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
			return errors.New("boom")
		},
	}).Build()
	w := New(testNamespace, testName, Options{Reader: c})
	_, err := w.Reconcile(context.Background(), reconcile.Request{})
	assert.ErrorContains(t, err, "reading Certificate seedwarden/seedwarden-webhook: boom")
}

// Watchers share one recorder, each with its own series.
func TestWatchersShareRecorder(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := metrics.New(reg, metrics.GroupCertificates)
	a := New("ns", "a", Options{Metrics: m})
	b := New("ns", "b", Options{Metrics: m})
	a.observeMissing()
	b.observe(certificate(time.Time{}, readyCond(cmmeta.ConditionTrue, "Ready", "")))
	want := `
# HELP seedwarden_certificate_ready 1 when the webhook's cert-manager Certificate has condition Ready=True, else 0 (also when it is missing or cannot be watched).
# TYPE seedwarden_certificate_ready gauge
seedwarden_certificate_ready{certificate="a",certificate_namespace="ns"} 0
seedwarden_certificate_ready{certificate="b",certificate_namespace="ns"} 1
`
	assert.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want), metrics.CertificateReadyName, metrics.CertificateExpiryTimestampName))

	// Without a recorder nothing is recorded, and nothing fails.
	assert.NotPanics(t, func() { New("ns", "c", Options{}).observeMissing() })
}

// gauges is a Recorder that keeps the last values, for tests that read them
// while the watcher runs.
type gauges struct {
	mu     sync.Mutex
	ready  map[types.NamespacedName]bool
	expiry map[types.NamespacedName]time.Time
}

func (g *gauges) SetCertificateReady(namespace, name string, ready bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ready == nil {
		g.ready = map[types.NamespacedName]bool{}
	}
	g.ready[types.NamespacedName{Namespace: namespace, Name: name}] = ready
}

func (g *gauges) SetCertificateExpiry(namespace, name string, notAfter *time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.expiry == nil {
		g.expiry = map[types.NamespacedName]time.Time{}
	}
	key := types.NamespacedName{Namespace: namespace, Name: name}
	if notAfter == nil {
		delete(g.expiry, key)
		return
	}
	g.expiry[key] = *notAfter
}

// readyOf is the ready gauge of namespace/name: 1, 0, or -1 when never set.
func (g *gauges) readyOf(namespace, name string) float64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	ready, ok := g.ready[types.NamespacedName{Namespace: namespace, Name: name}]
	switch {
	case !ok:
		return -1
	case ready:
		return 1
	}
	return 0
}

// expiryOf is the expiry gauge of namespace/name, in Unix seconds, and
// whether there is one.
func (g *gauges) expiryOf(namespace, name string) (float64, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	t, ok := g.expiry[types.NamespacedName{Namespace: namespace, Name: name}]
	return float64(t.Unix()), ok
}

func TestNeedLeaderElection(t *testing.T) {
	assert.False(t, New("ns", "n", Options{}).NeedLeaderElection())
}

// TestStartReactsToEventsAndTime drives Start with a fake informer: events
// trigger a reconcile, and so does the opening of the expiry warning window,
// with no event at all.
func TestStartReactsToEventsAndTime(t *testing.T) {
	scheme := newScheme(t)
	c := fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&cmv1.Certificate{}).Build()
	informers := &informertest.FakeInformers{Scheme: scheme}
	// Made before Start: FakeInformers is not safe for concurrent use.
	inf, err := informers.FakeInformerFor(context.Background(), &cmv1.Certificate{})
	require.NoError(t, err)

	logs := &logSink{}
	const window = time.Hour
	g := &gauges{}
	w := New(testNamespace, testName, Options{Reader: c, Log: logs.logger(), ExpiryWarning: window, Metrics: g})
	w.cache = informers
	ready := func() float64 { return g.readyOf(testNamespace, testName) }
	has := func(msg string) func() bool {
		return func() bool {
			logs.mu.Lock()
			defer logs.mu.Unlock()
			return strings.Contains(strings.Join(logs.lines, "\n"), msg)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Start(ctx) }()
	require.Eventually(t, has("Certificate not found"), 5*time.Second, time.Millisecond)

	// Expires just outside the window: ready now, the warning 0.5s to 1.5s
	// later (notAfter has whole seconds).
	cert := certificate(time.Now().Add(window+1500*time.Millisecond).Truncate(time.Second), readyCond(cmmeta.ConditionTrue, "Ready", ""))
	require.NoError(t, c.Create(context.Background(), cert))
	inf.Add(cert)
	require.Eventually(t, func() bool { return ready() == 1 }, 5*time.Second, time.Millisecond)
	assert.False(t, has("Certificate expires soon")())
	require.Eventually(t, has("Certificate expires soon"), 5*time.Second, 10*time.Millisecond)

	// Events for other Certificates are ignored; ours is seen.
	other := certificate(time.Time{})
	other.Name = "other"
	inf.Add(other)
	require.NoError(t, c.Delete(context.Background(), cert))
	inf.Delete(cert)
	require.Eventually(t, func() bool { return ready() == 0 }, 5*time.Second, time.Millisecond)

	cancel()
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("Start did not return after its context ended")
	}
}
