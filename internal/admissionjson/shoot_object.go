package admissionjson

import (
	"fmt"

	"github.com/seedwarden/seedwarden/internal/api"
)

// shootObject is the admitted Shoot as the mutating webhook reads it,
// decoded once and case-sensitively: as the API server decodes, and as JSON
// pointers match keys. Metadata, Spec and Metadata.Annotations are nil
// exactly when the member is absent or null (for an object without
// duplicate keys; see inspectObject), which is what the JSON patch needs to
// know. Unknown fields (most of a real Shoot) are skipped, not decoded. A
// review read from its body decodes it as part of the review
// (decodeFastReview).
type shootObject struct {
	APIVersion string          `json:"apiVersion"`
	Kind       string          `json:"kind"`
	Metadata   *shootMetadata  `json:"metadata"`
	Spec       *api.ShootSpec  `json:"spec"`
	Status     api.ShootStatus `json:"status"`
}

// shootMetadata is what the webhook reads of metadata.
type shootMetadata struct {
	Name         string            `json:"name"`
	GenerateName string            `json:"generateName"`
	Namespace    string            `json:"namespace"`
	Annotations  map[string]string `json:"annotations"`
}

// decodeShootObject decodes the admitted object of a request controller-
// runtime decoded (DecodeShootRequest).
func decodeShootObject(raw []byte) (*shootObject, error) {
	if absent(raw) {
		return nil, errNoObject
	}
	obj := &shootObject{}
	if err := unmarshal(raw, obj); err != nil {
		return nil, fmt.Errorf("seedwarden: cannot decode object as a Shoot: %w", err)
	}
	return obj, nil
}

// check accepts a present object of the Shoot's kind and apiVersion (either
// may be left out).
func (o *shootObject) check() error {
	if o == nil {
		return errNoObject
	}
	if o.Kind != "" && o.Kind != api.ShootGVK.Kind {
		return fmt.Errorf("seedwarden: object has kind %q, expected %q", o.Kind, api.ShootGVK.Kind)
	}
	if o.APIVersion != "" && o.APIVersion != shootAPIVersion {
		return fmt.Errorf("seedwarden: object has apiVersion %q, expected %q", o.APIVersion, shootAPIVersion)
	}
	return nil
}

var shootAPIVersion = api.SchemeGroupVersion.String()

// toShoot is the Shoot placement reads.
func (o *shootObject) toShoot() *api.Shoot {
	shoot := &api.Shoot{Status: o.Status}
	shoot.APIVersion, shoot.Kind = o.APIVersion, o.Kind
	if md := o.Metadata; md != nil {
		shoot.Name, shoot.GenerateName, shoot.Namespace, shoot.Annotations = md.Name, md.GenerateName, md.Namespace, md.Annotations
	}
	if o.Spec != nil {
		shoot.Spec = *o.Spec
	}
	return shoot
}
