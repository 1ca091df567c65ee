package landscape

import (
	"errors"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/autoscalingapi"
	"github.com/seedwarden/seedwarden/internal/operationsapi"
	"github.com/seedwarden/seedwarden/internal/seedmanagement"
)

// checks vet a decoded object of a kind as its API server would: a file
// never went through one, and the SeedAutoscaler's rules live in its
// CustomResourceDefinition's schema.
var checks = map[string]func(client.Object) error{
	KindSeedAutoscaler: func(o client.Object) error {
		return checkSeedAutoscaler(&o.(*autoscalingapi.SeedAutoscaler).Spec)
	},
	KindSeedDrain: func(o client.Object) error {
		return o.(*operationsapi.SeedDrain).Spec.Validate()
	},
}

// checkSeedAutoscaler applies the CustomResourceDefinition's rules; errors
// name the field and its value.
func checkSeedAutoscaler(s *autoscalingapi.SeedAutoscalerSpec) error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	ref := s.ScaleTargetRef
	if want := seedmanagement.SchemeGroupVersion.String(); ref.APIVersion != want {
		add("spec.scaleTargetRef.apiVersion: %q: must be %s", ref.APIVersion, want)
	}
	if ref.Kind != seedmanagement.KindManagedSeedSet {
		add("spec.scaleTargetRef.kind: %q: must be %s", ref.Kind, seedmanagement.KindManagedSeedSet)
	}
	if ref.Name == "" {
		add("spec.scaleTargetRef.name: must not be empty")
	}
	if s.MaxReplicas < 1 {
		add("spec.maxReplicas: %d: must be at least 1", s.MaxReplicas)
	} else if s.MaxReplicas > autoscalingapi.MaxReplicasLimit {
		add("spec.maxReplicas: %d: must be at most %d", s.MaxReplicas, autoscalingapi.MaxReplicasLimit)
	}
	if m := s.MinReplicas; m != nil && *m < 0 {
		add("spec.minReplicas: %d: must not be negative", *m)
	} else if m != nil && *m > s.MaxReplicas {
		add("spec.minReplicas: %d: must not exceed spec.maxReplicas (%d)", *m, s.MaxReplicas)
	}
	if len(s.Metrics) == 0 {
		add("spec.metrics: at least one metric is required")
	}
	for i, m := range s.Metrics {
		errs = append(errs, checkMetric(fmt.Sprintf("spec.metrics[%d]", i), m)...)
	}
	if b := s.Behavior; b != nil {
		errs = append(errs, checkRules("spec.behavior.scaleUp", b.ScaleUp)...)
		errs = append(errs, checkRules("spec.behavior.scaleDown", b.ScaleDown)...)
	}
	// The bounds the CRD (metrics) and seedwarden's webhook (inline Shoots)
	// hold a stored SeedAutoscaler to.
	errs = append(errs, s.CheckBounds())
	return errors.Join(errs...)
}

func checkMetric(field string, m autoscalingapi.MetricSpec) []error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(field+format, args...)) }
	switch m.Type {
	case autoscalingapi.ResourceMetricSourceType:
		if m.Resource == nil || m.Headroom != nil {
			add(": type Resource: set resource, and not headroom")
			return errs
		}
		if m.Resource.Name != autoscalingapi.ResourceShoots {
			add(".resource.name: %q: must be %s", m.Resource.Name, autoscalingapi.ResourceShoots)
		}
		t := m.Resource.Target
		switch t.Type {
		case autoscalingapi.UtilizationMetricType:
			if u := t.AverageUtilization; u == nil || *u < 1 || *u > 100 {
				add(".resource.target.averageUtilization: %s: type Utilization needs a percent from 1 to 100", orUnset(u))
			}
		case autoscalingapi.AverageValueMetricType:
			if v := t.AverageValue; v == nil || *v < 1 {
				add(".resource.target.averageValue: %s: type AverageValue needs at least 1", orUnset(v))
			}
		default:
			add(".resource.target.type: %q: must be Utilization or AverageValue", t.Type)
		}
	case autoscalingapi.HeadroomMetricSourceType:
		h := m.Headroom
		if h == nil || m.Resource != nil {
			add(": type Headroom: set headroom, and not resource")
			return errs
		}
		if (h.Profile == "") == (h.Shoot == nil) {
			add(".headroom: set exactly one of profile and shoot")
		}
		if h.MinShoots < 1 || h.MinShoots > 100000 {
			add(".headroom.minShoots: %d: must be from 1 to 100000", h.MinShoots)
		}
	default:
		add(".type: %q: must be Resource or Headroom", m.Type)
	}
	return errs
}

func checkRules(field string, r *autoscalingapi.ScalingRules) []error {
	if r == nil {
		return nil
	}
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(field+format, args...)) }
	if w := r.StabilizationWindowSeconds; w != nil && (*w < 0 || *w > 86400) {
		add(".stabilizationWindowSeconds: %d: must be from 0 to 86400", *w)
	}
	if p := r.SelectPolicy; p != nil {
		switch *p {
		case autoscalingapi.MaxChangePolicySelect, autoscalingapi.MinChangePolicySelect, autoscalingapi.DisabledPolicySelect:
		default:
			add(".selectPolicy: %q: must be Max, Min or Disabled", *p)
		}
	}
	for i, p := range r.Policies {
		if p.Type != autoscalingapi.SeedsScalingPolicy && p.Type != autoscalingapi.PercentScalingPolicy {
			add(".policies[%d].type: %q: must be Seeds or Percent", i, p.Type)
		}
		if p.Value < 1 {
			add(".policies[%d].value: %d: must be at least 1", i, p.Value)
		}
		if p.PeriodSeconds < 1 || p.PeriodSeconds > 86400 {
			add(".policies[%d].periodSeconds: %d: must be from 1 to 86400", i, p.PeriodSeconds)
		}
	}
	return errs
}

func orUnset(v *int32) string {
	if v == nil {
		return "unset"
	}
	return fmt.Sprint(*v)
}
