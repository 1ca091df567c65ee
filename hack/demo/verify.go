package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"time"
)

func loadCA(caFile string) (*x509.CertPool, error) {
	caPEM, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("%w (generate it with: go run ./hack/devcerts)", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("%s holds no PEM certificate", caFile)
	}
	return pool, nil
}

func tlsConfig(pool *x509.CertPool) *tls.Config {
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
}

func httpsClient(pool *x509.CertPool) *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsConfig(pool)}}
}

// verifyServer proves that the server at rawURL is one the demo may talk to:
// its TLS certificate is signed by the CA in caFile. Otherwise it says what
// answers there instead and how to get past it.
func verifyServer(ctx context.Context, rawURL, caFile string, pool *x509.CertPool) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return fmt.Errorf("-url %q: %w", rawURL, err)
	}
	if u.Scheme != "https" {
		return fmt.Errorf("-url %q: the webhook is served over https", rawURL)
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "443")
	}
	cfg := tlsConfig(pool)
	cfg.ServerName = u.Hostname()
	dialer := tls.Dialer{NetDialer: &net.Dialer{Timeout: 5 * time.Second}, Config: cfg}
	conn, err := dialer.DialContext(ctx, "tcp", addr)
	if err == nil {
		return conn.Close()
	}
	return explainHandshake(addr, caFile, err)
}

// useOwnHint tells the user how to get past a server that is not theirs.
const useOwnHint = "point -url (DEMO_URL) at this checkout's server, or leave it out to let the demo " +
	"start its own server on free ports (make demo; DEMO_PORT and DEMO_HEALTH_PORT choose them)"

// explainHandshake turns a failed TLS dial into what it means for the demo.
func explainHandshake(addr, caFile string, err error) error {
	var (
		opErr     *net.OpError
		unknownCA x509.UnknownAuthorityError
		record    tls.RecordHeaderError
		host      x509.HostnameError
	)
	switch {
	case errors.As(err, &unknownCA):
		issuer := "an unknown issuer"
		if unknownCA.Cert != nil {
			issuer = fmt.Sprintf("%q", unknownCA.Cert.Issuer.CommonName)
		}
		// Every checkout's development CA has the same name: say that the
		// name matching proves nothing.
		return fmt.Errorf("something else answers on %s: its certificate is issued by %s, "+
			"but not by the CA in %s (whatever its name), so it is another seedwarden "+
			"or another program, not this checkout's server. Stop it, or %s", addr, issuer, caFile, useOwnHint)
	case errors.As(err, &record):
		return fmt.Errorf("something else answers on %s: it does not speak TLS (plain HTTP?), "+
			"so it is not a seedwarden webhook. Stop it, or %s", addr, useOwnHint)
	case errors.As(err, &host):
		return fmt.Errorf("the certificate served on %s is not valid for %q: %w", addr, host.Host, err)
	case errors.As(err, &opErr) && opErr.Op == "dial":
		return fmt.Errorf("nothing answers on %s (%w): start the server there (make run), or %s", addr, err, useOwnHint)
	}
	return fmt.Errorf("TLS handshake with %s failed, so something other than this checkout's "+
		"server may answer there: %w; %s", addr, err, useOwnHint)
}
