package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/seedwarden/seedwarden/e2e/proc"
	"github.com/seedwarden/seedwarden/hack/devcerts/certgen"
)

// Helpers of the multi-replica tests (replicas_test.go, faults_test.go): more
// webhook processes, their certificates, and a TCP load balancer in front of
// them that stands in for the Service.

// ---------------------------------------------------------------- certificates

// newReplicaCA issues serving certificates for extra replicas. (certgen
// keeps no CA key in the suite's certificate directory, so the suite's own
// CA cannot sign more.)
func newReplicaCA() (*certgen.Authority, error) {
	return certgen.NewAuthority("seedwarden e2e replicas CA", time.Now())
}

// issueServing writes a serving certificate of ca for servingHosts, its key
// and the CA into dir, named as the webhook expects them.
func issueServing(ca *certgen.Authority, dir string) error {
	pair, err := ca.IssueServing(servingHosts, time.Now())
	if err != nil {
		return err
	}
	return certgen.WriteServing(dir, ca, pair)
}

// ---------------------------------------------------------------- replicas

// replica is an extra webhook process.
type replica struct {
	name    string
	proc    *webhookProcess
	ports   ports
	logPath string
}

func (r *replica) webhookAddr() string { return fmt.Sprintf("127.0.0.1:%d", r.ports.webhook) }
func (r *replica) metricsURL() string {
	return fmt.Sprintf("http://127.0.0.1:%d/metrics", r.ports.metrics)
}

// startReplica starts another `webhook serve` with the suite's configuration
// (webhookConfig: the same key, Lease and capacity coordination), its own
// ports and a certificate from ca; t's cleanup stops it and shows its log on
// failure. It does not wait for readiness.
func (st *suite) startReplica(t *testing.T, name string, ca *certgen.Authority) *replica {
	t.Helper()
	return st.startReplicaWith(t, name, ca, replicaOptions{})
}

// replicaOptions change what startReplicaWith starts.
type replicaOptions struct {
	kubeconfig string // "": the suite's
	config     string // appended to the configuration file
	server     string // more fields of its server section ("  key: value\n")
	lease      string // "": the suite's Lease (leaderElection.id)
	// reservationTTL replaces the suite's (5s); "": the suite's.
	reservationTTL string
	// replace replaces text of the suite's configuration ({old, new}; old
	// must be in it), e.g. to add a field to a section.
	replace [][2]string
}

// startReplicaWith is startReplica with options.
func (st *suite) startReplicaWith(t *testing.T, name string, ca *certgen.Authority, o replicaOptions) *replica {
	t.Helper()
	r := &replica{name: name, logPath: filepath.Join(st.work, "webhook-"+name+".log")}
	var err error
	for _, p := range []*int{&r.ports.webhook, &r.ports.metrics, &r.ports.health} {
		*p, err = freePort()
		require.NoError(t, err)
	}
	certDir := filepath.Join(st.work, "certs-"+name)
	require.NoError(t, issueServing(ca, certDir))
	cfg, _, err := webhookConfig(r.ports, certDir, st.work)
	require.NoError(t, err)
	cfgPath := filepath.Join(st.work, "config-"+name+".yaml")
	cfg = strings.Replace(cfg, "\nserver:\n", "\nserver:\n"+o.server, 1)
	if o.lease != "" {
		const suiteLease = "  id: seedwarden-pending-shoots\n"
		require.Contains(t, cfg, suiteLease)
		cfg = strings.Replace(cfg, suiteLease, "  id: "+o.lease+"\n", 1)
	}
	if o.reservationTTL != "" {
		const suiteTTL = "\nreservationTTL: 5s\n"
		require.Contains(t, cfg, suiteTTL)
		cfg = strings.Replace(cfg, suiteTTL, "\nreservationTTL: "+o.reservationTTL+"\n", 1)
	}
	for _, r := range o.replace {
		require.Contains(t, cfg, r[0])
		cfg = strings.Replace(cfg, r[0], r[1], 1)
	}
	require.NoError(t, os.WriteFile(cfgPath, []byte(cfg+o.config), 0o644))
	if o.kubeconfig == "" {
		o.kubeconfig = st.kubeconfig
	}
	r.proc, err = st.startProcessWith(cfgPath, o.kubeconfig, r.logPath)
	require.NoError(t, err)
	t.Cleanup(func() {
		if !r.proc.Exited() {
			if _, _, err := r.proc.Stop(15 * time.Second); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
		if t.Failed() {
			if lines, err := readLines(r.logPath, 0); err == nil {
				if len(lines) > 100 {
					lines = lines[len(lines)-100:]
				}
				t.Logf("%s's log (last %d lines):\n  | %s", name, len(lines), strings.Join(lines, "\n  | "))
			}
		}
	})
	return r
}

// waitReplicaReady polls the replica's /readyz.
func waitReplicaReady(r *replica, timeout time.Duration) error {
	return poll(context.Background(), timeout, 100*time.Millisecond, func() error {
		if r.proc.Exited() {
			return fmt.Errorf("%s exited: %s", r.name, proc.DescribeExit(r.proc.Err()))
		}
		if code, body := httpStatus(fmt.Sprintf("http://127.0.0.1:%d/readyz", r.ports.health)); code != http.StatusOK {
			return fmt.Errorf("%s /readyz: %d %s", r.name, code, strings.TrimSpace(body))
		}
		return nil
	})
}

// ---------------------------------------------------------------- load balancer

// roundRobin is a TCP load balancer on 127.0.0.1, like a Service's: each
// connection goes to the next backend in turn, TLS passes through untouched
// (the API server verifies each replica's own certificate).
type roundRobin struct {
	ln       net.Listener
	backends []string
	next     atomic.Uint64
	conns    []atomic.Int64 // accepted per backend
	removed  []atomic.Bool  // out of rotation

	mu     sync.Mutex
	open   map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

func startRoundRobin(backends []string) (*roundRobin, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	lb := &roundRobin{ln: ln, backends: backends, conns: make([]atomic.Int64, len(backends)),
		removed: make([]atomic.Bool, len(backends)), open: map[net.Conn]struct{}{}}
	lb.wg.Add(1)
	go lb.serve()
	return lb, nil
}

func (lb *roundRobin) Addr() string { return lb.ln.Addr().String() }

// Connections is how many connections each backend got.
func (lb *roundRobin) Connections() []int64 {
	out := make([]int64, len(lb.conns))
	for i := range lb.conns {
		out[i] = lb.conns[i].Load()
	}
	return out
}

func (lb *roundRobin) serve() {
	defer lb.wg.Done()
	for {
		c, err := lb.ln.Accept()
		if err != nil {
			return
		}
		i, ok := lb.pick()
		if !ok {
			c.Close()
			continue
		}
		lb.conns[i].Add(1)
		if !lb.track(c) {
			c.Close()
			return
		}
		lb.wg.Add(1)
		go lb.pipe(c, lb.backends[i])
	}
}

// pick is the next backend in rotation; false when none is.
func (lb *roundRobin) pick() (int, bool) {
	for range lb.backends {
		i := int((lb.next.Add(1) - 1) % uint64(len(lb.backends)))
		if !lb.removed[i].Load() {
			return i, true
		}
	}
	return 0, false
}

// Remove takes backend i out of rotation for new connections, as the
// endpoints controller takes an unready or terminating pod out of a
// Service; its open connections stay.
func (lb *roundRobin) Remove(i int) { lb.removed[i].Store(true) }

func (lb *roundRobin) track(c net.Conn) bool {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	if lb.closed {
		return false
	}
	lb.open[c] = struct{}{}
	return true
}

func (lb *roundRobin) untrack(c net.Conn) {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	delete(lb.open, c)
}

func (lb *roundRobin) pipe(client net.Conn, backend string) {
	defer lb.wg.Done()
	defer lb.untrack(client)
	defer client.Close()
	server, err := net.DialTimeout("tcp", backend, 2*time.Second)
	if err != nil {
		return
	}
	if !lb.track(server) {
		server.Close()
		return
	}
	defer lb.untrack(server)
	defer server.Close()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(server, client); done <- struct{}{} }()
	go func() { _, _ = io.Copy(client, server); done <- struct{}{} }()
	<-done // either side gone: close both (the deferred Closes end the other copy)
}

// Close stops accepting and cuts every connection.
func (lb *roundRobin) Close() {
	lb.mu.Lock()
	lb.closed = true
	for c := range lb.open {
		c.Close()
	}
	lb.mu.Unlock()
	_ = lb.ln.Close()
	lb.wg.Wait()
}

// ---------------------------------------------------------------- registration

// pointWebhooks makes every registered webhook call addr (host:port, same
// paths) and trust bundle, as if the Service behind
// clientConfig.service now led there.
func (st *suite) pointWebhooks(ctx context.Context, addr string, bundle []byte) error {
	rewrite := func(cc *admissionregistrationv1.WebhookClientConfig) error {
		return pointClientConfig(cc, addr, bundle)
	}
	var mwc admissionregistrationv1.MutatingWebhookConfiguration
	if err := st.c.Get(ctx, keyOf("", "seedwarden"), &mwc); err != nil {
		return err
	}
	for i := range mwc.Webhooks {
		if err := rewrite(&mwc.Webhooks[i].ClientConfig); err != nil {
			return err
		}
	}
	if err := st.c.Update(ctx, &mwc); err != nil {
		return err
	}
	var vwc admissionregistrationv1.ValidatingWebhookConfiguration
	if err := st.c.Get(ctx, keyOf("", "seedwarden"), &vwc); err != nil {
		return err
	}
	for i := range vwc.Webhooks {
		if err := rewrite(&vwc.Webhooks[i].ClientConfig); err != nil {
			return err
		}
	}
	if err := st.c.Update(ctx, &vwc); err != nil {
		return err
	}
	st.caBundle = slices.Clone(bundle)
	return nil
}

// pointClientConfig makes cc call addr (host:port, same path), trusting
// bundle.
func pointClientConfig(cc *admissionregistrationv1.WebhookClientConfig, addr string, bundle []byte) error {
	if cc.URL == nil {
		return errors.New("webhook without url")
	}
	u, err := url.Parse(*cc.URL)
	if err != nil {
		return err
	}
	u.Host = addr
	s := u.String()
	cc.URL, cc.CABundle = &s, slices.Clone(bundle)
	return nil
}

// routeWebhooks points every registered webhook at addr, trusting bundle,
// and waits until the API server calls it there: a dry-run CREATE comes
// back placed and check (nil for none) passes. The returned restore, also
// run at t's cleanup, points them back at the suite's webhook and waits
// until a dry run is placed again; calling it twice does nothing.
func (st *suite) routeWebhooks(t *testing.T, addr string, bundle []byte, check func() error) (restore func()) {
	t.Helper()
	ctx := context.Background()
	probe := func() *unstructured.Unstructured {
		return newShoot(t.Name(), awsShoot("eu-central-1", "eu-central-1a"))
	}
	home, homeBundle := st.webhookAddr(), slices.Clone(st.caBundle)
	restored := false
	restore = func() {
		if restored {
			return
		}
		restored = true
		require.NoError(t, st.pointWebhooks(ctx, home, homeBundle))
		require.NoError(t, st.dryRunUntil(ctx, 20*time.Second, eventuallyInterval, probe, onAnySeed),
			"the suite's webhook registration does not take effect again")
	}
	t.Cleanup(restore)
	require.NoError(t, st.pointWebhooks(ctx, addr, bundle))
	err := st.dryRunUntil(ctx, 20*time.Second, eventuallyInterval, probe, func(sh *unstructured.Unstructured) error {
		if err := onAnySeed(sh); err != nil {
			return err
		}
		if check != nil {
			return check()
		}
		return nil
	})
	require.NoError(t, err, "the API server does not call the webhooks at %s", addr)
	return restore
}
