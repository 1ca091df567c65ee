package certgen

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"net"
	"slices"
	"time"
)

// Authority is a throw-away CA that keeps its key in memory, to issue
// serving and client certificates.
type Authority struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	// CertPEM is the CA certificate, PEM-encoded: the bundle that trusts
	// what the Authority issues.
	CertPEM []byte
}

// Pair is an issued certificate and its private key, PEM-encoded.
type Pair struct {
	CertPEM, KeyPEM []byte
}

// TLS is the pair as a tls.Certificate.
func (p Pair) TLS() (tls.Certificate, error) { return tls.X509KeyPair(p.CertPEM, p.KeyPEM) }

// NewAuthority makes a CA valid from an hour before now (clock skew) for
// Validity.
func NewAuthority(commonName string, now time.Time) (*Authority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: commonName, Organization: []string{"seedwarden"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(Validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &Authority{cert: cert, key: key, CertPEM: pemBlock("CERTIFICATE", der)}, nil
}

// IssueServing issues a server certificate for hosts (DNS names or IP
// addresses); the first is also its common name.
func (a *Authority) IssueServing(hosts []string, now time.Time) (Pair, error) {
	if len(hosts) == 0 {
		return Pair{}, errors.New("no hosts for the serving certificate")
	}
	tmpl := a.leaf(hosts[0], now, x509.ExtKeyUsageServerAuth)
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else if !slices.Contains(tmpl.DNSNames, h) {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	return a.issue(tmpl)
}

// IssueClient issues a client certificate with commonName, as
// kube-apiserver presents one to webhooks (AdmissionConfiguration
// kubeConfigFile).
func (a *Authority) IssueClient(commonName string, now time.Time) (Pair, error) {
	return a.issue(a.leaf(commonName, now, x509.ExtKeyUsageClientAuth))
}

func (a *Authority) leaf(commonName string, now time.Time, usage x509.ExtKeyUsage) *x509.Certificate {
	return &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: commonName, Organization: []string{"seedwarden"}},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(Validity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
	}
}

func (a *Authority) issue(tmpl *x509.Certificate) (Pair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Pair{}, err
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, &key.PublicKey, a.key)
	if err != nil {
		return Pair{}, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return Pair{}, err
	}
	return Pair{CertPEM: pemBlock("CERTIFICATE", der), KeyPEM: pemBlock("PRIVATE KEY", keyDER)}, nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return n
}

// CAPair is the CA's own certificate and key, PEM-encoded: for a test that
// hands the CA to another issuer (a cert-manager CA Issuer's Secret).
func (a *Authority) CAPair() (Pair, error) {
	keyDER, err := x509.MarshalPKCS8PrivateKey(a.key)
	if err != nil {
		return Pair{}, err
	}
	return Pair{CertPEM: a.CertPEM, KeyPEM: pemBlock("PRIVATE KEY", keyDER)}, nil
}
