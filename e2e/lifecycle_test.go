package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/e2e/proc"
	"github.com/seedwarden/seedwarden/hack/devcerts/certgen"
	"github.com/seedwarden/seedwarden/internal/api"
)

// The webhook process's life: a certificate rotation under load, and a
// restart (SIGTERM, failure policies while down, ready only once synced);
// and a Shoot's life ending on a full seed.

// TestCertificateRotation: while Shoots are being created, a new CA and
// serving certificate replace the old (CA bundle with both CAs first, as
// cert-manager's cainjector merges a new CA in when the serving Secret
// changes; then the files, each replaced atomically). The real programs do
// this in e2e/install's TestCARenewal; here the server's side is held to it
// at a higher load. No request may fail, every Shoot must be
// placed (the mutating webhook fails open, so a TLS failure there would
// only show as a Shoot without seed), and the server must present the new
// certificate afterwards.
func TestCertificateRotation(t *testing.T) {
	st := need(t)
	st.logOnFailure(t)
	st.cleanupShoots(t)
	ctx := context.Background()

	oldCA := st.caBundle
	oldLeaf, err := st.servedCertificate(st.webhookAddr())
	require.NoError(t, err)
	newDir := t.TempDir()
	require.NoError(t, certgen.Generate(newDir, servingHosts, time.Now()))
	newCA, err := os.ReadFile(filepath.Join(newDir, certgen.CAFile))
	require.NoError(t, err)
	newCertPEM, err := os.ReadFile(filepath.Join(newDir, certgen.CertFile))
	require.NoError(t, err)
	newKeyPEM, err := os.ReadFile(filepath.Join(newDir, certgen.KeyFile))
	require.NoError(t, err)
	blk, _ := pem.Decode(newCertPEM)
	require.NotNil(t, blk)
	newLeaf, err := x509.ParseCertificate(blk.Bytes)
	require.NoError(t, err)
	require.NotEqual(t, oldLeaf.Raw, newLeaf.Raw)

	before, err := st.apiserverMetrics(ctx)
	require.NoError(t, err)

	// Load: about 40 Shoot creations a second from 4 clients, at least 200,
	// and on until a second after the new certificate is served.
	const rate, minShoots, workers = 40, 200, 4
	var (
		rotatedAt atomic.Int64 // unix nanos when the new certificate was first served
		created   atomic.Int64
		mu        sync.Mutex
		failures  []string
		unplaced  []string
	)
	tokens := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(tokens)
		tick := time.NewTicker(time.Second / rate)
		defer tick.Stop()
		for n := 0; ; n++ {
			r := rotatedAt.Load()
			if n >= minShoots && r != 0 && time.Since(time.Unix(0, r)) > time.Second {
				return
			}
			if time.Since(start) > 40*time.Second {
				return
			}
			<-tick.C
			tokens <- struct{}{}
		}
	}()
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range tokens {
				sh := newShoot(t.Name(), awsShoot("us-east-1", "us-east-1a"))
				cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
				err := st.c.Create(cctx, sh)
				cancel()
				mu.Lock()
				switch {
				case err != nil:
					failures = append(failures, fmt.Sprintf("%s: %v", time.Since(start).Round(time.Millisecond), err))
				case admittedSeed(sh) == "":
					unplaced = append(unplaced, fmt.Sprintf("%s: %s", time.Since(start).Round(time.Millisecond), sh.GetName()))
				default:
					created.Add(1)
				}
				mu.Unlock()
			}
		}()
	}

	// 1s in: the CA bundle holds both CAs.
	time.Sleep(time.Second)
	bundle := append(append([]byte{}, oldCA...), newCA...)
	require.NoError(t, st.setCABundle(ctx, bundle))
	bundleAt := time.Since(start)
	// 1s later (the API server has long picked up the bundle): new key and
	// certificate into the certificate directory.
	time.Sleep(time.Second)
	require.NoError(t, certgen.WriteFile(st.certDir, certgen.KeyFile, newKeyPEM, 0o600))
	require.NoError(t, certgen.WriteFile(st.certDir, certgen.CertFile, newCertPEM, 0o644))
	filesAt := time.Since(start)
	var servedAfter time.Duration
	err = poll(ctx, 20*time.Second, 20*time.Millisecond, func() error {
		leaf, err := st.servedCertificate(st.webhookAddr())
		if err != nil {
			return err
		}
		if !leaf.Equal(newLeaf) {
			return fmt.Errorf("still serving the certificate with serial %s", leaf.SerialNumber)
		}
		return nil
	})
	if err == nil {
		servedAfter = time.Since(start) - filesAt
		rotatedAt.Store(time.Now().UnixNano())
	}
	wg.Wait()
	require.NoError(t, err, "the server does not present the new certificate")
	elapsed := time.Since(start)

	mu.Lock()
	defer mu.Unlock()
	t.Logf("rotation: CA bundle (old+new) at %s, files replaced at %s, new certificate served %s later; %d Shoots created in %s, %d failed, %d unplaced",
		bundleAt.Round(time.Millisecond), filesAt.Round(time.Millisecond), servedAfter.Round(time.Millisecond),
		created.Load(), elapsed.Round(time.Millisecond), len(failures), len(unplaced))
	assert.Empty(t, failures, "failed Shoot creations during the rotation")
	assert.Empty(t, unplaced, "Shoots admitted without seed during the rotation (mutating webhook failed open)")
	assert.GreaterOrEqual(t, created.Load(), int64(minShoots))

	// The API server saw no webhook call fail.
	after, err := st.apiserverMetrics(ctx)
	require.NoError(t, err)
	ours := func(l map[string]string) bool { _, ok := st.registered[l["name"]]; return ok }
	failOpen := counterSum(after, "apiserver_admission_webhook_fail_open_count", ours) -
		counterSum(before, "apiserver_admission_webhook_fail_open_count", ours)
	assert.Zero(t, failOpen, "apiserver_admission_webhook_fail_open_count rose during the rotation")
	notOK := func(l map[string]string) bool { return ours(l) && l["code"] != "200" }
	errs := counterSum(after, "apiserver_admission_webhook_request_total", notOK) -
		counterSum(before, "apiserver_admission_webhook_request_total", notOK)
	assert.Zero(t, errs, "webhook calls answered other than 200 during the rotation")

	// The cainjector keeps the old CA in the bundle until it expires; an
	// operator who stops trusting it replaces the bundle with the new CA
	// (docs/troubleshooting.md, Certificate rotation): Shoots are still placed.
	require.NoError(t, st.setCABundle(ctx, newCA))
	for i := 0; i < 10; i++ {
		sh := newShoot(t.Name(), awsShoot("us-east-1", "us-east-1a"))
		require.NoError(t, st.c.Create(ctx, sh))
		assert.NotEmpty(t, admittedSeed(sh), "placed once the bundle was replaced by the new CA")
		time.Sleep(50 * time.Millisecond)
	}
}

// servedCertificate is the leaf certificate the webhook presents.
func (st *suite) servedCertificate(addr string) (*x509.Certificate, error) {
	conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true, Certificates: st.clientCerts}) //nolint:gosec // only reads the certificate
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	certs := conn.ConnectionState().PeerCertificates
	if len(certs) == 0 {
		return nil, fmt.Errorf("no certificate presented")
	}
	return certs[0], nil
}

// shutdownBound is how long a SIGTERM may take with server.shutdownDelay
// 0 (this suite's configuration). net/http's Server.Shutdown closes idle
// connections at once but waits up to 5 s for one that has not sent its
// first request yet, since a request may be on its way on it (and a POST
// failing on a connection never used is not retried by the client). The API
// server's connection pool leaves such connections behind whenever two
// webhook calls race for a new one (ss showed one that had carried only its
// TLS handshake): in 3 of 5 runs the stop took 5.8-6.0 s, in the others
// 33-45 ms. Shutdown's poll interval (up to 0.5 s) and the rest of the stop
// come on top of the 5 s. With the shipped shutdownDelay (5s) every
// such connection is older than that when Shutdown begins.
const shutdownBound = 5*time.Second + 2*time.Second

// TestRestart: SIGTERM stops the webhook gracefully (exit 0 within seconds);
// started again, it reports ready only once its caches have synced, and
// places Shoots again.
func TestRestart(t *testing.T) {
	st := need(t)
	st.logOnFailure(t)
	st.cleanupShoots(t)
	st.waitSettled(t)
	ctx := context.Background()

	code, took, err := st.process().Stop(15 * time.Second)
	require.NoError(t, err)
	t.Logf("SIGTERM: exited with %d after %s", code, took.Round(time.Millisecond))
	assert.Equal(t, 0, code, "exit code after SIGTERM")
	assert.Less(t, took, shutdownBound, "graceful shutdown took too long")

	// While it is down, a Shoot that chooses no seed is admitted unplaced:
	// no fail-closed webhook is sent it (TestOutageAdmitsShootsThatChooseNoSeed
	// checks the rest of the outage).
	sh := newShoot(t.Name())
	require.NoError(t, st.c.Create(ctx, sh), "with the webhook down, a Shoot that chooses no seed is admitted")
	assert.Empty(t, admittedSeed(sh))

	held := st.proxy != nil
	if held {
		// The webhook's reads of Gardener objects wait at the proxy: its
		// caches cannot sync until Release.
		st.proxy.Hold()
		defer st.proxy.Release()
	}
	restarted := time.Now()
	require.NoError(t, st.startWebhook())
	p := st.process()

	eventually(t, 30*time.Second, func() error {
		if p.Exited() {
			return fmt.Errorf("webhook exited: %v", proc.DescribeExit(p.Err()))
		}
		if code, body := httpStatus(st.healthURL("/healthz")); code != http.StatusOK {
			return fmt.Errorf("/healthz: %d %s", code, body)
		}
		return nil
	}, "the restarted webhook does not answer /healthz")

	if held {
		eventually(t, 10*time.Second, func() error {
			if st.proxy.Held() == 0 {
				return fmt.Errorf("no request of the webhook is held at the proxy yet")
			}
			return nil
		})
		// Up and serving, caches not synced: not ready, for as long as that lasts.
		notReadyUntil := time.Now().Add(time.Second)
		var polls int
		for time.Now().Before(notReadyUntil) {
			code, body := httpStatus(st.healthURL("/readyz"))
			require.NotEqual(t, http.StatusOK, code, "/readyz is 200 while the webhook's caches cannot have synced: %s", body)
			polls++
			time.Sleep(50 * time.Millisecond)
		}
		code, body := httpStatus(st.healthURL("/readyz?verbose"))
		t.Logf("caches held back: /readyz answered %d in %d polls over 1s; last:\n%s", code, polls, strings.TrimSpace(body))
		st.proxy.Release()
	}

	// Ready exactly when synced: the first 200 must come with a full cache.
	var readyAfter time.Duration
	eventually(t, 60*time.Second, func() error {
		if p.Exited() {
			return fmt.Errorf("webhook exited: %v", proc.DescribeExit(p.Err()))
		}
		code, body := httpStatus(st.healthURL("/readyz"))
		if code != http.StatusOK {
			return fmt.Errorf("/readyz: %d %s", code, body)
		}
		readyAfter = time.Since(restarted)
		return nil
	}, "the restarted webhook does not become ready")
	require.NoError(t, st.cacheMatches(ctx), "ready, but the cache is not synced")
	t.Logf("restarted webhook ready %s after start", readyAfter.Round(time.Millisecond))

	// And it places again.
	placed := newShoot(t.Name(), awsShoot("eu-central-1", "eu-central-1b"))
	want := st.simulate(t, placed)
	require.NoError(t, st.c.Create(ctx, placed))
	assert.Equal(t, want.Seed, admittedSeed(placed))
	assert.Equal(t, want.Seed, st.placedSeed(t, placed))
}

// TestFreedPlaceTakenAtOnce: a Shoot's life on a full seed frees a place
// the moment it ends. A set's one seed with room for 2 (no SeedAutoscaler)
// and 4 Shoots only it may take: 2 are bound, 2 wait. 20 Seed events that
// placement reads (label changes of the full seed) leave the pending
// Shoots' backoff at its first step: seedwarden_pending_shoots_longest_backoff_seconds
// stays at pendingShoots.backoffBase (30 s) throughout, where counting each
// event as a failed attempt would have run it up to its 5 m cap. Then the
// bound Shoots are deleted one after the other: each time the Shoot pending
// longest is bound within 10 s of the delete, well inside the backoff.
func TestFreedPlaceTakenAtOnce(t *testing.T) {
	st := need(t)
	st.startTest(t, webhookPlace)
	ctx := context.Background()
	const set, perSeed, flood = "e2e-freed", 2, 4
	const backoffBase, placeToBind = 30 * time.Second, 10 * time.Second
	_, _, shoots := st.floodOneSeedSet(t, set, perSeed, flood)
	waiting := unbound(t, shoots)
	require.Equal(t, shoots[perSeed:], waiting, "the first Shoots took the places")
	first := &api.Shoot{}
	require.NoError(t, st.c.Get(ctx, waiting[0], first))
	// Their first attempts failed at CREATE; the backoff's own next attempt
	// is due 30 s later. What follows must happen before it.
	due := first.CreationTimestamp.Add(backoffBase - time.Second)

	full := &api.Seed{}
	full.Name = set + "-0"
	for i := range 20 {
		patch := fmt.Sprintf(`{"metadata":{"labels":{"e2e.seedwarden.io/tick":"%d"}}}`, i)
		require.NoError(t, st.c.Patch(ctx, full, client.RawPatch(types.MergePatchType, []byte(patch))), "Seed event %d", i)
	}
	// Held for 2 s after the events, sampled every 100 ms.
	for held := time.Now().Add(2 * time.Second); time.Now().Before(held); time.Sleep(100 * time.Millisecond) {
		samples, err := scrape(st.metricsURL())
		require.NoError(t, err)
		require.Equal(t, backoffBase.Seconds(), gaugeOf(samples, "seedwarden_pending_shoots_longest_backoff_seconds"),
			"a pending Shoot's backoff moved past its first step after Seed events")
	}
	require.True(t, time.Now().Before(due), "the Seed events took until the backoff's own attempt (%s after the CREATE): the test cannot tell them apart", backoffBase)
	assert.Equal(t, waiting, unbound(t, shoots), "the Seed events freed nothing")

	for i, gone := range shoots[:perSeed] {
		sh := &api.Shoot{}
		require.NoError(t, st.c.Get(ctx, gone, sh))
		require.NoError(t, st.deleteShoot(ctx, sh))
		deleted := time.Now()
		next := waiting[i]
		b := st.waitBinds(t, []types.NamespacedName{next}, 30*time.Second)[next]
		took := b.at.Sub(deleted)
		t.Logf("Shoot %s deleted; %s bound to %s %s later", gone.Name, next.Name, b.seed, took.Round(10*time.Millisecond))
		assert.Equal(t, full.Name, b.seed)
		assert.LessOrEqual(t, took, placeToBind, "Shoot %s waited for the place %s freed", next.Name, gone.Name)
	}
}

// gaugeOf is the value of the unlabelled gauge name in samples (0 when
// missing).
func gaugeOf(samples []sample, name string) float64 {
	for _, smp := range samples {
		if smp.name == name {
			return smp.value
		}
	}
	return 0
}
