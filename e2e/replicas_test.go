package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/e2e/proc"
	"github.com/seedwarden/seedwarden/internal/api"
)

// More than one webhook process: a second replica on the same Lease, and
// three replicas sharing seed capacity behind one address.

// TestSecondReplica: a second webhook process on the same cluster and Lease
// serves every webhook from its own synced cache while the first keeps the
// leadership (only the leader runs the retry controller); stopping it leaves
// the Lease alone.
func TestSecondReplica(t *testing.T) {
	st := need(t)
	st.logOnFailure(t)
	ctx := context.Background()
	leaseKey := keyOf(seedwardenNamespace, "seedwarden-pending-shoots")

	var lease coordinationv1.Lease
	eventually(t, 20*time.Second, func() error {
		if err := st.c.Get(ctx, leaseKey, &lease); err != nil {
			return err
		}
		if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
			return fmt.Errorf("Lease %s has no holder", leaseKey)
		}
		return nil
	}, "the first webhook holds no Lease")
	leader := *lease.Spec.HolderIdentity
	first, err := scrape(st.metricsURL())
	require.NoError(t, err)
	assert.Equal(t, 1.0, leaderStatus(first), "leader_election_master_status of the first webhook")

	var p ports
	for _, port := range []*int{&p.webhook, &p.metrics, &p.health} {
		*port, err = freePort()
		require.NoError(t, err)
	}
	cfg, _, err := webhookConfig(p, st.certDir, st.work)
	require.NoError(t, err)
	cfgPath := filepath.Join(st.work, "config-replica-2.yaml")
	require.NoError(t, os.WriteFile(cfgPath, []byte(cfg), 0o644))
	logPath := filepath.Join(st.work, "webhook-replica-2.log")
	replica, err := st.startProcess(cfgPath, logPath)
	require.NoError(t, err)
	t.Cleanup(func() {
		if !replica.Exited() {
			_ = replica.Kill()
		}
		if t.Failed() {
			if lines, err := readLines(logPath, 0); err == nil {
				t.Logf("second replica's log:\n  | %s", strings.Join(lines, "\n  | "))
			}
		}
	})
	health := fmt.Sprintf("http://127.0.0.1:%d", p.health)
	eventually(t, 60*time.Second, func() error {
		if replica.Exited() {
			return fmt.Errorf("second replica exited: %v", proc.DescribeExit(replica.Err()))
		}
		if code, body := httpStatus(health + "/readyz"); code != http.StatusOK {
			return fmt.Errorf("/readyz: %d %s", code, body)
		}
		return nil
	}, "the second replica does not become ready")

	// It answers admissions from its own cache: a namespace deletion
	// (project namespace: denied) and a placement.
	hc, err := st.tlsClient(st.caBundle)
	require.NoError(t, err)
	base := fmt.Sprintf("https://127.0.0.1:%d", p.webhook)
	resp := review(t, hc, base+"/validate-namespace-deletion", &admissionv1.AdmissionRequest{
		UID:       "replica-2-ns",
		Kind:      metav1.GroupVersionKind{Version: "v1", Kind: "Namespace"},
		Resource:  metav1.GroupVersionResource{Version: "v1", Resource: "namespaces"},
		Name:      projectNamespace,
		Operation: admissionv1.Delete,
		OldObject: k8sruntime.RawExtension{Raw: []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"` + projectNamespace + `"}}`)},
	})
	assert.False(t, resp.Allowed, "the second replica lets %s be deleted", projectNamespace)
	replicaShoot := newShoot(t.Name(), withName("e2e-replica-2"))
	resp = review(t, hc, base+"/mutate-shoots", shootCreate(t, "replica-2-shoot", replicaShoot))
	assert.True(t, resp.Allowed)
	assert.NotEmpty(t, patchedSeed(t, replicaShoot, resp.Patch), "the second replica places Shoots")

	// It waits for the Lease: past a few retry periods the first still holds it.
	time.Sleep(3 * time.Second)
	require.NoError(t, st.c.Get(ctx, leaseKey, &lease))
	assert.Equal(t, leader, deref(lease.Spec.HolderIdentity), "the Lease changed hands")
	second, err := scrape(fmt.Sprintf("http://127.0.0.1:%d/metrics", p.metrics))
	require.NoError(t, err)
	assert.Zero(t, leaderStatus(second), "the second replica reports itself leader")
	assert.Zero(t, counterSum(second, "seedwarden_pending_shoots", nil), "the second replica tracks pending Shoots")

	code, took, err := replica.Stop(15 * time.Second)
	require.NoError(t, err)
	assert.Equal(t, 0, code, "exit code of the second replica")
	t.Logf("second replica: ready, served, not leader; stopped in %s", took.Round(time.Millisecond))
	require.NoError(t, st.c.Get(ctx, leaseKey, &lease))
	assert.Equal(t, leader, deref(lease.Spec.HolderIdentity), "stopping a replica that does not lead leaves the Lease")
}

// TestCapacityAcrossReplicas: three webhook processes behind one address (a
// round-robin TCP load balancer standing in for the Service), all reserving
// seed capacity through the API server (capacity.coordination apiserver).
// Four seeds with 25 free places each, 300 concurrent Shoot CREATEs that only
// these seeds can take: at most 25 Shoots per seed, 100 in all, end up with
// spec.seedName on them, counted from the API server. The rest are denied
// by the capacity webhook or admitted without a seed (a replica's mutating
// webhook saw the seeds full). Then the single-replica registration is
// restored.
func TestCapacityAcrossReplicas(t *testing.T) {
	st := need(t)
	st.requireWebhook(t, webhookPlace, webhookSeed)
	if b, err := os.ReadFile(st.configPath); err != nil || !strings.Contains(string(b), "coordination: apiserver") {
		t.Fatalf("the webhook does not reserve through the API server (capacity.coordination in %s): %v", st.configPath, err)
	}
	st.logOnFailure(t)
	st.cleanupShoots(t)
	st.waitSettled(t)
	ctx := context.Background()
	began := time.Now()

	const (
		seeds    = 4
		perSeed  = 25
		requests = 300
		label    = "e2e.seedwarden.io/capacity-test"
	)

	// Two more replicas, each with its own ports and a certificate of its
	// own CA; the main one keeps its certificate.
	ca, err := newReplicaCA()
	require.NoError(t, err)
	extra := []*replica{st.startReplica(t, "replica-2", ca), st.startReplica(t, "replica-3", ca)}

	// Seeds that only this test's Shoots select (spec.seedSelector), copies
	// of aws-eu2 with room for 25 Shoots each.
	sizes := map[string]int64{}
	var seedNames []string
	for i := range seeds {
		name := fmt.Sprintf("e2e-capacity-%d", i)
		seedNames = append(seedNames, name)
		sizes[name] = perSeed
	}
	st.createSeedsLike(t, "aws-eu2", label, sizes)

	for _, r := range extra {
		require.NoError(t, waitReplicaReady(r, 60*time.Second))
	}
	// Every replica must know the new seeds before the load (the extra
	// replicas were starting while they were created): each one's metrics
	// list them.
	for _, url := range []string{st.metricsURL(), extra[0].metricsURL(), extra[1].metricsURL()} {
		eventually(t, 10*time.Second, func() error { return knowsSeeds(url, sizes) })
	}
	startedIn := time.Since(began)

	// One address for the three, like a Service; the CA bundle trusts both CAs.
	lb, err := startRoundRobin([]string{st.webhookAddr(), extra[0].webhookAddr(), extra[1].webhookAddr()})
	require.NoError(t, err)
	restore := st.routeWebhooks(t, lb.Addr(), append(slices.Clone(st.caBundle), ca.CertPEM...), func() error {
		if conns := lb.Connections(); slices.Min(conns) == 0 {
			// A dry run makes two webhook calls in parallel at most, over
			// kept-alive connections: concurrent ones open more, until
			// every replica has one.
			st.concurrentDryRuns(t, 4)
			return fmt.Errorf("connections per replica through the load balancer: %v", conns)
		}
		return nil
	})
	defer lb.Close()

	before := make([]float64, 3)
	urls := []string{st.metricsURL(), extra[0].metricsURL(), extra[1].metricsURL()}
	webhookRequests := func(url string) float64 {
		samples, err := scrape(url)
		require.NoError(t, err)
		return counterSum(samples, "controller_runtime_webhook_requests_total", nil)
	}
	for i, u := range urls {
		before[i] = webhookRequests(u)
	}

	// The load: 300 CREATEs at once (through a client that collects the
	// unschedulable warnings instead of logging them).
	c, _ := st.clientAs(t, "")
	type result struct {
		took time.Duration
		seed string
		err  error
	}
	results := make([]result, requests)
	var wg sync.WaitGroup
	gate := make(chan struct{})
	for i := range requests {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Named, as Shoots are in practice: the mutating webhook can then
			// reserve the place across replicas under the key the capacity
			// webhook uses (with generateName only it could not).
			sh := newShoot(t.Name(), awsShoot("eu-central-1", "eu-central-1a"), func(u *unstructured.Unstructured) {
				must(unstructured.SetNestedStringMap(u.Object, map[string]string{label: "true"}, "spec", "seedSelector", "matchLabels"))
				u.SetGenerateName("")
				u.SetName(fmt.Sprintf("e2e-capacity-%03d", i))
			})
			<-gate
			cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			t0 := time.Now()
			err := c.Create(cctx, sh)
			results[i] = result{took: time.Since(t0), seed: admittedSeed(sh), err: err}
		}()
	}
	burst := time.Now()
	close(gate)
	wg.Wait()
	wall := time.Since(burst)

	var placed, unplaced, denied int
	var other []string
	var lat []time.Duration
	perSeedAdmitted := map[string]int{}
	for _, r := range results {
		lat = append(lat, r.took)
		switch {
		case r.err != nil && strings.Contains(r.err.Error(), fmt.Sprintf("admission webhook %q denied the request", webhookSeed)):
			denied++
		case r.err != nil:
			other = append(other, r.err.Error())
		case r.seed == "":
			unplaced++
		default:
			placed++
			perSeedAdmitted[r.seed]++
		}
	}
	slices.Sort(lat)
	q := func(p float64) time.Duration {
		return lat[min(len(lat)-1, int(p*float64(len(lat))))].Round(time.Millisecond)
	}

	// What the API server holds, after the retry controller (the leader)
	// has had a moment for the Shoots admitted without a seed.
	count := func() (map[string]int, int) {
		var list api.ShootList
		require.NoError(t, st.c.List(ctx, &list, client.InNamespace(projectNamespace), client.MatchingLabels{testLabel: labelValue(t.Name())}))
		on, total := map[string]int{}, 0
		for _, sh := range list.Items {
			if sh.Spec.SeedName != nil && slices.Contains(seedNames, *sh.Spec.SeedName) {
				on[*sh.Spec.SeedName]++
				total++
			}
		}
		return on, total
	}
	onSeeds, total := count()
	if bindingMode() {
		// The announced Shoots are bound by the leader's retry controller,
		// one reconcile each. The mutating webhooks reserved each announced
		// place across replicas, so no more were announced than fit. Wait
		// until every announced Shoot is bound: well within one
		// pendingShoots.backoffBase (30s), so no announced Shoot may need a
		// second, backed-off attempt (the leader retries an announced seed
		// that looks full in its own view shortly, not after a backoff).
		want := min(placed, seeds*perSeed)
		eventually(t, 30*time.Second, func() error {
			if onSeeds, total = count(); total < want {
				return fmt.Errorf("%d of the %d announced Shoots bound (%d places)", total, placed, seeds*perSeed)
			}
			return nil
		}, "the retry controller does not bind the announced Shoots")
		t.Logf("announced Shoots bound %s after the burst: %d of %d announced (%d announced beyond the places, left pending)",
			(time.Since(burst) - wall).Round(time.Millisecond), total, placed, placed-total)
	}
	time.Sleep(2 * time.Second)
	onSeedsLater, totalLater := count()

	served := make([]float64, 3)
	var conflicts, confirmed float64
	within := map[string]float64{}
	for i, u := range urls {
		served[i] = webhookRequests(u) - before[i]
		samples, err := scrape(u)
		require.NoError(t, err)
		conflicts += counterSum(samples, "seedwarden_capacity_reservation_conflicts_total", nil)
		// What reservations.confirmWindow is chosen from: the time from a
		// reservation to the watch showing its Shoot.
		confirmed += counterSum(samples, "seedwarden_reservation_confirmation_seconds_count", nil)
		for _, le := range []string{"1", "2.5", "5"} {
			within[le] += counterSum(samples, "seedwarden_reservation_confirmation_seconds_bucket",
				func(l map[string]string) bool { return l["le"] == le })
		}
	}
	t.Logf("reservations confirmed by the watch: %.0f; within 1s %.0f, 2.5s %.0f, 5s %.0f", confirmed, within["1"], within["2.5"], within["5"])
	// Every placement's reservation is confirmed by its Shoot before the
	// confirm window ends (the capacity webhook's own reservations of
	// another replica's placements may add to the count).
	assert.GreaterOrEqual(t, confirmed, float64(placed), "a placed Shoot's reservation lapsed before the watch showed it (reservations.confirmWindow too short)")
	t.Logf("3 replicas, %d seeds x %d free places, %d concurrent Shoot CREATEs in %s: %d admitted onto (mode binding: announced for) a seed, %d denied (seed full), %d admitted without a seed, %d other errors",
		seeds, perSeed, requests, wall.Round(time.Millisecond), placed, denied, unplaced, len(other))
	t.Logf("create latency: p50 %s, p90 %s, p99 %s, max %s", q(.5), q(.9), q(.99), lat[len(lat)-1].Round(time.Millisecond))
	t.Logf("on the seeds (API server): %d %v right after the burst, %d %v 2s later (the retry controller binds what fits)", total, onSeeds, totalLater, onSeedsLater)
	t.Logf("webhook requests served per replica: %v; connections through the load balancer: %v; reservation conflicts between replicas: %.0f",
		served, lb.Connections(), conflicts)
	t.Logf("replicas ready in %s", startedIn.Round(time.Millisecond))
	fmt.Printf("e2e: capacity across 3 replicas: %d/%d placed (at most %d), %d denied, %d unplaced; create p50 %s p99 %s\n",
		totalLater, requests, seeds*perSeed, denied, unplaced, q(.5), q(.99))

	for _, on := range []map[string]int{onSeeds, onSeedsLater} {
		for seed, n := range on {
			assert.LessOrEqual(t, n, perSeed, "seed %s overfilled", seed)
		}
	}
	assert.LessOrEqual(t, total, seeds*perSeed)
	assert.LessOrEqual(t, placed, seeds*perSeed, "more Shoots placed (or announced) than the seeds have places")
	assert.LessOrEqual(t, totalLater, seeds*perSeed)
	assert.Equal(t, requests, placed+denied+unplaced+len(other))
	if !bindingMode() {
		assert.GreaterOrEqual(t, total, placed, "Shoots admitted onto a seed that the API server does not hold there")
	}
	// The mutating webhooks reserve across replicas before they answer, so
	// the capacity webhook refuses one of their placements only when its
	// CREATE took longer than reservationTTL (5s here) and the place lapsed
	// meanwhile; on an idle machine none is refused. The Shoots beyond the
	// places are admitted without a seed instead.
	if denied > 0 {
		t.Logf("%d placements refused by the capacity webhook (CREATE p99 %s, reservationTTL 5s)", denied, q(.99))
	}
	assert.Empty(t, other, "requests that failed other than by a capacity denial")
	for i, n := range served {
		assert.Positive(t, n, "replica %d served no webhook request", i+1)
	}

	restore()
	assert.Less(t, time.Since(began), 60*time.Second, "the test took too long")
}
