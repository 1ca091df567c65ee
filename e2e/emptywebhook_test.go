package e2e

import (
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"time"

	"github.com/seedwarden/seedwarden/hack/devcerts/certgen"
)

// emptyWebhook is the baseline of TestCreateLatencyWebhooks: a TLS server
// in the test process that admits every review without looking at it, the
// cost of the webhook mechanism itself (the API server's round trips) with
// none of seedwarden's work. It serves with the suite's serving
// certificate, so the registered CA bundle trusts it.
type emptyWebhook struct {
	srv  *http.Server
	port int
}

func startEmptyWebhook(certDir string) (*emptyWebhook, error) {
	cert, err := tls.LoadX509KeyPair(filepath.Join(certDir, certgen.CertFile), filepath.Join(certDir, certgen.KeyFile))
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	// HTTP/1.1 only, as seedwarden's server (and the API server's webhook
	// client) has it.
	tc := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}}
	w := &emptyWebhook{port: ln.Addr().(*net.TCPAddr).Port}
	w.srv = &http.Server{Handler: http.HandlerFunc(admitAll), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 90 * time.Second}
	go func() {
		if err := w.srv.Serve(tls.NewListener(ln, tc)); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Printf("e2e: empty webhook: %v\n", err)
		}
	}()
	return w, nil
}

func (w *emptyWebhook) Close() { _ = w.srv.Close() }

// url is u (a registered webhook's URL) pointed at this server, same path.
func (w *emptyWebhook) url(u string) (string, error) {
	p, err := url.Parse(u)
	if err != nil {
		return "", err
	}
	p.Host = fmt.Sprintf("127.0.0.1:%d", w.port)
	return p.String(), nil
}

// admitAll answers an AdmissionReview with allowed and no patch; it reads
// only the request's uid.
func admitAll(rw http.ResponseWriter, r *http.Request) {
	var review struct {
		Request struct {
			UID string `json:"uid"`
		} `json:"request"`
	}
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil {
		http.Error(rw, err.Error(), http.StatusBadRequest)
		return
	}
	rw.Header().Set("Content-Type", "application/json")
	_, _ = fmt.Fprintf(rw, `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":%q,"allowed":true}}`,
		review.Request.UID)
}
