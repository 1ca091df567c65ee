package e2e

import (
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/rest"
)

// apiProxy sits between the webhook and the API server: plain HTTP on
// localhost towards the webhook, the webhook user's client certificate
// towards the API server. It lets a test hold back the webhook's reads of
// Gardener objects, to observe the webhook before its caches have synced.
type apiProxy struct {
	addr string
	rp   *httputil.ReverseProxy

	mu   sync.Mutex
	srv  *http.Server  // nil while cut
	hold chan struct{} // non-nil: Gardener requests wait until it is closed
	held atomic.Int64  // requests waiting now

	countMu sync.Mutex
	counts  map[string]int // by "METHOD resource[/subresource]", watches left out
}

func startProxy(cfg *rest.Config) (*apiProxy, error) {
	target, err := url.Parse(cfg.Host)
	if err != nil {
		return nil, err
	}
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, err
	}
	p := &apiProxy{rp: &httputil.ReverseProxy{
		Rewrite:   func(r *httputil.ProxyRequest) { r.SetURL(target) },
		Transport: rt,
		// Watches stream: pass every event on at once.
		FlushInterval: -1,
		// A watch cut by the webhook's shutdown is no news.
		ErrorLog: log.New(io.Discard, "", 0),
	}}
	p.addr = "127.0.0.1:0"
	if err := p.serve(); err != nil {
		return nil, err
	}
	return p, nil
}

// serve listens on p.addr (a fixed port once the first listen chose one).
func (p *apiProxy) serve() error {
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		return err
	}
	p.addr = ln.Addr().String()
	srv := &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	p.srv = srv
	go func() {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			fmt.Printf("e2e: API proxy stopped: %v\n", err)
		}
	}()
	return nil
}

// Cut stands in for an API server that goes away: every open connection
// (the webhook's watches included) is closed and new ones are refused,
// until Restore.
func (p *apiProxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.srv != nil {
		_ = p.srv.Close()
		p.srv = nil
	}
}

// Restore listens again on the same address.
func (p *apiProxy) Restore() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.srv != nil {
		return nil
	}
	return p.serve()
}

// URL is what the webhook's kubeconfig points to.
func (p *apiProxy) URL() string { return "http://" + p.addr }

func (p *apiProxy) Close() { p.Cut() }

// Hold makes every request for core.gardener.cloud objects (lists and
// watches) wait until Release.
func (p *apiProxy) Hold() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.hold == nil {
		p.hold = make(chan struct{})
	}
}

// Release lets held requests through.
func (p *apiProxy) Release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.hold != nil {
		close(p.hold)
		p.hold = nil
	}
}

// Held is the number of requests waiting now.
func (p *apiProxy) Held() int64 { return p.held.Load() }

// Counts returns how many requests the webhook sent through the proxy, by
// method and resource ("PUT configmaps", "PATCH shoots/binding"), watches
// left out (they are long-running, not per Shoot).
func (p *apiProxy) Counts() map[string]int {
	p.countMu.Lock()
	defer p.countMu.Unlock()
	out := make(map[string]int, len(p.counts))
	for k, v := range p.counts {
		out[k] = v
	}
	return out
}

func (p *apiProxy) count(r *http.Request) {
	if r.URL.Query().Get("watch") == "true" {
		return
	}
	k := r.Method + " " + resourceOf(r.URL.Path)
	p.countMu.Lock()
	defer p.countMu.Unlock()
	if p.counts == nil {
		p.counts = map[string]int{}
	}
	p.counts[k]++
}

// resourceOf is the resource (and subresource) a request path names:
// /api/v1/namespaces/ns/configmaps/name is "configmaps",
// /apis/core.gardener.cloud/v1beta1/namespaces/ns/shoots/name/binding
// "shoots/binding"; any other path is itself.
func resourceOf(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		parts = parts[3:]
	default:
		return path
	}
	if len(parts) >= 3 && parts[0] == "namespaces" {
		parts = parts[2:]
	}
	if len(parts) >= 3 {
		return parts[0] + "/" + parts[2]
	}
	return parts[0]
}

func (p *apiProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.count(r)
	if strings.HasPrefix(r.URL.Path, "/apis/core.gardener.cloud/") {
		p.mu.Lock()
		hold := p.hold
		p.mu.Unlock()
		if hold != nil {
			p.held.Add(1)
			select {
			case <-hold:
				p.held.Add(-1)
			case <-r.Context().Done():
				p.held.Add(-1)
				return
			}
		}
	}
	p.rp.ServeHTTP(w, r)
}
