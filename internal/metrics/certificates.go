package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metric names of the serving certificate watch (internal/certwatch).
const (
	CertificateExpiryTimestampName = "seedwarden_certificate_expiry_timestamp_seconds"
	CertificateReadyName           = "seedwarden_certificate_ready"
)

// certificateCollectors are GroupCertificates'.
type certificateCollectors struct {
	expiry *prometheus.GaugeVec
	ready  *prometheus.GaugeVec
}

func newCertificateCollectors() certificateCollectors {
	labels := []string{CertificateNamespaceLabel, CertificateNameLabel}
	return certificateCollectors{
		expiry: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: CertificateExpiryTimestampName,
			Help: "status.notAfter of the webhook's cert-manager Certificate, in Unix seconds; absent while the Certificate has none.",
		}, labels),
		ready: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: CertificateReadyName,
			Help: "1 when the webhook's cert-manager Certificate has condition Ready=True, else 0 (also when it is missing or cannot be watched).",
		}, labels),
	}
}

func (c *certificateCollectors) register(reg prometheus.Registerer) {
	c.expiry = Register(reg, c.expiry)
	c.ready = Register(reg, c.ready)
}

// SetCertificateReady records whether the Certificate namespace/name is
// ready.
func (m *Recorder) SetCertificateReady(namespace, name string, ready bool) {
	if m == nil {
		return
	}
	v := 0.0
	if ready {
		v = 1
	}
	m.certificates.ready.WithLabelValues(namespace, name).Set(v)
}

// SetCertificateExpiry records the Certificate's status.notAfter; nil
// removes the sample (the Certificate has none).
func (m *Recorder) SetCertificateExpiry(namespace, name string, notAfter *time.Time) {
	if m == nil {
		return
	}
	if notAfter == nil {
		m.certificates.expiry.DeleteLabelValues(namespace, name)
		return
	}
	m.certificates.expiry.WithLabelValues(namespace, name).Set(float64(notAfter.Unix()))
}
