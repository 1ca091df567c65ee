package server

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"strconv"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// selfProbeTimeout bounds one readiness probe of the webhook port, as
// controller-runtime's StartedChecker bounds its dial.
const selfProbeTimeout = 10 * time.Second

// SelfProbe is the /readyz check "webhook": it calls the webhook port as a
// client would (TCP, TLS with the serving certificate, one HTTP request)
// and passes when an HTTP answer comes back.
//
// Why not controller-runtime's webhook.Server.StartedChecker: it dials with
// TLS and no client certificate. With server.clientAuth on, every probe
// (kubelet's, every few seconds) was then refused as a client without a
// certificate: seedwarden_webhook_client_rejections_total{reason="missing"}
// grew by every probe and a TLS handshake error was logged each time, so the
// counter no longer told of API servers calling without a certificate. And
// in TLS 1.3 a client's handshake ends before the server has judged its
// certificate, so that dial passed even when the port refused everyone.
//
// SelfProbe presents a certificate of its own instead: self-signed, made
// when the process starts, its key never leaving the process's memory. The
// ClientVerifier accepts exactly that certificate (byte for byte; the TLS
// handshake proves the key), neither counting nor logging it, and nothing
// else changes for other clients. The probe's HTTP request goes to a path
// of its own, answered 204 and mounted beside the webhooks rather than registered with them, so that
// probes do not count in controller_runtime_webhook_requests_total; the
// answer proves that the port's TLS, its client verification and its HTTP
// server all work.
//
// Each probe also sees the certificate the port serves: served, when set,
// gets its notAfter (seedwarden_webhook_serving_certificate_expiry_timestamp_seconds),
// the one report of what this replica really serves after the kubelet's
// Secret sync and the server's reload, which cert-manager's series and
// internal/certwatch (the Certificate's status) cannot show.
type SelfProbe struct {
	url    string
	der    []byte
	http   *http.Client
	served func(notAfter time.Time)
}

// selfProbePath is the path the probe asks for; no handler serves it.
const selfProbePath = "/seedwarden-readiness-probe"

// NewSelfProbe is the probe of a webhook server on port (<= 0: controller-
// runtime's default port) on every local address.
func NewSelfProbe(port int) (*SelfProbe, error) {
	if port <= 0 {
		port = webhook.DefaultPort
	}
	cert, err := selfProbeCertificate(time.Now())
	if err != nil {
		return nil, fmt.Errorf("readiness probe certificate: %w", err)
	}
	// The probe checks that the port serves, not who serves it (the serving
	// certificate names the Service, not localhost), as controller-runtime's
	// check does; it sends nothing secret. Every probe is a new handshake:
	// the listener's truth, not a kept connection's.
	tlsConfig := &tls.Config{Certificates: []tls.Certificate{cert}, InsecureSkipVerify: true, MinVersion: tls.VersionTLS12} //nolint:gosec // see above
	tr := &http.Transport{TLSClientConfig: tlsConfig, DisableKeepAlives: true}
	return &SelfProbe{
		url:  "https://" + net.JoinHostPort("localhost", strconv.Itoa(port)) + selfProbePath,
		der:  cert.Certificate[0],
		http: &http.Client{Transport: tr, Timeout: selfProbeTimeout},
	}, nil
}

// selfProbeCertificate is a self-signed client certificate with a fresh
// P-256 key. Its validity is long on purpose: it is never verified against a
// CA or a clock, only compared with itself, and lives as long as the process.
func selfProbeCertificate(now time.Time) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "seedwarden readiness probe"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.AddDate(100, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

// Check is the healthz.Checker: nil once the port answers the probe.
func (p *SelfProbe) Check(r *http.Request) error {
	req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, p.url, nil)
	if err != nil {
		return err
	}
	resp, err := p.http.Do(req)
	if err != nil {
		return fmt.Errorf("webhook server is not reachable: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	if p.served != nil && resp.TLS != nil && len(resp.TLS.PeerCertificates) > 0 {
		p.served(resp.TLS.PeerCertificates[0].NotAfter)
	}
	if resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("webhook server answered the readiness probe with %s, not 204 No Content", resp.Status)
	}
	return nil
}

// ServeHTTP answers the probe with 204. Whoever else reaches it (with
// client authentication on, only the API server gets this far) learns
// nothing but that the port serves.
func (p *SelfProbe) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	w.WriteHeader(http.StatusNoContent)
}

// presented reports whether certs is the probe's own certificate.
func (p *SelfProbe) presented(certs []*x509.Certificate) bool {
	return p != nil && len(certs) == 1 && bytes.Equal(certs[0].Raw, p.der)
}

// probedServer is a webhook.Server whose StartedChecker is a SelfProbe.
type probedServer struct {
	webhook.Server
	probe *SelfProbe
}

func (s probedServer) StartedChecker() healthz.Checker { return s.probe.Check }
