package config

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"unicode"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Checks of single fields: file names, bind addresses, the certificate.

func isSpaceOrControl(r rune) bool {
	return r <= ' ' || r == 0x7f
}

func validateFileName(p *problems, path, name string) {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) || strings.ContainsFunc(name, isSpaceOrControl) {
		p.add(path, "invalid value %q (want a file name inside server.certDir)", name)
	}
}

// validateBindAddress accepts "0" (disabled) or host:port with a port in
// 0-65535 (0 picks a free port). It reports whether addr is a valid
// host:port (false for "0").
func validateBindAddress(p *problems, path, addr string) bool {
	if addr == Disabled {
		return false
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		p.add(path, "invalid value %q (want host:port, :port or %q to disable)", addr, Disabled)
		return false
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 0 || n > 65535 {
		p.add(path, "invalid port in %q (want 0-65535)", addr)
		return false
	}
	return true
}

// isLoopback reports whether host:port listens on loopback only: localhost,
// 127.0.0.0/8 or ::1. An empty host (all addresses) is not.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// validateCertificate checks the certificate section: both or neither of
// namespace and name.
func (c *Config) validateCertificate(p *problems) {
	cert := c.Certificate
	switch {
	case cert.Namespace != "" && cert.Name == "":
		p.add("certificate.name", "required when certificate.namespace is set (the cert-manager Certificate of the serving certificate)")
	case cert.Name != "" && cert.Namespace == "":
		p.add("certificate.namespace", "required when certificate.name is set (the namespace of Certificate %q)", cert.Name)
	}
	if cert.Namespace != "" {
		if errs := validation.IsDNS1123Label(cert.Namespace); len(errs) > 0 {
			p.add("certificate.namespace", "invalid value %q: %s", cert.Namespace, strings.Join(errs, "; "))
		}
	}
	if cert.Name != "" {
		if errs := validation.IsDNS1123Subdomain(cert.Name); len(errs) > 0 {
			p.add("certificate.name", "invalid value %q: %s", cert.Name, strings.Join(errs, "; "))
		}
	}
	validateDurationRange(p, "certificate.expiryWarning", cert.ExpiryWarning, 0, MaxExpiryWarning)
}

// validateClientAuth checks server.clientAuth: a CA file path when on, and
// allowed names that a certificate can carry, each once.
func (c *Config) validateClientAuth(p *problems) {
	a := c.Server.ClientAuth
	if a.CAFile != "" && strings.TrimSpace(a.CAFile) != a.CAFile {
		p.add("server.clientAuth.caFile", "invalid value %q (leading or trailing space)", a.CAFile)
	}
	if !a.Enabled() && len(a.AllowedNames) > 0 {
		p.add("server.clientAuth.allowedNames", "%q needs server.clientAuth.caFile (the CA bundle that signs those clients)", a.AllowedNames)
	}
	seen := make(map[string]bool, len(a.AllowedNames))
	for i, n := range a.AllowedNames {
		path := fmt.Sprintf("server.clientAuth.allowedNames[%d]", i)
		switch {
		case n == "" || len(n) > 64 || strings.ContainsFunc(n, unicode.IsControl):
			p.add(path, "invalid value %q (want a certificate common name: 1-64 characters, no control characters)", n)
		case seen[n]:
			p.add(path, "duplicate value %q", n)
		}
		seen[n] = true
	}
}
