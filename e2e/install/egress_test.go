package install

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
)

// egressProxy is the cluster and control-plane egress of kube-apiserver
// (webhooks by Service and by URL): an HTTP CONNECT proxy
// on a unix socket (kube-apiserver 1.36 dials a TCP one only with TLS and a
// client certificate; with none configured it panics at start) that maps the Service names webhook
// configurations name (seedwarden.seedwarden.svc:443, or a URL's host) to
// the local ports of the processes that play their pods. kube-apiserver dials through it with
// the Service's name as TLS server name, so the serving certificate's names
// are checked as in a cluster. An unknown name is refused (502).
type egressProxy struct {
	l net.Listener

	mu      sync.Mutex
	routes  map[string]string // host:port asked for -> address dialled
	tunnels map[string]int    // host:port -> CONNECTs tunnelled
	refused map[string]int    // host:port -> CONNECTs refused
}

func startEgressProxy(t *testing.T, dir string) *egressProxy {
	t.Helper()
	l, err := net.Listen("unix", filepath.Join(dir, "egress.sock"))
	must(t, err)
	p := &egressProxy{l: l, routes: map[string]string{}, tunnels: map[string]int{}, refused: map[string]int{}}
	go p.serve()
	t.Cleanup(func() { l.Close() })
	return p
}

// socket is the unix socket the egress configuration names.
func (p *egressProxy) socket() string { return p.l.Addr().String() }

// route makes CONNECTs to hostPort reach addr.
func (p *egressProxy) route(hostPort, addr string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.routes[hostPort] = addr
}

// served is how many CONNECTs were tunnelled so far.
func (p *egressProxy) served() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, c := range p.tunnels {
		n += c
	}
	return n
}

func (p *egressProxy) serve() {
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		go p.tunnel(c)
	}
}

func (p *egressProxy) tunnel(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	if req.Method != http.MethodConnect {
		_, _ = io.WriteString(c, "HTTP/1.1 405 Method Not Allowed\r\n\r\n")
		return
	}
	p.mu.Lock()
	addr, ok := p.routes[req.Host]
	if ok {
		p.tunnels[req.Host]++
	} else {
		p.refused[req.Host]++
	}
	p.mu.Unlock()
	if !ok {
		_, _ = io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\n\r\nno route to "+req.Host+"\n")
		return
	}
	up, err := net.Dial("tcp", addr)
	if err != nil {
		_, _ = io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\n\r\n"+err.Error()+"\n")
		return
	}
	defer up.Close()
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, br); closeWrite(up); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, up); closeWrite(c); done <- struct{}{} }()
	<-done
	<-done
}

func closeWrite(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
}
