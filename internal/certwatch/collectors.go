package certwatch

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/seedwarden/seedwarden/internal/metrics"
)

// The Prometheus gauges the Watcher exports.

func boolToFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

type collectors struct {
	expiry *prometheus.GaugeVec
	ready  *prometheus.GaugeVec
}

func newCollectors(reg prometheus.Registerer) *collectors {
	c := &collectors{
		expiry: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: ExpiryTimestampName,
			Help: "status.notAfter of the webhook's cert-manager Certificate, in Unix seconds; absent while the Certificate has none.",
		}, []string{"namespace", "name"}),
		ready: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: ReadyName,
			Help: "1 when the webhook's cert-manager Certificate has condition Ready=True, else 0 (also when it is missing or cannot be watched).",
		}, []string{"namespace", "name"}),
	}
	if reg == nil {
		return c
	}
	c.expiry = metrics.Register(reg, c.expiry)
	c.ready = metrics.Register(reg, c.ready)
	return c
}
