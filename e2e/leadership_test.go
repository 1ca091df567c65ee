package e2e

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/e2e/proc"
	"github.com/seedwarden/seedwarden/hack/devcerts/certgen"
	"github.com/seedwarden/seedwarden/internal/leadership"
	"github.com/seedwarden/seedwarden/internal/metrics"
)

// cutLease is the Lease of TestLeaderAPIConnectionCut's two replicas and of
// the test replicas with a configuration of their own (startLeadingReplica), not
// the suite's: the suite's webhook keeps its own leadership meanwhile.
const cutLease = "e2e-leader-cut"

// TestLeaderAPIConnectionCut: two replicas on a Lease of their own; the
// leader, A, reaches the API server through a proxy, and every webhook
// registration points at A. A's connection is cut for 20 s while Shoot
// CREATEs, kubeconfig Secret CREATEs and namespace DELETEs (all dry runs)
// go through the API server twice a second. Every webhook answers
// throughout: no request fails for a webhook call, the API server counts
// no fail-open, no rejection for a failed call and no answer but 200 (403
// for the expected denials), and A answered every call within a second. A's leadership ends (its Lease is not renewed),
// B takes the Lease, and A, never restarted (same PID, /healthz answered
// every 200 ms), is ready again once the API server is back, a follower.
// When B stops (releasing the Lease), A leads again.
func TestLeaderAPIConnectionCut(t *testing.T) {
	st := need(t)
	st.requireWebhook(t, webhookPlace)
	st.logOnFailure(t)
	ctx := context.Background()
	const cutFor = 20 * time.Second

	grantCutLease(ctx, t, st)
	proxy, err := startProxy(st.webhookUser)
	require.NoError(t, err)
	t.Cleanup(proxy.Close)
	kubeconfig := filepath.Join(st.work, "kubeconfig-leader-cut")
	require.NoError(t, st.writeKubeconfigFile(kubeconfig, proxy))
	ca, err := newReplicaCA()
	require.NoError(t, err)
	a := st.startReplicaWith(t, "leader-a", ca, replicaOptions{kubeconfig: kubeconfig, lease: cutLease})
	require.NoError(t, waitReplicaReady(a, 60*time.Second))
	eventually(t, 30*time.Second, func() error { return leads(a, true) }, "A does not lead")
	b := st.startReplicaWith(t, "leader-b", ca, replicaOptions{lease: cutLease})
	require.NoError(t, waitReplicaReady(b, 60*time.Second))
	require.NoError(t, leads(b, false))
	holderA := cutLeaseHolder(ctx, t, st)
	pid := a.proc.Pid()
	st.routeWebhooks(t, a.webhookAddr(), ca.CertPEM, nil)

	apiBefore, err := st.apiserverMetrics(ctx)
	require.NoError(t, err)
	aBefore, err := scrape(a.metricsURL())
	require.NoError(t, err)
	stopHealth, healthFailures := probeHealthz(a)

	proxy.Cut()
	cut := time.Now()
	restored := false
	defer func() {
		if !restored {
			_ = proxy.Restore()
		}
	}()
	load := st.admissionRounds(t, cutFor)
	require.NoError(t, proxy.Restore())
	restored = true
	t.Logf("A's API connection cut for %s: %d Shoot CREATEs (%d denied by %s), %d Secret CREATEs, %d namespace DELETEs (dry runs)",
		time.Since(cut).Round(time.Millisecond), load.shoots, load.shootsDenied, webhookSeed, load.secrets, load.namespaces)
	assert.Empty(t, load.failures, "requests that failed during the cut")

	// Leadership moved, and A follows.
	eventually(t, 30*time.Second, func() error { return leads(b, true) }, "B does not take over")
	assert.NotEqual(t, holderA, cutLeaseHolder(ctx, t, st), "the Lease did not change hands")
	require.NoError(t, waitReplicaReady(a, 90*time.Second), "A is not ready again")
	require.NoError(t, leads(a, false))
	stopHealth()
	assert.Empty(t, *healthFailures, "A's /healthz was not answered")
	require.False(t, a.proc.Exited(), "A exited: %s", proc.DescribeExit(a.proc.Err()))
	assert.Equal(t, pid, a.proc.Pid(), "A was restarted")
	aAfter, err := scrape(a.metricsURL())
	require.NoError(t, err)
	assert.Equal(t, 1.0, counterSum(aAfter, metrics.LeadershipEndedName, func(l map[string]string) bool { return l["reason"] == leadership.EndLeaseLost }),
		"%s{reason=%q} of A", metrics.LeadershipEndedName, leadership.EndLeaseLost)

	// Every webhook answered: as the API server saw it, and as A did.
	apiAfter, err := st.apiserverMetrics(ctx)
	require.NoError(t, err)
	ours := func(l map[string]string) bool { _, ok := st.registered[l["name"]]; return ok }
	delta := func(name string, match func(map[string]string) bool) float64 {
		return counterSum(apiAfter, name, match) - counterSum(apiBefore, name, match)
	}
	assert.Zero(t, delta("apiserver_admission_webhook_fail_open_count", ours), "webhook calls that failed open")
	// The denials expected are answers (403); a call that failed is
	// rejected with error_type calling_webhook_error.
	assert.Zero(t, delta("apiserver_admission_webhook_rejection_count", func(l map[string]string) bool { return ours(l) && l["error_type"] != "no_error" }),
		"webhook calls that failed (apiserver_admission_webhook_rejection_count by error_type)")
	assert.Zero(t, delta("apiserver_admission_webhook_request_total", func(l map[string]string) bool {
		return ours(l) && l["code"] != "200" && !(l["code"] == "403" && (l["name"] == webhookKubeconfig || l["name"] == webhookNamespaces || l["name"] == webhookSeed))
	}), "webhook calls answered other than 200, or 403 where a denial is expected")
	answeredByA(t, aBefore, aAfter, load)

	// B stops and releases the Lease: A leads again, in a new term.
	code, _, err := b.proc.Stop(15 * time.Second)
	require.NoError(t, err)
	assert.Zero(t, code, "B's exit code")
	eventually(t, 15*time.Second, func() error { return leads(a, true) }, "A does not lead again after B released the Lease")

	// Stopped here, with more time than the replicas' cleanup gives: after
	// the cut client-go's informers may sleep out a watch backoff of up to
	// 30 s before they stop (the watch-list retry ignores the shutdown),
	// and the manager waits for them up to its graceful shutdown timeout.
	_, took, err := a.proc.Stop(gracefulShutdown + 10*time.Second)
	require.NoError(t, err)
	t.Logf("A stopped %s after SIGTERM", took.Round(time.Millisecond))
}

// gracefulShutdown is cmd/webhook's gracefulShutdownTimeout.
const gracefulShutdown = 25 * time.Second

// leads checks r's view of its leadership of cutLease: the Lease
// (leader_election_master_status) and the retry controller it runs.
func leads(r *replica, want bool) error {
	samples, err := scrape(r.metricsURL())
	if err != nil {
		return err
	}
	lease := counterSum(samples, "leader_election_master_status", func(l map[string]string) bool { return l["name"] == cutLease })
	retry := counterSum(samples, metrics.RetryControllerLeaderName, nil)
	w := 0.0
	if want {
		w = 1
	}
	if lease != w || retry != w {
		return fmt.Errorf("%s: leader_election_master_status %v, %s %v; want %v", r.name, lease, metrics.RetryControllerLeaderName, retry, w)
	}
	return nil
}

// startLeadingReplica starts a replica with o that leads cutLease and
// waits until it is ready and leads. A test replica with a configuration of
// its own must lead: one that does not leaves a seed the suite's leader
// writes to that leader (seedreserve's contention.go), and the suite's
// leader, whose binds rewrite the seeds' ledger under the suite's 5 s TTL,
// decides by the suite's configuration.
func (st *suite) startLeadingReplica(t *testing.T, name string, ca *certgen.Authority, o replicaOptions) *replica {
	t.Helper()
	grantCutLease(context.Background(), t, st)
	o.lease = cutLease
	r := st.startReplicaWith(t, name, ca, o)
	require.NoError(t, waitReplicaReady(r, 60*time.Second))
	eventually(t, 30*time.Second, func() error { return leads(r, true) }, "%s does not lead", name)
	return r
}

// grantCutLease lets the webhook's ServiceAccount hold cutLease as the
// shipped Role lets it hold leaderElection.id's Lease, until t ends.
func grantCutLease(ctx context.Context, t *testing.T, st *suite) {
	t.Helper()
	meta := metav1.ObjectMeta{Namespace: seedwardenNamespace, Name: cutLease}
	role := &rbacv1.Role{ObjectMeta: meta, Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, ResourceNames: []string{cutLease}, Verbs: []string{"get", "update"},
	}}}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: meta,
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: cutLease},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: seedwardenNamespace, Name: "seedwarden"}},
	}
	for _, obj := range []client.Object{role, binding} {
		require.NoError(t, st.c.Create(ctx, obj))
		t.Cleanup(func() { _ = st.c.Delete(context.Background(), obj) })
	}
	// In force before a replica asks: a refusal in a webhook's log fails
	// the suite.
	sa, err := client.New(st.webhookUser, client.Options{})
	require.NoError(t, err)
	eventually(t, 10*time.Second, func() error {
		// Found (an earlier test held it) or not: either way readable.
		err := sa.Get(ctx, keyOf(seedwardenNamespace, cutLease), &coordinationv1.Lease{})
		if err == nil || apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("reading Lease %s as the webhook: %v", cutLease, err)
	}, "the Role for the test's Lease is not in force")
}

func cutLeaseHolder(ctx context.Context, t *testing.T, st *suite) string {
	t.Helper()
	var l coordinationv1.Lease
	require.NoError(t, st.c.Get(ctx, keyOf(seedwardenNamespace, cutLease), &l))
	return deref(l.Spec.HolderIdentity)
}

// probeHealthz asks r's /healthz every 200 ms until stop; failures are the
// requests not answered 200.
func probeHealthz(r *replica) (stop func(), failures *[]string) {
	var (
		out  []string
		wg   sync.WaitGroup
		done = make(chan struct{})
	)
	url := fmt.Sprintf("http://127.0.0.1:%d/healthz", r.ports.health)
	start := time.Now()
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			if code, body := httpStatus(url); code != http.StatusOK {
				out = append(out, fmt.Sprintf("%s: %d %s", time.Since(start).Round(time.Millisecond), code, strings.TrimSpace(body)))
			}
			select {
			case <-done:
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	return func() { close(done); wg.Wait() }, &out
}

// admissionLoad is what admissionRounds sent.
type admissionLoad struct {
	shoots, secrets, namespaces int
	shootsDenied                int // by the capacity webhook
	failures                    []string
}

// admissionRounds sends, twice a second for d, a dry-run Shoot CREATE
// that chooses no seed, and, where their webhooks are registered, a
// dry-run CREATE of a Secret with an exec kubeconfig and a dry-run DELETE
// of the project namespace (both to be denied by their webhook). A request
// that fails other than by a webhook's answer is a failure.
func (st *suite) admissionRounds(t *testing.T, d time.Duration) admissionLoad {
	t.Helper()
	ctx := context.Background()
	var load admissionLoad
	start := time.Now()
	fail := func(format string, args ...any) {
		load.failures = append(load.failures, time.Since(start).Round(time.Millisecond).String()+": "+fmt.Sprintf(format, args...))
	}
	denied := func(err error, webhook string) bool {
		return err != nil && strings.Contains(err.Error(), fmt.Sprintf("admission webhook %q denied the request", webhook))
	}
	for i := 0; time.Since(start) < d; i++ {
		sh := newShoot(t.Name(), awsShoot("eu-central-1", "eu-central-1a"))
		switch err := st.c.Create(ctx, sh, dryRunAll); {
		case denied(err, webhookSeed):
			// An answer: in mode patch the capacity webhook refuses the
			// seed A placed on while A cannot read the ledger.
			load.shootsDenied++
		case err != nil:
			fail("Shoot CREATE: %v", err)
		}
		load.shoots++
		if _, ok := st.registered[webhookKubeconfig]; ok {
			s := &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("e2e-leader-cut-%d", i), Namespace: projectNamespace},
				Data:       map[string][]byte{"kubeconfig": []byte(execKubeconfig)},
			}
			if err := st.c.Create(ctx, s, dryRunAll); !denied(err, webhookKubeconfig) {
				fail("Secret CREATE: want a denial by %s, got %v", webhookKubeconfig, err)
			}
			load.secrets++
		}
		if _, ok := st.registered[webhookNamespaces]; ok {
			err := st.c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: projectNamespace}}, client.DryRunAll)
			if !denied(err, webhookNamespaces) {
				fail("namespace DELETE: want a denial by %s, got %v", webhookNamespaces, err)
			}
			load.namespaces++
		}
		time.Sleep(500 * time.Millisecond)
	}
	return load
}

// answeredByA checks, from A's webhook server metrics, that it answered
// at least every request of load with 200, each within a second (far
// below every registration's timeoutSeconds): on the gardener target the
// Shoot webhooks are called by gardener-apiserver, whose metrics are not
// reachable.
func answeredByA(t *testing.T, before, after []sample, load admissionLoad) {
	t.Helper()
	delta := func(name string, match func(map[string]string) bool) float64 {
		return counterSum(after, name, match) - counterSum(before, name, match)
	}
	for _, p := range []struct {
		path string
		sent int
	}{
		{"/mutate-shoots", load.shoots},
		{"/validate-kubeconfig-secret", load.secrets},
		{"/validate-namespace-deletion", load.namespaces},
	} {
		onPath := func(l map[string]string) bool { return l["webhook"] == p.path }
		ok := delta("controller_runtime_webhook_requests_total", func(l map[string]string) bool { return onPath(l) && l["code"] == "200" })
		notOK := delta("controller_runtime_webhook_requests_total", func(l map[string]string) bool { return onPath(l) && l["code"] != "200" })
		assert.GreaterOrEqual(t, ok, float64(p.sent), "%s: answered 200", p.path)
		assert.Zero(t, notOK, "%s: answered other than 200", p.path)
		all := delta("controller_runtime_webhook_latency_seconds_count", onPath)
		fast := delta("controller_runtime_webhook_latency_seconds_bucket", func(l map[string]string) bool { return onPath(l) && aboutOneSecond(l["le"]) })
		assert.Equal(t, all, fast, "%s: answers that took longer than 1s", p.path)
	}
}

// aboutOneSecond reports whether a histogram bucket's bound is the 1 s one
// (controller-runtime's buckets are powers of ten, computed, so not
// exactly 1).
func aboutOneSecond(le string) bool {
	f, err := strconv.ParseFloat(le, 64)
	return err == nil && f > 0.5 && f < 2
}
