package admissionjson

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seedwarden/seedwarden/internal/autoscalingapi"
)

// seedAutoscalerAPIVersion is the apiVersion of the objects DecodeSeedAutoscaler reads.
var seedAutoscalerAPIVersion = autoscalingapi.SchemeGroupVersion.String()

// DecodeSeedAutoscaler decodes a SeedAutoscaler (request.object, or
// request.oldObject) as the API server reads it. The API server has already
// held the object to the CRD's schema, so this reads, it does not vet;
// an inline Shoot template stays raw JSON, as sent. Only what the webhook
// reads is decoded: the type, name, namespace and spec.
func DecodeSeedAutoscaler(raw []byte) (*autoscalingapi.SeedAutoscaler, error) {
	if absent(raw) {
		return nil, errNoObject
	}
	// Of metadata only the name and namespace are read (decoding all of
	// it, managedFields of `{}` cost 200 times their bytes; status is not
	// read at all).
	var obj struct {
		metav1.TypeMeta `json:",inline"`
		Metadata        struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
		Spec autoscalingapi.SeedAutoscalerSpec `json:"spec"`
	}
	if err := unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("seedwarden: cannot decode object as a SeedAutoscaler: %w", err)
	}
	sa := &autoscalingapi.SeedAutoscaler{TypeMeta: obj.TypeMeta, Spec: obj.Spec}
	sa.Name, sa.Namespace = obj.Metadata.Name, obj.Metadata.Namespace
	if sa.Kind != "" && sa.Kind != autoscalingapi.KindSeedAutoscaler {
		return nil, fmt.Errorf("seedwarden: object has kind %q, expected %q", sa.Kind, autoscalingapi.KindSeedAutoscaler)
	}
	if sa.APIVersion != "" && sa.APIVersion != seedAutoscalerAPIVersion {
		return nil, fmt.Errorf("seedwarden: object has apiVersion %q, expected %q", sa.APIVersion, seedAutoscalerAPIVersion)
	}
	return sa, nil
}
