package leadership

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/seedwarden/seedwarden/hack/devcerts/certgen"
	"github.com/seedwarden/seedwarden/internal/testenv"
)

const envtestLeaseName = "leadership-envtest"

// TestEnvtestLostLease: two managers against a real kube-apiserver, each
// with a webhook server and a Runner on one Lease; the first's Lease
// client goes through a proxy. Its connection cut, the first stops its
// leader-only work (a watch of ConfigMaps over the shared cache) while its
// webhook server answers every request and its manager runs on; the second
// takes over. Back, the first follows; when the second shuts down (and
// releases the Lease) the first leads again; its own shutdown releases the
// Lease.
func TestEnvtestLostLease(t *testing.T) {
	_, cfg := testenv.Start(t)
	ctx := context.Background()
	c, err := client.New(cfg, client.Options{})
	require.NoError(t, err)

	proxy := startTCPProxy(t, cfg.Host)
	viaProxy := rest.CopyConfig(cfg)
	viaProxy.Host = "https://" + proxy.addr
	a := startEnvtestReplica(t, cfg, viaProxy, "a")
	require.Eventually(t, func() bool { return a.runner.Leading() && a.working.Load() == 1 }, 30*time.Second, 50*time.Millisecond, "a does not lead")
	assert.Equal(t, a.identity, holder(ctx, t, c))
	b := startEnvtestReplica(t, cfg, cfg, "b")

	// Every request to a's webhook server is answered, from the cut until
	// a leads again.
	stopProbe, failures := a.probeWebhook(t)

	proxy.cut()
	require.Eventually(t, func() bool { return b.runner.Leading() && holder(ctx, t, c) == b.identity }, 60*time.Second, 50*time.Millisecond, "b does not take over")
	assert.False(t, a.runner.Leading(), "a still leads")
	assert.Zero(t, a.working.Load(), "a's leader-only work still runs")
	assert.True(t, a.alive(), "a's manager stopped")
	proxy.restore(t)

	time.Sleep(3 * testRetry)
	assert.False(t, a.runner.Leading(), "a leads while b renews")
	b.shutdown(t)
	require.Eventually(t, func() bool { return a.runner.Leading() && a.working.Load() == 1 }, 10*time.Second, 50*time.Millisecond, "a does not lead again")
	assert.Equal(t, a.identity, holder(ctx, t, c))
	assert.Equal(t, 2, a.runner.Terms())
	// The new term's watch works: it sees a ConfigMap created now.
	require.NoError(t, c.Create(ctx, &corev1.ConfigMap{ObjectMeta: objectMeta("after-rejoin")}))
	require.Eventually(t, func() bool { return a.seen("after-rejoin") }, 10*time.Second, 50*time.Millisecond, "the second term's watch sees nothing")

	stopProbe()
	assert.Empty(t, *failures, "a's webhook server failed requests")
	assert.Equal(t, 1, a.metrics.get(EndLeaseLost))

	a.shutdown(t)
	assert.Empty(t, holder(ctx, t, c), "the Lease is not released on shutdown")
}

func objectMeta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: "default", Name: name}
}

// envtestReplica is a manager with a webhook server and a Runner whose
// work watches ConfigMaps through the term's cache.
type envtestReplica struct {
	mgr      ctrl.Manager
	runner   *Runner
	identity string
	metrics  *countingRecorder
	working  atomic.Int32
	webhook  string
	client   *http.Client
	stop     context.CancelFunc
	done     chan struct{} // closed when Start returned, with err
	err      error

	mu        sync.Mutex
	seenNames map[string]bool
}

func startEnvtestReplica(t *testing.T, cfg, leaseCfg *rest.Config, name string) *envtestReplica {
	t.Helper()
	dir := t.TempDir()
	ca, err := certgen.NewAuthority("leadership test CA", time.Now())
	require.NoError(t, err)
	pair, err := ca.IssueServing([]string{"127.0.0.1"}, time.Now())
	require.NoError(t, err)
	require.NoError(t, certgen.WriteServing(dir, ca, pair))
	port := freePort(t)
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		WebhookServer:          webhook.NewServer(webhook.Options{Host: "127.0.0.1", Port: port, CertDir: dir}),
		Logger:                 testr.New(t).WithValues("replica", name),
	})
	require.NoError(t, err)
	mgr.GetWebhookServer().Register("/ping", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "pong") }))
	lock, err := NewLock(leaseCfg, mgr, "default", envtestLeaseName)
	require.NoError(t, err)
	r := &envtestReplica{mgr: mgr, identity: lock.Identity(), metrics: &countingRecorder{}, webhook: fmt.Sprintf("https://127.0.0.1:%d/ping", port), seenNames: map[string]bool{}}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca.CertPEM)
	r.client = &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	r.runner = New(mgr.GetCache(), Options{
		Lock: lock, Name: envtestLeaseName, Log: testr.New(t).WithValues("replica", name), Metrics: r.metrics,
		LeaseDuration: 3 * testLease, RenewDeadline: 3 * testRenew, RetryPeriod: testRetry,
	})
	r.runner.Add("configmaps", r.watchConfigMaps)
	require.NoError(t, mgr.Add(r.runner))
	ctx, stop := context.WithCancel(context.Background())
	r.stop, r.done = stop, make(chan struct{})
	go func() { r.err = mgr.Start(ctx); close(r.done) }()
	t.Cleanup(func() {
		if r.alive() {
			r.shutdown(t)
		}
	})
	return r
}

// watchConfigMaps is leader-only work: a handler on the shared ConfigMap
// informer for the term.
func (r *envtestReplica) watchConfigMaps(ctx context.Context, c cache.Cache) error {
	i, err := c.GetInformer(ctx, &corev1.ConfigMap{})
	if err != nil {
		return err
	}
	if _, err := i.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		if cm, ok := obj.(*corev1.ConfigMap); ok {
			r.mu.Lock()
			r.seenNames[cm.Name] = true
			r.mu.Unlock()
		}
	}}); err != nil {
		return err
	}
	r.working.Add(1)
	defer r.working.Add(-1)
	<-ctx.Done()
	return nil
}

func (r *envtestReplica) seen(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seenNames[name]
}

func (r *envtestReplica) alive() bool {
	select {
	case <-r.done:
		return false
	default:
		return true
	}
}

// shutdown stops the manager and waits for it.
func (r *envtestReplica) shutdown(t *testing.T) {
	t.Helper()
	r.stop()
	select {
	case <-r.done:
		assert.NoError(t, r.err, "the manager")
	case <-time.After(time.Minute):
		t.Fatal("the manager does not stop")
	}
}

// probeWebhook asks the webhook server every 50 ms until stop; failures
// lists the requests that were not answered 200.
func (r *envtestReplica) probeWebhook(t *testing.T) (stop func(), failures *[]string) {
	t.Helper()
	var (
		out  []string
		wg   sync.WaitGroup
		done = make(chan struct{})
	)
	start := time.Now()
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			case <-time.After(50 * time.Millisecond):
			}
			resp, err := r.client.Get(r.webhook)
			switch {
			case err != nil:
				out = append(out, fmt.Sprintf("%s: %v", time.Since(start).Round(time.Millisecond), err))
			default:
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					out = append(out, fmt.Sprintf("%s: %s", time.Since(start).Round(time.Millisecond), resp.Status))
				}
			}
		}
	}()
	return func() { close(done); wg.Wait() }, &out
}

func holder(ctx context.Context, t *testing.T, c client.Client) string {
	t.Helper()
	var l coordinationv1.Lease
	require.NoError(t, c.Get(ctx, types.NamespacedName{Namespace: "default", Name: envtestLeaseName}, &l))
	if l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// tcpProxy forwards TCP connections to the API server; cut closes every
// connection and refuses new ones until restore, as an unreachable API
// server would.
type tcpProxy struct {
	addr, target string
	mu           sync.Mutex
	ln           net.Listener
	conns        map[net.Conn]struct{}
}

func startTCPProxy(t *testing.T, host string) *tcpProxy {
	t.Helper()
	u, err := url.Parse(host)
	require.NoError(t, err)
	p := &tcpProxy{addr: "127.0.0.1:0", target: u.Host, conns: map[net.Conn]struct{}{}}
	require.NoError(t, p.listen())
	t.Cleanup(p.cut)
	return p
}

func (p *tcpProxy) listen() error {
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.addr, p.ln = ln.Addr().String(), ln
	p.mu.Unlock()
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", p.target)
			if err != nil {
				_ = in.Close()
				continue
			}
			p.mu.Lock()
			p.conns[in], p.conns[out] = struct{}{}, struct{}{}
			p.mu.Unlock()
			go func() { _, _ = io.Copy(out, in); _ = out.Close() }()
			go func() { _, _ = io.Copy(in, out); _ = in.Close() }()
		}
	}()
	return nil
}

func (p *tcpProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		_ = p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		_ = c.Close()
	}
	clear(p.conns)
}

func (p *tcpProxy) restore(t *testing.T) {
	require.NoError(t, p.listen(), "listening again on %s", p.addr)
}
