package autoscalingapi

import (
	"errors"
	"fmt"
)

// Bounds of a SeedAutoscaler's spec. Every sync evaluates each metric at
// each replica count it tries, so the metrics' number bounds what one
// SeedAutoscaler costs the leader (BENCHMARKS.md §23 measures a sync per
// number of metrics); the CRD's maxItems says the same (a test ties them).
// The CRD cannot measure a preserved object's size, so the size of an
// inline Shoot is checked by the SeedAutoscaler webhook, the landscape file
// check and the recommendation, all through CheckBounds.
const (
	// MaxMetrics bounds spec.metrics.
	MaxMetrics = 16
	// MaxInlineShootBytes bounds the JSON of one Headroom metric's inline
	// Shoot: an example Shoot is under 1 KiB, one with many workers,
	// extensions and tolerations a few KiB.
	MaxInlineShootBytes = 16 << 10
)

// CheckBounds refuses a spec past MaxMetrics or with an inline Shoot past
// MaxInlineShootBytes; the error names the field and its value.
func (s *SeedAutoscalerSpec) CheckBounds() error {
	var errs []error
	if n := len(s.Metrics); n > MaxMetrics {
		errs = append(errs, fmt.Errorf("spec.metrics: %d metrics: at most %d", n, MaxMetrics))
	}
	for i, m := range s.Metrics {
		if m.Headroom == nil || m.Headroom.Shoot == nil {
			continue
		}
		if n := len(m.Headroom.Shoot.Raw); n > MaxInlineShootBytes {
			errs = append(errs, fmt.Errorf("spec.metrics[%d].headroom.shoot: %d bytes of JSON: at most %d", i, n, MaxInlineShootBytes))
		}
	}
	return errors.Join(errs...)
}
