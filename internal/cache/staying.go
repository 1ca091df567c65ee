package cache

import (
	"encoding/json"
	"fmt"
	"unique"

	"k8s.io/utils/ptr"

	"github.com/seedwarden/seedwarden/internal/api"
)

// StayingKey stands for what placement.CheckStaying reads of a Shoot's
// spec (cloud profile, provider type, tolerations, access restrictions,
// seed selector, control plane): TransformShoot keeps it, for every Shoot
// with a seed, as one interned string. Shoots mostly share it (one profile,
// no tolerations), so 100,000 Shoots cost a handle each and a few distinct
// strings, and the audit (internal/audit) checks each distinct key once
// per seed. Comparable; the zero key is a Shoot without a seed.
type StayingKey struct{ h unique.Handle[string] }

// stayingSpec is the encoded part of the spec; short names keep the
// interned strings small.
type stayingSpec struct {
	CloudProfileName   *string                            `json:"n,omitempty"`
	CloudProfile       *api.CloudProfileReference         `json:"p,omitempty"`
	Provider           string                             `json:"t,omitempty"`
	Tolerations        []api.Toleration                   `json:"o,omitempty"`
	AccessRestrictions []api.AccessRestrictionWithOptions `json:"a,omitempty"`
	SeedSelector       *api.SeedSelector                  `json:"s,omitempty"`
	ControlPlane       *api.ControlPlane                  `json:"c,omitempty"`
}

// stayingKeyOf is the Shoot's key; zero without spec.seedName.
func stayingKeyOf(in *api.Shoot) StayingKey {
	if ptr.Deref(in.Spec.SeedName, "") == "" {
		return StayingKey{}
	}
	b, err := json.Marshal(stayingSpec{
		CloudProfileName: in.Spec.CloudProfileName, CloudProfile: in.Spec.CloudProfile,
		Provider: in.Spec.Provider.Type, Tolerations: in.Spec.Tolerations,
		AccessRestrictions: in.Spec.AccessRestrictions, SeedSelector: in.Spec.SeedSelector,
		ControlPlane: in.Spec.ControlPlane,
	})
	if err != nil {
		return StayingKey{} // plain data: json cannot fail on it
	}
	return StayingKey{unique.Make(string(b))}
}

// IsZero reports a Shoot without a seed (nothing kept).
func (k StayingKey) IsZero() bool { return k.h == (unique.Handle[string]{}) }

// Spec decodes the key into the spec fields CheckStaying reads (the rest
// empty); a zero key is an error.
func (k StayingKey) Spec() (api.ShootSpec, error) {
	if k.IsZero() {
		return api.ShootSpec{}, fmt.Errorf("no staying spec: the Shoot has no seed")
	}
	var s stayingSpec
	if err := json.Unmarshal([]byte(k.h.Value()), &s); err != nil {
		return api.ShootSpec{}, fmt.Errorf("staying spec %q: %w", k.h.Value(), err)
	}
	return api.ShootSpec{
		CloudProfileName: s.CloudProfileName, CloudProfile: s.CloudProfile,
		Provider: api.ShootProvider{Type: s.Provider}, Tolerations: s.Tolerations,
		AccessRestrictions: s.AccessRestrictions, SeedSelector: s.SeedSelector,
		ControlPlane: s.ControlPlane,
	}, nil
}

// StayingKey is the key of what CheckStaying reads of the Shoot.
func (r *ReducedShoot) StayingKey() StayingKey { return r.staying }

// SeedName is spec.seedName ("" when unset).
func (r *ReducedShoot) SeedName() string { return str(r.seed) }
