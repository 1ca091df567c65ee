package server

import (
	"crypto/tls"
	"slices"
)

// tls12CipherSuites are the only TLS 1.2 cipher suites offered: ECDHE key
// exchange (forward secrecy) with AEAD ciphers, nothing with CBC, RSA key
// exchange, 3DES or RC4. TLS 1.3, which Go prefers, has only AEAD suites,
// and Go does not let them be configured.
var tls12CipherSuites = []uint16{
	tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
	tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
}

// TLS12CipherSuites returns (a copy of) the TLS 1.2 suites HardenTLS allows.
func TLS12CipherSuites() []uint16 { return slices.Clone(tls12CipherSuites) }

// HardenTLS is the TLS configuration of the webhook and (metrics.secure)
// metrics servers: TLS 1.2 at least, the suites above for 1.2, and HTTP/1.1
// only: HTTP/2 stream handling has had denial-of-service flaws
// (CVE-2023-44487, CVE-2023-39325), and the API server and Prometheus need
// nothing more.
func HardenTLS(c *tls.Config) {
	c.MinVersion = tls.VersionTLS12
	c.CipherSuites = TLS12CipherSuites()
	c.NextProtos = []string{"http/1.1"}
}
