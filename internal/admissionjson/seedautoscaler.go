package admissionjson

import (
	"fmt"

	"github.com/seedwarden/seedwarden/internal/autoscalingapi"
)

// seedAutoscalerAPIVersion is the apiVersion of the objects DecodeSeedAutoscaler reads.
var seedAutoscalerAPIVersion = autoscalingapi.SchemeGroupVersion.String()

// DecodeSeedAutoscaler decodes a SeedAutoscaler (request.object, or
// request.oldObject) as the API server reads it. The API server has already
// held the object to the CRD's schema, so this reads, it does not vet;
// an inline Shoot template stays raw JSON, as sent.
func DecodeSeedAutoscaler(raw []byte) (*autoscalingapi.SeedAutoscaler, error) {
	if absent(raw) {
		return nil, errNoObject
	}
	sa := &autoscalingapi.SeedAutoscaler{}
	if err := unmarshal(raw, sa); err != nil {
		return nil, fmt.Errorf("seedwarden: cannot decode object as a SeedAutoscaler: %w", err)
	}
	if sa.Kind != "" && sa.Kind != autoscalingapi.KindSeedAutoscaler {
		return nil, fmt.Errorf("seedwarden: object has kind %q, expected %q", sa.Kind, autoscalingapi.KindSeedAutoscaler)
	}
	if sa.APIVersion != "" && sa.APIVersion != seedAutoscalerAPIVersion {
		return nil, fmt.Errorf("seedwarden: object has apiVersion %q, expected %q", sa.APIVersion, seedAutoscalerAPIVersion)
	}
	return sa, nil
}
