package config

import (
	"net"
	"strconv"
	"strings"
	"time"
)

// The bound on the requests in flight (server.maxRequestBytesInFlight,
// server.requestQueueTimeout).
const (
	// DefaultMaxRequestBytesInFlight is measured (BENCHMARKS.md, "Memory
	// bound"): decoding a Shoot review allocates up to 91 times its body (3
	// MB of empty worker pools), so one review of the 3 MiB maxRequestBytes
	// at a time, and the 1 MiB kept for small requests, is what stays below
	// the shipped GOMEMLIMIT (460MiB) and memory limit (512Mi), whatever the
	// mix.
	DefaultMaxRequestBytesInFlight = 4 << 20 // 4 MiB
	// MaxMaxRequestBytesInFlight is far beyond any pod seedwarden needs.
	MaxMaxRequestBytesInFlight = 64 << 30 // 64 GiB
	// DefaultRequestQueueTimeout lets a burst of large requests queue; well
	// under the shortest shipped webhook timeoutSeconds (3s), so a queued
	// request still has time to be answered.
	DefaultRequestQueueTimeout = time.Second
	// MaxRequestQueueTimeout: the API server waits at most 30s for a
	// webhook, and the shipped webhooks 3-5s.
	MaxRequestQueueTimeout = 10 * time.Second
)

// The listeners: the webhook's HTTPS server (with client authentication),
// the metrics and health endpoints, and the serving certificate's
// cert-manager Certificate.

// Server configures the webhook's HTTPS server.
type Server struct {
	// Port to listen on. Default: 9443.
	Port int `json:"port,omitempty"`
	// CertDir holds the serving certificate and key; they are reloaded when
	// they change. Default: /etc/seedwarden/certs.
	CertDir string `json:"certDir,omitempty"`
	// CertName is the certificate's file name in CertDir. Default: tls.crt.
	CertName string `json:"certName,omitempty"`
	// KeyName is the key's file name in CertDir. Default: tls.key.
	KeyName string `json:"keyName,omitempty"`
	// MaxRequestBytes rejects larger AdmissionReview bodies. Default: 3 MiB.
	MaxRequestBytes int64 `json:"maxRequestBytes,omitempty"`
	// MaxRequestBytesInFlight bounds the bytes of all request bodies being
	// handled at once (a body of unknown length counts as maxRequestBytes),
	// and with them the server's memory: each request holds several times
	// its body while it is decoded. A request that finds no room waits up to
	// requestQueueTimeout, then is answered 429 and the API server applies
	// the webhook's failurePolicy. Up to 1 MiB of it is kept for requests of
	// at most 64 KiB, so that large ones never hold up the everyday ones.
	// Default: 4 MiB; from maxRequestBytes to 64 GiB.
	MaxRequestBytesInFlight int64 `json:"maxRequestBytesInFlight,omitempty"`
	// RequestQueueTimeout is how long a request waits for room in
	// maxRequestBytesInFlight before it is refused; keep it well under the
	// webhooks' timeoutSeconds. "0s" refuses at once. Default: 1s; at most
	// 10s, and shorter than writeTimeout.
	RequestQueueTimeout Duration `json:"requestQueueTimeout,omitempty"`
	// ReadTimeout bounds reading a request's body, from the moment its
	// headers are in; a client that stalls longer is cut off. (The TLS
	// handshake and the headers are bounded by controller-runtime's server,
	// 32s, which cannot be configured.) Default: 10s; 100ms to 5m.
	ReadTimeout Duration `json:"readTimeout,omitempty"`
	// WriteTimeout bounds a request from its headers to its answer being
	// written. Default: 30s (the longest the API server waits for a
	// webhook); 5s to 5m, and longer than binding.authorizationTimeout.
	WriteTimeout Duration `json:"writeTimeout,omitempty"`
	// ShutdownDelay is how long the server keeps serving after SIGTERM
	// before it stops accepting connections: meanwhile /readyz fails and
	// every answer closes its connection, so that load balancers and the
	// API server's pooled connections move to other replicas first (no
	// request is sent to a closed port). Then in-flight requests finish
	// (at most 25s). Set it instead of a preStop sleep. Default: 0; up to 2m.
	ShutdownDelay Duration `json:"shutdownDelay,omitempty"`
	// ClientAuth accepts only clients with a trusted certificate: the API
	// server, given one through its AdmissionConfiguration. Off by default.
	ClientAuth ClientAuth `json:"clientAuth,omitempty"`
}

// ClientAuth verifies the certificate of every client of the webhook port
// (docs/security.md says how to give kube-apiserver one). Without it, any
// pod that reaches the port can send AdmissionReviews.
type ClientAuth struct {
	// CAFile is a PEM bundle of the CAs whose client certificates are
	// accepted; setting it turns client authentication on. A changed file
	// applies from the next connection. Default: "" (off).
	CAFile string `json:"caFile,omitempty"`
	// AllowedNames are the subject common names accepted (kube-apiserver's
	// --requestheader-allowed-names works the same way); empty accepts any
	// certificate the bundle trusts. Needs caFile.
	AllowedNames []string `json:"allowedNames,omitempty"`
}

// Enabled reports whether clients must present a certificate.
func (a ClientAuth) Enabled() bool { return a.CAFile != "" }

// Endpoint is a plain HTTP listener.
type Endpoint struct {
	// BindAddress is host:port (host may be empty); "0" disables the endpoint.
	BindAddress string `json:"bindAddress,omitempty"`
}

// Metrics is the Prometheus endpoint.
type Metrics struct {
	// BindAddress is host:port (host may be empty); "0" disables the
	// endpoint. Default: 127.0.0.1:8080. Unless Secure, it must be a
	// loopback address.
	BindAddress string `json:"bindAddress,omitempty"`
	// Secure serves /metrics over HTTPS with the serving certificate
	// (server.certDir), only to clients whose bearer token the API server
	// authenticates (TokenReview) and authorizes for GET /metrics
	// (SubjectAccessReview). Needs a cluster. Default: false (plain HTTP,
	// loopback only).
	Secure *bool `json:"secure,omitempty"`
	// SeedLabels are Seed label keys added to the per-seed gauges, each as
	// a label named by SeedLabelName (headroom.go); a seed without the
	// label gets "". Default: none.
	SeedLabels []string `json:"seedLabels,omitempty"`
}

// Certificate names the cert-manager Certificate whose Secret is mounted in
// server.certDir. When set (cluster mode), its readiness and expiry are
// exported as metrics and logged (internal/certwatch). Both or neither of
// Namespace and Name.
type Certificate struct {
	// Namespace of the Certificate.
	Namespace string `json:"namespace,omitempty"`
	// Name of the Certificate.
	Name string `json:"name,omitempty"`
	// ExpiryWarning: a warning is logged once when the certificate expires
	// within this long. "0s" turns the warning off. Default: 168h (7 days);
	// at most 8760h.
	ExpiryWarning Duration `json:"expiryWarning,omitempty"`
}

// Watched reports whether a Certificate is configured.
func (c Certificate) Watched() bool { return c.Name != "" }

// MetricsSecure reports whether /metrics is served over HTTPS with
// authentication and authorization.
func (c *Config) MetricsSecure() bool { return c.Metrics.Secure != nil && *c.Metrics.Secure }

// validateServer checks the webhook server's port, certificate files and
// request size.
func (c *Config) validateServer(p *problems) {
	if c.Server.Port < 1 || c.Server.Port > 65535 {
		p.add("server.port", "%d out of range 1-65535", c.Server.Port)
	}
	if strings.TrimSpace(c.Server.CertDir) == "" {
		p.add("server.certDir", "must not be empty")
	}
	validateFileName(p, "server.certName", c.Server.CertName)
	validateFileName(p, "server.keyName", c.Server.KeyName)
	if c.Server.CertName == c.Server.KeyName {
		p.add("server.keyName", "%q is also server.certName", c.Server.KeyName)
	}
	c.validateClientAuth(p)
	if c.Server.MaxRequestBytes < MinMaxRequestBytes || c.Server.MaxRequestBytes > MaxMaxRequestBytes {
		p.add("server.maxRequestBytes", "%d out of range %d-%d", c.Server.MaxRequestBytes, MinMaxRequestBytes, MaxMaxRequestBytes)
	}
	// At least one request of the largest size must fit.
	if n := c.Server.MaxRequestBytesInFlight; n < c.Server.MaxRequestBytes || n > MaxMaxRequestBytesInFlight {
		p.add("server.maxRequestBytesInFlight", "%d out of range %d (server.maxRequestBytes)-%d", n, c.Server.MaxRequestBytes, MaxMaxRequestBytesInFlight)
	}
}

// applyServerDefaults fills the bound on the requests in flight.
func (c *Config) applyServerDefaults() {
	setDefault(&c.Server.MaxRequestBytesInFlight, DefaultMaxRequestBytesInFlight)
	if !c.Server.RequestQueueTimeout.set {
		c.Server.RequestQueueTimeout = NewDuration(DefaultRequestQueueTimeout)
	}
}

// validateServerTimeouts checks the webhook server's timeouts; the write
// timeout must leave room for the binding webhook's authorization.
func (c *Config) validateServerTimeouts(p *problems) {
	validateDurationRange(p, "server.readTimeout", c.Server.ReadTimeout, MinReadTimeout, MaxReadTimeout)
	validateDurationRange(p, "server.writeTimeout", c.Server.WriteTimeout, MinWriteTimeout, MaxWriteTimeout)
	validateDurationRange(p, "server.shutdownDelay", c.Server.ShutdownDelay, 0, MaxShutdownDelay)
	validateDurationRange(p, "server.requestQueueTimeout", c.Server.RequestQueueTimeout, 0, MaxRequestQueueTimeout)
	if q, w := c.Server.RequestQueueTimeout, c.Server.WriteTimeout; q.invalid == "" && w.invalid == "" && q.Duration >= w.Duration {
		p.add("server.requestQueueTimeout", "%s must be shorter than server.writeTimeout %s", q.Duration, w.Duration)
	}
	if w, a := c.Server.WriteTimeout, c.Binding.AuthorizationTimeout; w.invalid == "" && a.invalid == "" && w.Duration <= a.Duration {
		p.add("server.writeTimeout", "%s must be longer than binding.authorizationTimeout %s", w.Duration, a.Duration)
	}
}

// validateEndpoints checks the metrics and health addresses: valid, apart
// from each other and from the webhook port, metrics on loopback unless
// served securely.
func (c *Config) validateEndpoints(p *problems) {
	if validateBindAddress(p, "metrics.bindAddress", c.Metrics.BindAddress) && !c.MetricsSecure() && !isLoopback(c.Metrics.BindAddress) {
		p.add("metrics.bindAddress", "%q must be a loopback address when metrics.secure is false (such as 127.0.0.1:8080; or set metrics.secure: true)", c.Metrics.BindAddress)
	}
	validateBindAddress(p, "health.bindAddress", c.Health.BindAddress)
	if c.Metrics.BindAddress != Disabled && c.Metrics.BindAddress == c.Health.BindAddress {
		p.add("health.bindAddress", "%q is also metrics.bindAddress", c.Health.BindAddress)
	}
	for _, ep := range []struct{ path, addr string }{{"metrics.bindAddress", c.Metrics.BindAddress}, {"health.bindAddress", c.Health.BindAddress}} {
		if _, port, err := net.SplitHostPort(ep.addr); err == nil && port == strconv.Itoa(c.Server.Port) {
			p.add(ep.path, "%q uses server.port %d", ep.addr, c.Server.Port)
		}
	}
}
