package handlers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	kjson "sigs.k8s.io/json"

	"github.com/seedwarden/seedwarden/internal/api"
)

// Decoding of the admitted Shoot, for every handler that reads one.

// decodeShoot decodes the admitted object. encoding/json ignores the many
// Shoot fields api.Shoot does not model. The validating webhooks use it; the
// mutating webhook decodes less (shootObject).
func decodeShoot(raw []byte) (*api.Shoot, error) {
	// A literal null would decode into an empty Shoot without error.
	if t := bytes.TrimSpace(raw); len(t) == 0 || string(t) == "null" {
		return nil, errNoObject
	}
	shoot := &api.Shoot{}
	if err := json.Unmarshal(raw, shoot); err != nil {
		return nil, fmt.Errorf("seedwarden: cannot decode object as a Shoot: %w", err)
	}
	if shoot.Kind != "" && shoot.Kind != shootGVK.kind {
		return nil, fmt.Errorf("seedwarden: object has kind %q, expected %q", shoot.Kind, shootGVK.kind)
	}
	if want := api.SchemeGroupVersion.String(); shoot.APIVersion != "" && shoot.APIVersion != want {
		return nil, fmt.Errorf("seedwarden: object has apiVersion %q, expected %q", shoot.APIVersion, want)
	}
	return shoot, nil
}

// shootObject is the admitted Shoot as the webhook reads it, decoded once and
// case-sensitively: as the API server decodes, and as JSON pointers match
// keys. Metadata, Spec and Metadata.Annotations are nil exactly when the
// member is absent or null (for an object without duplicate keys; see
// inspectObject), which is what the JSON patch needs to know. Unknown fields
// (most of a real Shoot) are skipped, not decoded.
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

var errNoObject = errors.New("seedwarden: admission request carries no object")

// decodeShootObject decodes the admitted object (Handle's path).
func decodeShootObject(raw []byte) (*shootObject, error) {
	// A literal null would decode into an empty Shoot without error.
	if t := bytes.TrimSpace(raw); len(t) == 0 || string(t) == "null" {
		return nil, errNoObject
	}
	obj := &shootObject{}
	if err := kjson.UnmarshalCaseSensitivePreserveInts(raw, obj); err != nil {
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
	if o.Kind != "" && o.Kind != shootGVK.kind {
		return fmt.Errorf("seedwarden: object has kind %q, expected %q", o.Kind, shootGVK.kind)
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
