package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/runtime/serializer"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulerconfigv1alpha1 "github.com/gardener/gardener/pkg/apis/config/scheduler/v1alpha1"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"github.com/gardener/gardener/pkg/client/kubernetes"
)

// scenario is one scenario of the conformance corpus format
// (internal/placement/testdata/CONFORMANCE.md). Its recorded expectation is
// accepted and ignored: deciding it is this program's job.
type scenario struct {
	Name           string            `json:"name"`
	Strategy       string            `json:"strategy"`
	NetworkOverlap string            `json:"networkOverlap"`
	Objects        []json.RawMessage `json:"objects"`
	Shoot          json.RawMessage   `json:"shoot"`
	Expect         json.RawMessage   `json:"expect,omitempty"`
}

// landscape is a scenario decoded into Gardener's own types.
type landscape struct {
	strategy schedulerconfigv1alpha1.CandidateDeterminationStrategy
	objects  []client.Object
	shoot    *gardencorev1beta1.Shoot
}

// deletingFinalizer is put on a deleting object that carries no finalizer:
// the API server never holds such an object (it would be gone), and the fake
// client refuses to. DetermineSeed reads no finalizers.
const deletingFinalizer = "seedwarden.oracle/deleting"

// parseScenario reads one scenario envelope strictly, so a misspelt field is
// an error rather than a silently empty one.
func parseScenario(raw []byte) (scenario, error) {
	var s scenario
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return s, fmt.Errorf("scenario: %w", err)
	}
	return s, nil
}

// nameOf recovers a scenario's name for the error line of an envelope that
// did not parse.
func nameOf(raw []byte) string {
	var n struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(raw, &n)
	return n.Name
}

// strictDecoder decodes into Gardener's garden scheme without defaulting or
// conversion: the objects are taken as an API server returns them. Strict, so
// a field Gardener's types do not have is reported instead of dropped.
var strictDecoder = serializer.NewCodecFactory(kubernetes.GardenScheme, serializer.EnableStrict).UniversalDeserializer()

// decodeLandscape turns a scenario into Gardener objects, refusing a scenario
// meant for the other network rule or an unknown strategy.
func decodeLandscape(s scenario, ownOverlap string) (*landscape, error) {
	if s.NetworkOverlap != ownOverlap {
		return nil, fmt.Errorf("networkOverlap %q: this binary links Gardener's %s network rule (use decide for %s, decide-disjoint for %s)",
			s.NetworkOverlap, ownOverlap, overlapAllowIPv4, overlapDisjoint)
	}
	strategy := schedulerconfigv1alpha1.CandidateDeterminationStrategy(s.Strategy)
	if !slices.Contains(schedulerconfigv1alpha1.Strategies, strategy) {
		return nil, fmt.Errorf("strategy %q: want one of %v", s.Strategy, schedulerconfigv1alpha1.Strategies)
	}
	if len(s.Shoot) == 0 {
		return nil, fmt.Errorf("shoot: missing")
	}
	l := &landscape{strategy: strategy}
	for i, raw := range s.Objects {
		obj, err := decodeObject(raw)
		if err != nil {
			return nil, fmt.Errorf("objects[%d]: %w", i, err)
		}
		l.objects = append(l.objects, obj)
	}
	obj, err := decodeObject(s.Shoot)
	if err != nil {
		return nil, fmt.Errorf("shoot: %w", err)
	}
	shoot, ok := obj.(*gardencorev1beta1.Shoot)
	if !ok {
		return nil, fmt.Errorf("shoot: kind %s, want Shoot", obj.GetObjectKind().GroupVersionKind().Kind)
	}
	if shoot.Spec.SeedName != nil {
		return nil, fmt.Errorf("shoot: spec.seedName %q is set; the Shoot to place has none", *shoot.Spec.SeedName)
	}
	l.shoot = shoot
	return l, nil
}

func decodeObject(raw []byte) (client.Object, error) {
	obj, gvk, err := strictDecoder.Decode(raw, nil, nil)
	if err != nil {
		return nil, err
	}
	cobj, ok := obj.(client.Object)
	if !ok {
		return nil, fmt.Errorf("%s is not an object with metadata", gvk)
	}
	if cobj.GetName() == "" {
		return nil, fmt.Errorf("%s without metadata.name", gvk.Kind)
	}
	if cobj.GetDeletionTimestamp() != nil && len(cobj.GetFinalizers()) == 0 {
		cobj.SetFinalizers([]string{deletingFinalizer})
	}
	return cobj, nil
}
