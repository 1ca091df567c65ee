// Package server is the plumbing of seedwarden's HTTPS admission server: it
// guards every request (deadlines, body limit), hardens TLS, drains on
// shutdown, and provides the health checks and the plain HTTP servers of a
// process without a controller-runtime manager. It knows nothing of
// placement: cmd/webhook translates the configuration into its options.
package server

import (
	"crypto/tls"
	"net/http"

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
}

// NewWebhook serves TLS from CertDir; controller-runtime's certwatcher
// reloads the certificate and key when the files change.
//
// Timeouts: webhook.Options (controller-runtime v0.25) has no field for
// them. Its server is an http.Server with ReadHeaderTimeout 32s (which also
// bounds the TLS handshake), IdleTimeout 90s and MaxHeaderBytes 1 MiB, and
// neither ReadTimeout nor WriteTimeout. Guard, which every path goes
// through (a catch-all answers unknown paths with 404), adds both per
// request with an http.ResponseController: Limits.ReadTimeout for the body,
// Limits.WriteTimeout for the answer. Register handlers wrapped in Guard.
func NewWebhook(o WebhookOptions, drain *Drainer) webhook.Server {
	tlsOpts := []func(*tls.Config){HardenTLS}
	if o.ClientAuth != nil {
		tlsOpts = append(tlsOpts, o.ClientAuth.Apply)
	}
	srv := webhook.NewServer(webhook.Options{
		Port:     o.Port,
		CertDir:  o.CertDir,
		CertName: o.CertName,
		KeyName:  o.KeyName,
		TLSOpts:  tlsOpts,
	})
	srv.Register("/", Guard(o.Limits, drain, http.NotFoundHandler()))
	return srv
}
