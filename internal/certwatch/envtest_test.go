package certwatch

import (
	"context"
	"strings"
	"testing"
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	"github.com/seedwarden/seedwarden/internal/testenv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// watcherUser is who the manager runs as: it may only get, list and watch
// the Certificate testNamespace/testName (the RBAC rule deploy/manifests
// needs).
const watcherUser = "system:serviceaccount:seedwarden:seedwarden-webhook"

// TestWatcherAgainstAPIServer runs the Watcher in a manager against a real
// kube-apiserver, as a user allowed nothing but get/list/watch on the one
// Certificate: first without the Certificate CRD, then
// without the Certificate, then through ready → not ready → ready, each
// status change seen within a second.
func TestWatcherAgainstAPIServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts kube-apiserver")
	}
	assets := testenv.Assets()
	if assets == "" {
		t.Skip("no kube-apiserver/etcd: set KUBEBUILDER_ASSETS or run hack/e2e-tools.sh")
	}
	env := &envtest.Environment{BinaryAssetsDirectory: assets} // the CRD comes later
	adminCfg, err := env.Start()
	require.NoError(t, err)
	defer func() { assert.NoError(t, env.Stop()) }()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	require.NoError(t, AddToScheme(scheme))
	admin, err := client.New(adminCfg, client.Options{Scheme: scheme})
	require.NoError(t, err)
	for _, ns := range []string{testNamespace, "other"} {
		require.NoError(t, admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	}
	require.NoError(t, admin.Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: "certwatch"},
		Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{"cert-manager.io"},
			Resources: []string{"certificates"},
			Verbs:     []string{"get", "list", "watch"},
			// The field selector on metadata.name lets the apiserver
			// authorize list and watch against resourceNames.
			ResourceNames: []string{testName},
		}},
	}))
	require.NoError(t, admin.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: "certwatch"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "certwatch"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: watcherUser}},
	}))

	userCfg := rest.CopyConfig(adminCfg)
	userCfg.Impersonate = rest.ImpersonationConfig{UserName: watcherUser, Groups: []string{"system:authenticated"}}
	// The manager's own scheme and cache know nothing of cert-manager.
	mgrScheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(mgrScheme))
	// Leader election is on, and this user may not touch Leases: the manager
	// never leads, so only runnables that need no election run, as on a
	// replica that is not the leader.
	mgr, err := ctrl.NewManager(userCfg, ctrl.Options{
		Scheme:                  mgrScheme,
		Metrics:                 metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:  "0",
		LeaderElection:          true,
		LeaderElectionID:        "certwatch-test",
		LeaderElectionNamespace: testNamespace,
	})
	require.NoError(t, err)
	g := &gauges{}
	logs := &logSink{}
	w := New(testNamespace, testName, Options{
		Metrics:       g,
		Log:           logs.logger(),
		RetryInterval: 200 * time.Millisecond,
	})
	require.NoError(t, w.SetupWithManager(mgr))
	// A second watcher, for a Certificate this user may not list: its
	// informer never syncs, and it says so.
	forbiddenLogs := &logSink{}
	forbidden := New(testNamespace, "forbidden", Options{
		Metrics:       g,
		Log:           forbiddenLogs.logger(),
		RetryInterval: 200 * time.Millisecond,
		SyncTimeout:   500 * time.Millisecond,
	})
	require.NoError(t, forbidden.SetupWithManager(mgr))
	ready := func() float64 { return g.readyOf(testNamespace, testName) }
	expiry := func() (float64, bool) { return g.expiryOf(testNamespace, testName) }

	mgrCtx, stopMgr := context.WithCancel(ctx)
	mgrDone := make(chan error, 1)
	go func() { mgrDone <- mgr.Start(mgrCtx) }()
	defer func() {
		stopMgr()
		assert.NoError(t, <-mgrDone)
	}()

	loggedTo := func(logs *logSink, msg string) func() bool {
		return func() bool {
			logs.mu.Lock()
			defer logs.mu.Unlock()
			for _, l := range logs.lines {
				if strings.Contains(l, msg) {
					return true
				}
			}
			return false
		}
	}
	logged := func(msg string) func() bool { return loggedTo(logs, msg) }

	// 1. No CRD: reported not ready, logged, retried; the manager keeps running.
	require.Eventually(t, logged("cannot watch certificates.cert-manager.io"), 30*time.Second, 20*time.Millisecond)
	assert.Equal(t, 0.0, ready())
	select {
	case err := <-mgrDone:
		t.Fatalf("manager stopped: %v", err)
	default:
	}

	// 2. The CRD arrives, the Certificate does not exist yet.
	_, err = envtest.InstallCRDs(adminCfg, envtest.CRDInstallOptions{Paths: []string{"testdata/crds"}, ErrorIfPathMissing: true})
	require.NoError(t, err)
	require.Eventually(t, logged("Certificate not found"), 30*time.Second, 20*time.Millisecond)
	assert.Equal(t, 0.0, ready())
	_, has := expiry()
	assert.False(t, has)

	require.Eventually(t, loggedTo(forbiddenLogs, "informer has not synced after 500ms"), 10*time.Second, 20*time.Millisecond)
	assert.Equal(t, 0.0, g.readyOf(testNamespace, "forbidden"))

	// Others in the same namespace and elsewhere, which the cache must not hold
	// (nor may this user list the latter).
	other := certificate(time.Time{})
	other.Name = "other"
	require.NoError(t, admin.Create(ctx, other))
	elsewhere := certificate(time.Time{})
	elsewhere.Namespace = "other"
	require.NoError(t, admin.Create(ctx, elsewhere))

	cert := certificate(time.Time{})
	require.NoError(t, admin.Create(ctx, cert))
	require.Eventually(t, logged("Certificate is not ready"), 5*time.Second, 10*time.Millisecond)

	// 3. Each status change shows in the gauges within a second.
	notAfter := time.Now().Add(90 * 24 * time.Hour).Truncate(time.Second)
	setStatus := func(notAfter time.Time, cond cmv1.CertificateCondition) time.Time {
		t.Helper()
		require.NoError(t, admin.Get(ctx, client.ObjectKeyFromObject(cert), cert))
		cert.Status = certificate(notAfter, cond).Status
		require.NoError(t, admin.Status().Update(ctx, cert))
		return time.Now()
	}
	within := func(start time.Time, what string, cond func() bool) {
		t.Helper()
		require.Eventually(t, cond, time.Second, 5*time.Millisecond, what)
		t.Logf("%s after %s", what, time.Since(start).Round(time.Microsecond))
	}

	start := setStatus(notAfter, readyCond(cmmeta.ConditionTrue, "Ready", "Certificate is up to date and has not expired"))
	within(start, "ready", func() bool {
		e, ok := expiry()
		return ready() == 1 && ok && e == float64(notAfter.Unix())
	})

	start = setStatus(notAfter, readyCond(cmmeta.ConditionFalse, "Failed", "The certificate request has failed to complete and will be retried"))
	within(start, "not ready", func() bool { return ready() == 0 })
	assert.Eventually(t, logged(`"reason"="Failed"`), time.Second, 5*time.Millisecond)

	renewed := notAfter.Add(24 * time.Hour)
	start = setStatus(renewed, readyCond(cmmeta.ConditionTrue, "Ready", "Certificate is up to date and has not expired"))
	within(start, "ready again", func() bool {
		e, _ := expiry()
		return ready() == 1 && e == float64(renewed.Unix())
	})

	// The watcher's cache holds our Certificate only.
	var list cmv1.CertificateList
	require.NoError(t, w.cache.List(ctx, &list))
	require.Len(t, list.Items, 1)
	assert.Equal(t, testName, list.Items[0].Name)

	// 4. Deleted: not ready, and no expiry sample.
	require.NoError(t, admin.Delete(ctx, cert))
	start = time.Now()
	within(start, "deleted", func() bool {
		_, ok := expiry()
		return ready() == 0 && !ok
	})

	select {
	case <-mgr.Elected():
		t.Error("the manager was elected: the test proves nothing about NeedLeaderElection")
	default:
	}
	for _, l := range append(logs.take(), forbiddenLogs.take()...) {
		t.Log(l)
	}
}
