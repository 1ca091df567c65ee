// Package server is the plumbing of seedwarden's HTTPS admission server: it
// guards every request (deadlines, body limit), hardens TLS, drains on
// shutdown, and provides the health checks and the plain HTTP servers of a
// process without a controller-runtime manager. It knows nothing of
// placement: cmd/webhook translates the configuration into its options.
package server

import (
	"crypto/tls"
	"net/http"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// WebhookOptions are the webhook server's listener, certificate and
// per-request limits.
type WebhookOptions struct {
	Port                       int
	CertDir, CertName, KeyName string
	Limits                     Limits
	// ClientAuth, when set, accepts only clients whose certificate it
	// verifies (the API server's); nil accepts any client.
	ClientAuth *ClientVerifier
	// ServedCertificate, when set, gets the notAfter of the certificate the
	// port served to each readiness probe (SelfProbe).
	ServedCertificate func(notAfter time.Time)
}

// NewWebhook serves TLS from CertDir; controller-runtime's certwatcher
// reloads the certificate and key when the files change. Its
// StartedChecker is a SelfProbe (see there why not controller-runtime's),
// which ClientAuth, when set, accepts.
//
// Timeouts: webhook.Options (controller-runtime v0.25) has no field for
// them. Its server is an http.Server with ReadHeaderTimeout 32s (which also
// bounds the TLS handshake), IdleTimeout 90s and MaxHeaderBytes 1 MiB, and
// neither ReadTimeout nor WriteTimeout. Guard, which every path goes
// through (a catch-all answers unknown paths with 404), adds both per
// request with an http.ResponseController: Limits.ReadTimeout for the body,
// Limits.WriteTimeout for the answer. Register handlers wrapped in Guard.
// The probe's path is the one exception: it reads no body and answers at
// once.
func NewWebhook(o WebhookOptions, drain *Drainer) (webhook.Server, error) {
	probe, err := NewSelfProbe(o.Port)
	if err != nil {
		return nil, err
	}
	probe.served = o.ServedCertificate
	tlsOpts := []func(*tls.Config){HardenTLS}
	if o.ClientAuth != nil {
		o.ClientAuth.probe = probe
		tlsOpts = append(tlsOpts, o.ClientAuth.Apply)
	}
	mux := http.NewServeMux()
	mux.Handle(selfProbePath, probe)
	srv := webhook.NewServer(webhook.Options{
		Port:       o.Port,
		CertDir:    o.CertDir,
		CertName:   o.CertName,
		KeyName:    o.KeyName,
		TLSOpts:    tlsOpts,
		WebhookMux: mux,
	})
	srv.Register("/", Guard(o.Limits, drain, http.NotFoundHandler()))
	return probedServer{Server: srv, probe: probe}, nil
}
