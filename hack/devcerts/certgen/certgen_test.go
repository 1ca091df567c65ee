package certgen

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGenerateAndCheck(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "certs")
	now := time.Now()
	require.Error(t, Check(dir, DefaultHosts, now), "nothing there yet")

	require.NoError(t, Generate(dir, DefaultHosts, now))
	require.NoError(t, Check(dir, DefaultHosts, now))

	// Usable by a TLS server, and trusted through ca.crt for every host.
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, CertFile), filepath.Join(dir, KeyFile))
	require.NoError(t, err)
	caPEM, err := os.ReadFile(filepath.Join(dir, CAFile))
	require.NoError(t, err)
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(caPEM))
	for _, h := range DefaultHosts {
		_, err := pair.Leaf.Verify(x509.VerifyOptions{DNSName: h, Roots: pool})
		assert.NoError(t, err, h)
	}
	fi, err := os.Stat(filepath.Join(dir, KeyFile))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	// Not accepted when it expires within a day, or lacks a wanted host.
	assert.Error(t, Check(dir, DefaultHosts, now.Add(Validity-MinRemain/2)))
	assert.Error(t, Check(dir, append(DefaultHosts, "other.example.com"), now))

	// Not accepted when the CA does not sign the certificate.
	other := t.TempDir()
	require.NoError(t, Generate(other, DefaultHosts, now))
	ca, err := os.ReadFile(filepath.Join(other, CAFile))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, CAFile), ca, 0o644))
	assert.Error(t, Check(dir, DefaultHosts, now))
}

// CAPair hands out the CA's own key: a certificate signed with it verifies
// against the CA, as one the Authority issues does.
func TestCAPairSignsForTheAuthority(t *testing.T) {
	now := time.Now()
	ca, err := NewAuthority("test CA", now)
	require.NoError(t, err)
	pair, err := ca.CAPair()
	require.NoError(t, err)
	assert.Equal(t, ca.CertPEM, pair.CertPEM)
	caTLS, err := pair.TLS()
	require.NoError(t, err, "the key is the certificate's")
	caCert, err := x509.ParseCertificate(caTLS.Certificate[0])
	require.NoError(t, err)
	assert.True(t, caCert.IsCA)
	leaf, err := ca.IssueServing([]string{"example.test"}, now)
	require.NoError(t, err)
	leafTLS, err := leaf.TLS()
	require.NoError(t, err)
	leafCert, err := x509.ParseCertificate(leafTLS.Certificate[0])
	require.NoError(t, err)
	assert.NoError(t, leafCert.CheckSignatureFrom(caCert))
}
