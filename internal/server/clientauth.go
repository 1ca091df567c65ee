package server

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
)

// Reasons a client certificate is refused (ClientAuth.Rejected).
const (
	ClientCertMissing    = "missing"
	ClientCertUntrusted  = "untrusted"
	ClientCertNotAllowed = "name_not_allowed"
)

// ClientAuth makes the webhook server accept only clients with a
// certificate a CA bundle trusts, as kube-apiserver presents one when its
// AdmissionConfiguration gives the webhooks a kubeConfigFile. Without it
// any pod that reaches the port can send AdmissionReviews.
type ClientAuth struct {
	// CAFile is a PEM bundle of the CAs that sign accepted client
	// certificates. It is read again when it changes (a rotated Secret), at
	// the next handshake; a change that holds no certificate is logged and
	// the previous bundle kept.
	CAFile string
	// AllowedNames are the subject common names accepted, as
	// kube-apiserver's --requestheader-allowed-names; empty accepts every
	// certificate the bundle trusts.
	AllowedNames []string
	// Log receives reload failures and, at debug level, each refusal.
	Log logr.Logger
	// Rejected is called with a reason (ClientCert...) for each refused
	// handshake; nil for none.
	Rejected func(reason string)
}

// ClientVerifier checks client certificates against the current CA bundle.
// Verification is seedwarden's rather than crypto/tls's (which fixes
// ClientCAs for the listener's life) so that a rotated bundle applies
// without a restart, and the common name can be checked.
type ClientVerifier struct {
	o       ClientAuth
	allowed map[string]bool
	now     func() time.Time

	// probe is the readiness probe whose own certificate is accepted
	// (NewWebhook sets it); nil: none.
	probe *SelfProbe

	mu    sync.Mutex
	pool  *x509.CertPool
	stamp fileStamp
}

// fileStamp tells whether a file changed since it was read.
type fileStamp struct {
	mod  time.Time
	size int64
}

// NewClientVerifier reads the CA bundle; an unreadable file or one without a
// certificate is an error naming it.
func NewClientVerifier(o ClientAuth) (*ClientVerifier, error) {
	v := &ClientVerifier{o: o, now: time.Now}
	if len(o.AllowedNames) > 0 {
		v.allowed = make(map[string]bool, len(o.AllowedNames))
		for _, n := range o.AllowedNames {
			v.allowed[n] = true
		}
	}
	pool, stamp, err := readCAFile(o.CAFile)
	if err != nil {
		return nil, err
	}
	v.pool, v.stamp = pool, stamp
	return v, nil
}

func readCAFile(path string) (*x509.CertPool, fileStamp, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fileStamp{}, fmt.Errorf("client CA bundle: %w", err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fileStamp{}, fmt.Errorf("client CA bundle: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, fileStamp{}, fmt.Errorf("client CA bundle %s: no PEM certificate in it", path)
	}
	return pool, fileStamp{mod: fi.ModTime(), size: fi.Size()}, nil
}

// Apply makes c ask every client for a certificate and verify it here. The
// certificate is requested, not required, by crypto/tls so that a missing
// one reaches verify and is counted; verify refuses it all the same.
func (v *ClientVerifier) Apply(c *tls.Config) {
	c.ClientAuth = tls.RequestClientCert
	// The remote address is known only per handshake: each gets its own
	// copy of c, whose VerifyConnection names it. The copy is made at
	// handshake time so it carries what controller-runtime sets on c after
	// the TLS options (the certificate watcher's GetCertificate).
	c.GetConfigForClient = func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
		own := c.Clone()
		own.GetConfigForClient = nil
		remote := ""
		if hello.Conn != nil {
			remote = hello.Conn.RemoteAddr().String()
		}
		own.VerifyConnection = func(cs tls.ConnectionState) error {
			return v.verify(cs, remote)
		}
		return own, nil
	}
}

// verify runs on every handshake, resumed ones included, so a session from
// before a CA rotation is judged by the new bundle.
func (v *ClientVerifier) verify(cs tls.ConnectionState, remote string) error {
	reason, err := v.check(cs.PeerCertificates)
	if err == nil {
		return nil
	}
	if v.o.Rejected != nil {
		v.o.Rejected(reason)
	}
	v.o.Log.V(1).Info("Refused a webhook client", "reason", reason, "remote", remote, "error", err.Error())
	return err
}

func (v *ClientVerifier) check(certs []*x509.Certificate) (reason string, err error) {
	if v.probe.presented(certs) {
		// The process's own readiness probe: not a client, not counted.
		return "", nil
	}
	if len(certs) == 0 {
		return ClientCertMissing, errors.New("client certificate required")
	}
	inter := x509.NewCertPool()
	for _, c := range certs[1:] {
		inter.AddCert(c)
	}
	leaf := certs[0]
	if _, err := leaf.Verify(x509.VerifyOptions{
		Roots:         v.currentPool(),
		Intermediates: inter,
		CurrentTime:   v.now(),
		KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}); err != nil {
		return ClientCertUntrusted, fmt.Errorf("client certificate %q: %w", leaf.Subject.CommonName, err)
	}
	if v.allowed != nil && !v.allowed[leaf.Subject.CommonName] {
		return ClientCertNotAllowed, fmt.Errorf("client certificate common name %q is not among the allowed names %v",
			leaf.Subject.CommonName, slices.Sorted(maps.Keys(v.allowed)))
	}
	return "", nil
}

// currentPool is the bundle, read again if the file changed.
func (v *ClientVerifier) currentPool() *x509.CertPool {
	v.mu.Lock()
	defer v.mu.Unlock()
	fi, err := os.Stat(v.o.CAFile)
	if err != nil || (fi.ModTime().Equal(v.stamp.mod) && fi.Size() == v.stamp.size) {
		return v.pool
	}
	pool, stamp, err := readCAFile(v.o.CAFile)
	if err != nil {
		// Remember the stamp: one log line per change, not per handshake.
		v.stamp = fileStamp{mod: fi.ModTime(), size: fi.Size()}
		v.o.Log.Error(err, "Keeping the previous client CA bundle")
		return v.pool
	}
	v.pool, v.stamp = pool, stamp
	v.o.Log.Info("Reloaded the client CA bundle", "file", v.o.CAFile)
	return v.pool
}
