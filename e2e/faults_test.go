package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/handlers"
	"github.com/seedwarden/seedwarden/internal/metrics"
)

// TestAPIServerOutage: a replica whose connection to the API server goes
// away (its own proxy closes every connection, watches included, and
// refuses new ones, as a restarting or unreachable API server would).
// Within cache.maxStaleness (2s here) it keeps deciding; beyond it /readyz
// fails, the mutating webhook admits Shoots without a seed and warns, and
// the capacity webhook refuses seed changes. A Seed created meanwhile is
// not seen. Once the API server is back, the informers watch again, /readyz
// passes, and the replica places onto that Seed: the cache caught up with a
// change made while its watch was down.
func TestAPIServerOutage(t *testing.T) {
	st := need(t)
	st.logOnFailure(t)
	ctx := context.Background()
	const (
		maxStaleness = 2 * time.Second
		label        = "e2e.seedwarden.io/outage-test"
		newSeed      = "e2e-outage"
	)

	proxy, err := startProxy(st.webhookUser)
	require.NoError(t, err)
	t.Cleanup(proxy.Close)
	kubeconfig := filepath.Join(st.work, "kubeconfig-outage")
	require.NoError(t, st.writeKubeconfigFile(kubeconfig, proxy))
	ca, err := newReplicaCA()
	require.NoError(t, err)
	r := st.startReplicaWith(t, "outage", ca, replicaOptions{
		kubeconfig: kubeconfig,
		config:     fmt.Sprintf("cache:\n  maxStaleness: %s\n", maxStaleness),
	})
	require.NoError(t, waitReplicaReady(r, 60*time.Second))
	hc, err := st.tlsClient(ca.CertPEM)
	require.NoError(t, err)
	base := "https://" + r.webhookAddr()
	readyz := fmt.Sprintf("http://127.0.0.1:%d/readyz", r.ports.health)

	regular := newShoot(t.Name(), withName("e2e-outage-regular"))
	selective := newShoot(t.Name(), withName("e2e-outage-selective"), func(u *unstructured.Unstructured) {
		must(unstructured.SetNestedStringMap(u.Object, map[string]string{label: "true"}, "spec", "seedSelector", "matchLabels"))
	})
	place := func(t *testing.T, u *unstructured.Unstructured) *admissionv1.AdmissionResponse {
		return review(t, hc, base+"/mutate-shoots", shootCreate(t, types.UID("outage-"+u.GetName()), u))
	}
	staleWarning := func(resp *admissionv1.AdmissionResponse) bool {
		for _, w := range resp.Warnings {
			if strings.HasPrefix(w, handlers.StaleCacheWarningPrefix) {
				return true
			}
		}
		return false
	}

	// Before: places the regular Shoot, no seed takes the selective one.
	resp := place(t, regular)
	require.True(t, resp.Allowed)
	require.NotEmpty(t, patchedSeed(t, regular, resp.Patch), "placed while watching")
	resp = place(t, selective)
	require.True(t, resp.Allowed)
	require.Empty(t, patchedSeed(t, selective, resp.Patch), "no seed carries %s yet", label)

	cut := time.Now()
	proxy.Cut()
	restored := false
	defer func() {
		if !restored {
			_ = proxy.Restore()
		}
	}()

	// A seed that only the selective Shoot selects, created while the
	// replica cannot watch.
	var tmpl api.Seed
	require.NoError(t, st.c.Get(ctx, keyOf("", "aws-eu2"), &tmpl))
	sd := &api.Seed{
		ObjectMeta: metav1.ObjectMeta{Name: newSeed, Labels: map[string]string{label: "true", testLabel: labelValue(t.Name())}},
		Spec:       *tmpl.Spec.DeepCopy(),
		Status:     *tmpl.Status.DeepCopy(),
	}
	sd.Status.Allocatable = corev1.ResourceList{api.ResourceShoots: *resource.NewQuantity(10, resource.DecimalSI)}
	require.NoError(t, createWithStatus(ctx, st.c, sd))
	t.Cleanup(func() {
		if err := st.c.Delete(context.Background(), &api.Seed{ObjectMeta: metav1.ObjectMeta{Name: newSeed}}); client.IgnoreNotFound(err) != nil {
			t.Errorf("deleting seed %s: %v", newSeed, err)
		}
	})

	// Not ready once stale beyond the bound, and not before it.
	var notReadyAfter time.Duration
	var body string
	eventually(t, 20*time.Second, func() error {
		var code int
		code, body = httpStatus(readyz + "?verbose")
		if code == http.StatusOK {
			return fmt.Errorf("/readyz still 200 %s after the cut", time.Since(cut).Round(time.Millisecond))
		}
		notReadyAfter = time.Since(cut)
		return nil
	}, "the replica stays ready without a watch")
	t.Logf("not ready %s after the cut:\n%s", notReadyAfter.Round(time.Millisecond), strings.TrimSpace(body))
	assert.GreaterOrEqual(t, notReadyAfter, maxStaleness, "not ready before the bound")
	assert.Contains(t, body, "cache-freshness")
	staleSeconds := func() float64 {
		samples, err := scrape(r.metricsURL())
		require.NoError(t, err)
		return counterSum(samples, metrics.CacheStaleSecondsName, nil)
	}
	assert.GreaterOrEqual(t, staleSeconds(), maxStaleness.Seconds(), metrics.CacheStaleSecondsName)

	// Beyond the bound: admitted without a seed, with the warning.
	resp = place(t, regular)
	assert.True(t, resp.Allowed, "the mutating webhook admits while stale")
	assert.Empty(t, patchedSeed(t, regular, resp.Patch), "placed from a stale cache")
	assert.True(t, staleWarning(resp), "no stale-cache warning: %v", resp.Warnings)

	// The capacity webhook refuses a seed change (fail closed).
	if path, ok := st.registered[webhookSeed]; ok {
		manual := newShoot(t.Name(), withName("e2e-outage-manual"), withSeed("aws-eu2"))
		resp = review(t, hc, base+path, shootCreate(t, "outage-manual", manual))
		assert.False(t, resp.Allowed, "the capacity webhook checks a seed against a stale cache")
		if resp.Result != nil {
			assert.Contains(t, resp.Result.Message, "placement cache is stale")
		}
	}

	// Back: ready again once the informers watch again, and the Seed
	// created meanwhile is in the cache.
	back := time.Now()
	require.NoError(t, proxy.Restore())
	restored = true
	var readyAfter time.Duration
	eventually(t, 90*time.Second, func() error {
		if code, body := httpStatus(readyz); code != http.StatusOK {
			return fmt.Errorf("/readyz: %d %s", code, strings.TrimSpace(body))
		}
		readyAfter = time.Since(back)
		return nil
	}, "the replica does not become ready after the API server is back")
	t.Logf("ready %s after the API server came back (outage of %s)", readyAfter.Round(time.Millisecond), back.Sub(cut).Round(time.Millisecond))

	resp = place(t, selective)
	require.True(t, resp.Allowed)
	assert.False(t, staleWarning(resp), "still stale: %v", resp.Warnings)
	assert.Equal(t, newSeed, patchedSeed(t, selective, resp.Patch), "the Seed created during the outage is not in the cache")
	resp = place(t, regular)
	assert.NotEmpty(t, patchedSeed(t, regular, resp.Patch), "places again")
	assert.Zero(t, staleSeconds(), metrics.CacheStaleSecondsName)
}

// TestShutdownUnderLoad: two replicas behind the round-robin load balancer
// (the Service), server.shutdownDelay 1s, eight clients placing Shoots
// through it without pause on keep-alive connections. Replica A gets
// SIGTERM while a request to it is in flight (headers and half the body
// sent). A stops being ready at once and the balancer takes it out of
// rotation, as the endpoints controller would; A's answers now close their
// connections, so the clients reconnect, to B. The in-flight request is
// finished after the delay, while A's server is shutting down, and gets
// its answer; A exits 0; not one request of the load fails.
func TestShutdownUnderLoad(t *testing.T) {
	st := need(t)
	st.logOnFailure(t)
	const (
		clients = 8
		delay   = time.Second
	)
	ca, err := newReplicaCA()
	require.NoError(t, err)
	opts := replicaOptions{server: fmt.Sprintf("  shutdownDelay: %s\n", delay)}
	a := st.startReplicaWith(t, "drain-a", ca, opts)
	b := st.startReplicaWith(t, "drain-b", ca, opts)
	require.NoError(t, waitReplicaReady(a, 60*time.Second))
	require.NoError(t, waitReplicaReady(b, 60*time.Second))
	lb, err := startRoundRobin([]string{a.webhookAddr(), b.webhookAddr()})
	require.NoError(t, err)
	t.Cleanup(lb.Close)

	drain := newShoot(t.Name(), withName("e2e-drain"))
	body, err := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request:  shootCreate(t, "drain", drain),
	})
	require.NoError(t, err)
	placed := func(r io.Reader) error {
		var out admissionv1.AdmissionReview
		if err := json.NewDecoder(r).Decode(&out); err != nil {
			return err
		}
		if out.Response == nil || !out.Response.Allowed {
			return fmt.Errorf("not allowed: %+v", out.Response)
		}
		if seed, err := seedFromPatch(drain, out.Response.Patch); err != nil || seed == "" {
			return fmt.Errorf("not placed (%v): %+v", err, out.Response)
		}
		return nil
	}

	// The load.
	var served, failed atomic.Int64
	var firstErr atomic.Value
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range clients {
		hc, err := st.tlsClient(ca.CertPEM)
		require.NoError(t, err)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				err := func() error {
					resp, err := hc.Post("https://"+lb.Addr()+"/mutate-shoots", "application/json", bytes.NewReader(body))
					if err != nil {
						return err
					}
					defer resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						return fmt.Errorf("HTTP %d", resp.StatusCode)
					}
					return placed(resp.Body)
				}()
				if err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err)
					continue
				}
				served.Add(1)
			}
		}()
	}
	defer func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
		wg.Wait()
	}()
	require.Eventually(t, func() bool { return served.Load() > 100 }, 10*time.Second, 10*time.Millisecond, "no load")
	before := lb.Connections()

	// A request in flight at A: headers and half the body.
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(ca.CertPEM))
	conn, err := tls.Dial("tcp", a.webhookAddr(), &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12, Certificates: st.clientCerts})
	require.NoError(t, err)
	defer conn.Close()
	_, err = fmt.Fprintf(conn, "POST /mutate-shoots HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", a.webhookAddr(), len(body))
	require.NoError(t, err)
	_, err = conn.Write(body[:len(body)/2])
	require.NoError(t, err)
	time.Sleep(100 * time.Millisecond) // the server has the headers

	sigterm := time.Now()
	require.NoError(t, a.proc.Signal(syscall.SIGTERM))
	readyz := fmt.Sprintf("http://127.0.0.1:%d/readyz", a.ports.health)
	require.NoError(t, poll(context.Background(), 5*time.Second, 5*time.Millisecond, func() error {
		if code, _ := httpStatus(readyz); code == http.StatusOK {
			return errors.New("still ready")
		}
		return nil
	}), "A stays ready after SIGTERM")
	notReady := time.Since(sigterm)
	lb.Remove(0)

	// Past the delay A's server is shutting down; the request is still
	// in flight and gets its answer.
	time.Sleep(time.Until(sigterm.Add(delay + 500*time.Millisecond)))
	require.False(t, a.proc.Exited(), "A exited with a request in flight")
	_, err = conn.Write(body[len(body)/2:])
	require.NoError(t, err)
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err, "the in-flight request got no answer")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.True(t, resp.Close, "the answer while shutting down keeps the connection open")
	assert.NoError(t, placed(resp.Body), "the in-flight request")
	resp.Body.Close()

	select {
	case <-a.proc.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("A did not exit within 30s of SIGTERM")
	}
	exited := time.Since(sigterm)
	assert.Equal(t, 0, a.proc.ExitCode(), "A's exit code")

	// The load goes on, on B.
	servedAtExit := served.Load()
	require.Eventually(t, func() bool { return served.Load() > servedAtExit+100 }, 10*time.Second, 10*time.Millisecond, "B does not take the load")
	close(stop)
	wg.Wait()
	after := lb.Connections()
	t.Logf("SIGTERM to A: not ready after %s, exited 0 after %s; %d requests served, %d failed; connections A %d→%d, B %d→%d",
		notReady.Round(time.Millisecond), exited.Round(time.Millisecond), served.Load(), failed.Load(), before[0], after[0], before[1], after[1])
	assert.Zero(t, failed.Load(), "requests failed during the shutdown: first %v", firstErr.Load())
	assert.Greater(t, after[1], before[1], "no new connection went to B")
}
