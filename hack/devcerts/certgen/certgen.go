// Package certgen makes development TLS material: throw-away CAs, serving
// certificates and client certificates signed by them. It is for
// workstations and tests only; clusters get their certificates from
// cert-manager.
package certgen

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// File names written into the directory.
const (
	CAFile   = "ca.crt"
	CertFile = "tls.crt"
	KeyFile  = "tls.key"
)

// DefaultHosts are the serving certificate's SANs: the local machine, and the
// in-cluster Service of deploy/manifests (seedwarden in namespace seedwarden).
var DefaultHosts = []string{
	"localhost", "127.0.0.1", "::1",
	"seedwarden.seedwarden.svc", "seedwarden.seedwarden.svc.cluster.local",
}

// Validity of generated certificates, and how long an existing one must
// still be valid for Check to accept it.
const (
	Validity  = 365 * 24 * time.Hour
	MinRemain = 24 * time.Hour
)

// Check returns why the material in dir is not usable, or nil.
func Check(dir string, hosts []string, now time.Time) error {
	caPEM, err := os.ReadFile(filepath.Join(dir, CAFile))
	if err != nil {
		return err
	}
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, CertFile), filepath.Join(dir, KeyFile))
	if err != nil {
		return err
	}
	leaf := pair.Leaf
	if leaf == nil {
		if leaf, err = x509.ParseCertificate(pair.Certificate[0]); err != nil {
			return err
		}
	}
	if now.Add(MinRemain).After(leaf.NotAfter) {
		return fmt.Errorf("%s expires at %s", CertFile, leaf.NotAfter.Format(time.RFC3339))
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return fmt.Errorf("%s holds no certificate", CAFile)
	}
	for _, h := range hosts {
		if _, err := leaf.Verify(x509.VerifyOptions{
			DNSName:     h,
			Roots:       pool,
			CurrentTime: now.Add(MinRemain),
			KeyUsages:   []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		}); err != nil {
			return err
		}
	}
	return nil
}

// Generate writes a new CA certificate, serving certificate and key into dir
// (created if needed). The CA key is not kept: to renew, generate again.
func Generate(dir string, hosts []string, now time.Time) error {
	ca, err := NewAuthority("seedwarden development CA", now)
	if err != nil {
		return err
	}
	pair, err := ca.IssueServing(hosts, now)
	if err != nil {
		return err
	}
	return WriteServing(dir, ca, pair)
}

// WriteServing writes ca's certificate and the serving pair into dir
// (created if needed), named as the webhook server reads them. The key
// first and the certificate last, each replaced atomically, so a running
// server's certificate watcher never pairs a new key with an old
// certificate for long.
func WriteServing(dir string, ca *Authority, pair Pair) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := WriteFile(dir, CAFile, ca.CertPEM, 0o644); err != nil {
		return err
	}
	if err := WriteFile(dir, KeyFile, pair.KeyPEM, 0o600); err != nil {
		return err
	}
	return WriteFile(dir, CertFile, pair.CertPEM, 0o644)
}

func pemBlock(typ string, der []byte) []byte {
	var b bytes.Buffer
	_ = pem.Encode(&b, &pem.Block{Type: typ, Bytes: der})
	return b.Bytes()
}

// WriteFile writes data to dir/name with mode atomically (a temporary file,
// then rename), so that a server watching the directory never reads half a
// key or certificate.
func WriteFile(dir, name string, data []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(dir, "."+name+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, name))
}
