package autoscalingapi

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// ValidateMetric is the rule a stored spec.metrics[i] meets, in one place:
// the CRD's schema (enums, minimums, the XValidation rules of MetricSpec,
// MetricTarget and HeadroomMetricSource) says the same, and
// TestValidateMetricAgreesWithCRD (hack/crds) holds the two to each other.
// seedscale checks every metric with it before reading one, since an
// object stored before the CRD had its rules never met them. path is the
// metric's field path ("spec.metrics[2]"); the error names the field and
// its value.
func ValidateMetric(path string, m *MetricSpec) error {
	switch {
	case m.Type == ResourceMetricSourceType && m.Resource != nil && m.Headroom == nil:
		return validateResource(path+".resource", m.Resource)
	case m.Type == HeadroomMetricSourceType && m.Headroom != nil && m.Resource == nil:
		return validateHeadroom(path+".headroom", m.Headroom)
	case m.Type != ResourceMetricSourceType && m.Type != HeadroomMetricSourceType:
		return fmt.Errorf("%s.type: %q is not a metric type (%s or %s)", path, m.Type, ResourceMetricSourceType, HeadroomMetricSourceType)
	}
	return fmt.Errorf("%s.type: %q needs its own field (resource or headroom) and no other", path, m.Type)
}

func validateResource(path string, r *ResourceMetricSource) error {
	if r.Name != ResourceShoots {
		return fmt.Errorf("%s.name: %q is not supported (only %q)", path, r.Name, ResourceShoots)
	}
	t := &r.Target
	switch {
	case t.Type == UtilizationMetricType && t.AverageUtilization != nil:
	case t.Type == AverageValueMetricType && t.AverageValue != nil:
	default:
		return fmt.Errorf("%s.target: type %q needs averageUtilization (Utilization) or averageValue (AverageValue)", path, t.Type)
	}
	// Both bounds hold for a field set beside the one the type names: the
	// CRD's minimum and maximum are per field.
	if u := t.AverageUtilization; u != nil && (*u < 1 || *u > 100) {
		return fmt.Errorf("%s.target.averageUtilization: %d is out of range (1 to 100)", path, *u)
	}
	if v := t.AverageValue; v != nil && *v < 1 {
		return fmt.Errorf("%s.target.averageValue: %d must be at least 1", path, *v)
	}
	return nil
}

// MaxHeadroomShoots bounds a Headroom metric's minShoots (the CRD's
// maximum says the same).
const MaxHeadroomShoots = 100000

func validateHeadroom(path string, h *HeadroomMetricSource) error {
	if h.MinShoots < 1 || h.MinShoots > MaxHeadroomShoots {
		return fmt.Errorf("%s.minShoots: %d is out of range (1 to %d)", path, h.MinShoots, MaxHeadroomShoots)
	}
	if (h.Profile != "") == (h.Shoot != nil) {
		return fmt.Errorf("%s: set exactly one of profile and shoot", path)
	}
	if h.Pool != "" {
		// The CRD's pattern and maxLength: a DNS-1123 label, as
		// policies.pools[].name is.
		if errs := validation.IsDNS1123Label(h.Pool); len(errs) > 0 {
			return fmt.Errorf("%s.pool: invalid value %q: %s", path, h.Pool, strings.Join(errs, "; "))
		}
	}
	return nil
}
