package main

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"

	"github.com/seedwarden/seedwarden/internal/autoscalingapi"
)

// crdValidator validates a SeedAutoscaler as the API server does on
// CREATE: the OpenAPI schema, then the CEL rules.
type crdValidator struct {
	schema     validation.SchemaCreateValidator
	structural *structuralschema.Structural
	cel        *cel.Validator
}

func newCRDValidator(t *testing.T, name string) *crdValidator {
	t.Helper()
	crd := readShippedCRD(t, name)
	internal := &apiextensions.JSONSchemaProps{}
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(crd.Spec.Versions[0].Schema.OpenAPIV3Schema, internal, nil); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	ss, err := structuralschema.NewStructural(internal)
	if err != nil {
		t.Fatalf("%s: structural schema: %v", name, err)
	}
	sv, _, err := validation.NewSchemaValidator(internal)
	if err != nil {
		t.Fatalf("%s: schema validator: %v", name, err)
	}
	return &crdValidator{schema: sv, structural: ss, cel: cel.NewValidator(ss, true, celconfig.PerCallLimit)}
}

// validate is the API server's verdict on spec: its errors, if any.
func (v *crdValidator) validate(t *testing.T, spec autoscalingapi.SeedAutoscalerSpec) field.ErrorList {
	t.Helper()
	sa := autoscalingapi.SeedAutoscaler{
		TypeMeta:   metav1.TypeMeta{APIVersion: autoscalingapi.SchemeGroupVersion.String(), Kind: "SeedAutoscaler"},
		ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "garden"},
		Spec:       spec,
	}
	raw, err := json.Marshal(sa)
	if err != nil {
		t.Fatal(err)
	}
	// As the API server decodes: whole numbers as int64, which CEL's int
	// needs.
	var obj map[string]any
	if err := utiljson.Unmarshal(raw, &obj); err != nil {
		t.Fatal(err)
	}
	delete(obj, "status")
	errs := validation.ValidateCustomResource(nil, obj, v.schema)
	celErrs, _ := v.cel.Validate(context.Background(), nil, v.structural, obj, nil, celconfig.RuntimeCELCostBudget)
	return append(errs, celErrs...)
}

// metricSpace generates metrics from every field's interesting values,
// valid and not: a type that names the field set or another, each bound
// and one past it.
func metricSpace(r *rand.Rand) autoscalingapi.MetricSpec {
	pick := func(n int) int { return r.IntN(n) }
	ptr32 := func(vs ...int32) *int32 {
		i := pick(len(vs) + 1)
		if i == len(vs) {
			return nil
		}
		return &vs[i]
	}
	m := autoscalingapi.MetricSpec{Type: []autoscalingapi.MetricSourceType{"Resource", "Headroom", "Pods"}[pick(3)]}
	if pick(2) == 0 {
		m.Resource = &autoscalingapi.ResourceMetricSource{
			Name: []string{"shoots", "cpu"}[pick(2)],
			Target: autoscalingapi.MetricTarget{
				Type:               []autoscalingapi.MetricTargetType{"Utilization", "AverageValue", "Value"}[pick(3)],
				AverageUtilization: ptr32(0, 1, 50, 100, 101),
				AverageValue:       ptr32(0, 1, 7),
			},
		}
	}
	if pick(2) == 0 {
		m.Headroom = &autoscalingapi.HeadroomMetricSource{
			Profile:   []string{"", "small"}[pick(2)],
			MinShoots: []int32{0, 1, 20, autoscalingapi.MaxHeadroomShoots, autoscalingapi.MaxHeadroomShoots + 1}[pick(5)],
		}
		// Mostly a valid pool, so that enough metrics are valid at all.
		if pick(4) == 0 {
			m.Headroom.Pool = []string{"Payments", "-payments", "a" + strings.Repeat("b", 63)}[pick(3)]
		} else {
			m.Headroom.Pool = []string{"", "payments", "a" + strings.Repeat("b", 62)}[pick(3)]
		}
		if pick(2) == 0 {
			m.Headroom.Shoot = &runtime.RawExtension{Raw: []byte(`{"apiVersion":"core.gardener.cloud/v1beta1","kind":"Shoot","metadata":{"name":"like"}}`)}
		}
	}
	return m
}

// The valid-metric rule is one: what autoscalingapi.ValidateMetric accepts
// (and seedscale, which calls it, reads) is exactly what the CRD the
// project ships admits, on generated metrics covering every field's bounds
// and every mix of type and fields.
func TestValidateMetricAgreesWithCRD(t *testing.T) {
	for _, name := range autoscalerCRDs {
		v := newCRDValidator(t, name)
		r := rand.New(rand.NewPCG(36, 6))
		seen := map[bool]int{}
		for i := range 900 {
			m := metricSpace(r)
			spec := autoscalingapi.SeedAutoscalerSpec{
				ScaleTargetRef: autoscalingapi.CrossVersionObjectReference{APIVersion: "seedmanagement.gardener.cloud/v1alpha1", Kind: "ManagedSeedSet", Name: "aws"},
				MaxReplicas:    3,
				Metrics:        []autoscalingapi.MetricSpec{m},
			}
			crdErrs := v.validate(t, spec)
			goErr := autoscalingapi.ValidateMetric("spec.metrics[0]", &m)
			seen[goErr == nil]++
			if (len(crdErrs) == 0) != (goErr == nil) {
				b, _ := json.Marshal(m)
				t.Errorf("%s: case %d %s: CRD says %v, ValidateMetric says %v", name, i, b, crdErrs.ToAggregate(), goErr)
			}
		}
		// Both verdicts must be exercised, or agreement proves nothing.
		if seen[true] < 20 || seen[false] < 20 {
			t.Errorf("%s: %d valid and %d invalid metrics generated: too few of one", name, seen[true], seen[false])
		}
	}
}
