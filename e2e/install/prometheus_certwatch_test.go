package install

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"math"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The serving Certificate of the kustomize base (certificates.yaml) and the
// Service port whose listener serves it without asking for a client
// certificate (the metrics port).
const (
	servingCertificate = "seedwarden-webhook"
	metricsService     = "seedwarden.seedwarden.svc:8443"
)

// certificateSeries is the measurement behind keeping internal/certwatch
// (its package comment): the serving Certificate as cert-manager's
// controller exports it, as certwatch exports it, and the certificate the
// process really serves (through the Service's name), side by side.
func (pi *promInstall) certificateSeries(t *testing.T) {
	ns := pi.pod.namespace
	one := func(expr string) (float64, error) {
		res, err := pi.prom.query(expr)
		if err != nil {
			return 0, err
		}
		if len(res) != 1 {
			return 0, fmt.Errorf("%s: %d series", expr, len(res))
		}
		return res[0].float(), nil
	}
	var cmExpiry, swExpiry, cmReady, swReady float64
	eventually(t, time.Minute, promInterval, func() error {
		var err error
		if cmExpiry, err = one(fmt.Sprintf(`certmanager_certificate_expiration_timestamp_seconds{job=%q, namespace=%q, name=%q}`, jobCertManager, ns, servingCertificate)); err != nil {
			return err
		}
		if swExpiry, err = one(fmt.Sprintf(`seedwarden_certificate_expiry_timestamp_seconds{job=%q, certificate_namespace=%q, certificate=%q}`, pi.job, ns, servingCertificate)); err != nil {
			return err
		}
		if cmReady, err = one(fmt.Sprintf(`certmanager_certificate_ready_status{job=%q, namespace=%q, name=%q, condition="True"}`, jobCertManager, ns, servingCertificate)); err != nil {
			return err
		}
		swReady, err = one(fmt.Sprintf(`seedwarden_certificate_ready{job=%q, certificate_namespace=%q, certificate=%q}`, pi.job, ns, servingCertificate))
		return err
	}, "the serving Certificate's series of cert-manager and of seedwarden")
	served := servedNotAfter(t, pi.e.proxy.tcpURL(t), metricsService)
	t.Logf("measured: expiry cert-manager %s, certwatch %s, served %s; ready cert-manager %v, certwatch %v",
		unix(cmExpiry), unix(swExpiry), served.UTC().Format(time.RFC3339), cmReady, swReady)
	if cmExpiry != swExpiry || cmReady != swReady {
		t.Errorf("certwatch and cert-manager disagree on the serving Certificate: expiry %v vs %v, ready %v vs %v", swExpiry, cmExpiry, swReady, cmReady)
	}
	if math.Abs(float64(served.Unix())-swExpiry) > 1 {
		t.Errorf("the process serves a certificate expiring %s, the Certificate says %s", served.UTC().Format(time.RFC3339), unix(swExpiry))
	}
	pi.renewalSeries(t, swExpiry)
}

// renewalSeries renews the serving Certificate (as cmctl renew does) and
// measures when each series shows the new notAfter: cert-manager's,
// certwatch's, and the served one (seedwarden_webhook_serving_certificate_expiry_timestamp_seconds,
// set by the readiness probe, which the test calls every 500ms as a
// kubelet would call it every few seconds), all through Prometheus.
func (pi *promInstall) renewalSeries(t *testing.T, before float64) {
	ns := pi.pod.namespace
	series := map[string]string{
		"cert-manager": fmt.Sprintf(`certmanager_certificate_expiration_timestamp_seconds{job=%q, namespace=%q, name=%q}`, jobCertManager, ns, servingCertificate),
		"certwatch":    fmt.Sprintf(`seedwarden_certificate_expiry_timestamp_seconds{job=%q, certificate_namespace=%q, certificate=%q}`, pi.job, ns, servingCertificate),
		"served":       fmt.Sprintf(`seedwarden_webhook_serving_certificate_expiry_timestamp_seconds{job=%q}`, pi.job),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	renewed := time.Now()
	pi.e.renew(ctx, t, ns, servingCertificate)
	seen, values := map[string]time.Duration{}, map[string]float64{}
	readyz := fmt.Sprintf("http://127.0.0.1:%d/readyz", pi.pod.ports["health"])
	eventually(t, 90*time.Second, 500*time.Millisecond, func() error {
		_ = httpOK(probeClient, readyz)
		for name, expr := range series {
			if _, ok := seen[name]; ok {
				continue
			}
			res, err := pi.prom.query(expr)
			if err == nil && len(res) == 1 && res[0].float() > before {
				seen[name], values[name] = time.Since(renewed), res[0].float()
			}
		}
		if len(seen) < len(series) {
			return fmt.Errorf("new notAfter seen so far: %v", seen)
		}
		return nil
	}, "the renewed certificate in every series")
	t.Logf("measured: after the renewal the new notAfter %s was in cert-manager's series after %s, certwatch's after %s, the served one after %s (scrape interval %s)",
		unix(values["cert-manager"]), seen["cert-manager"].Round(100*time.Millisecond), seen["certwatch"].Round(100*time.Millisecond), seen["served"].Round(100*time.Millisecond), promInterval)
	if values["cert-manager"] != values["certwatch"] || values["certwatch"] != values["served"] {
		t.Errorf("after the renewal the series disagree: %v", values)
	}
}

func unix(f float64) string { return time.Unix(int64(f), 0).UTC().Format(time.RFC3339) }

// servedNotAfter is the notAfter of the certificate served at hostPort,
// reached through the CONNECT proxy as Prometheus reaches it.
func servedNotAfter(t *testing.T, proxyURL, hostPort string) time.Time {
	t.Helper()
	var leaf *x509.Certificate
	tc := tlsThroughProxy(t, proxyURL, hostPort, func(cs tls.ConnectionState) error { leaf = cs.PeerCertificates[0]; return nil })
	must(t, tc.Handshake())
	_ = tc.Close()
	return leaf.NotAfter
}

// tlsThroughProxy is a TLS client connection to hostPort through the
// CONNECT proxy, without a client certificate; verify sees the server's.
func tlsThroughProxy(t *testing.T, proxyURL, hostPort string, verify func(tls.ConnectionState) error) *tls.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", strings.TrimPrefix(proxyURL, "http://"), 5*time.Second)
	must(t, err)
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", hostPort, hostPort)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	must(t, err)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("CONNECT %s: %s", hostPort, resp.Status)
	}
	host, _, _ := net.SplitHostPort(hostPort)
	return tls.Client(c, &tls.Config{ServerName: host, InsecureSkipVerify: true, //nolint:gosec // only the certificate is read
		VerifyConnection: verify})
}
