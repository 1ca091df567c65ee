package admissionjson

import (
	"encoding/json"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/types"

	"github.com/seedwarden/seedwarden/internal/api"
)

// shootObject is the admitted Shoot as the webhooks read it, decoded once
// and case-sensitively: as the API server decodes, and as JSON pointers
// match keys; only what is read is decoded (prune.go). Metadata, Spec and Metadata.Annotations are nil
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

// shootMetadata is what the webhooks read of metadata.
type shootMetadata struct {
	Name         string         `json:"name"`
	GenerateName string         `json:"generateName"`
	Namespace    string         `json:"namespace"`
	UID          types.UID      `json:"uid"`
	Annotations  ownAnnotations `json:"annotations"`
}

// shoot has shootObject's fields without its UnmarshalJSON: what the
// decoder fills from the pruned object.
type shoot shootObject

var shootFieldsType = reflect.TypeFor[shoot]()

// decodeShootObject decodes the admitted object of a request controller-
// runtime decoded (DecodeShootRequest), or a stored one (refuse false);
// refuse makes a case variant of a read field's key an error.
func decodeShootObject(raw []byte, refuse bool) (*shootObject, error) {
	if absent(raw) {
		return nil, errNoObject
	}
	obj := &shootObject{}
	if err := obj.decode(raw, refuse); err != nil {
		if _, variant := err.(*CaseVariantError); variant {
			return nil, err
		}
		return nil, fmt.Errorf("seedwarden: cannot decode object as a Shoot: %w", err)
	}
	return obj, nil
}

// UnmarshalJSON decodes what the webhooks read of the object: the one pass
// over a review (decodeFastReview) decodes its object here.
func (o *shootObject) UnmarshalJSON(raw []byte) error {
	return o.decode(raw, false)
}

// decode prunes raw, sizes o for it and decodes it (prune.go).
func (o *shootObject) decode(raw []byte, refuse bool) error {
	fields := (*shoot)(o)
	if !json.Valid(raw) {
		return unmarshal(raw, fields) // the decoder's own syntax error
	}
	pruned, err := prune(raw, shootFieldsType, refuse)
	if err != nil {
		return err
	}
	if v := reflect.ValueOf(fields).Elem(); !presize(&walker{b: pruned}, v) {
		v.SetZero()
	}
	return unmarshal(pruned, fields)
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
		shoot.Name, shoot.GenerateName, shoot.Namespace, shoot.UID = md.Name, md.GenerateName, md.Namespace, md.UID
		shoot.Annotations = md.Annotations
	}
	if o.Spec != nil {
		shoot.Spec = *o.Spec
	}
	return shoot
}
