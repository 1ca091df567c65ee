package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/seedwarden/seedwarden/internal/metrics"
)

// A part that is off registers no collectors.
func TestMetricGroups(t *testing.T) {
	for _, tc := range []struct {
		name          string
		config        string
		reservationNS string
		want          []metrics.Group
	}{
		{"defaults", "", "", []metrics.Group{metrics.GroupPending, metrics.GroupLeadership}},
		{"pending off", "pendingShoots: {enabled: false}\nplacement: {mode: patch}\n", "", nil},
		{"reservations", "", "seedwarden", []metrics.Group{metrics.GroupPending, metrics.GroupReservations, metrics.GroupLeadership}},
		{"certificate", "certificate: {namespace: seedwarden, name: webhook}\n", "", []metrics.Group{metrics.GroupPending, metrics.GroupCertificates, metrics.GroupLeadership}},
		{"autoscaler", "autoscaler: {enabled: true}\n", "", []metrics.Group{metrics.GroupPending, metrics.GroupAutoscaler, metrics.GroupLeadership}},
		{"autoscaler alone", "pendingShoots: {enabled: false}\nplacement: {mode: patch}\nautoscaler: {enabled: true}\n", "", []metrics.Group{metrics.GroupAutoscaler, metrics.GroupLeadership}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := loadConfig(writeFile(t, "config.yaml", configHeader+tc.config))
			if !assert.NoError(t, err) {
				return
			}
			assert.Equal(t, tc.want, metricGroups(cfg, tc.reservationNS))
		})
	}
}
