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
	srv  *http.Server
	addr string
	rp   *httputil.ReverseProxy

	mu   sync.Mutex
	hold chan struct{} // non-nil: Gardener requests wait until it is closed
	held atomic.Int64  // requests waiting now
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
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p.addr = ln.Addr().String()
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := p.srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			fmt.Printf("e2e: API proxy stopped: %v\n", err)
		}
	}()
	return p, nil
}

// URL is what the webhook's kubeconfig points to.
func (p *apiProxy) URL() string { return "http://" + p.addr }

func (p *apiProxy) Close() { _ = p.srv.Close() }

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

func (p *apiProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
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
