package config

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// ResourceAdmission is the resourceAdmission section of a
// gardener-admission-controller configuration
// (server.resourceAdmissionConfiguration, admissioncontroller v1alpha1
// ResourceAdmissionConfiguration), taken as it is, so that an operator can
// paste it: same field names, same meaning (see the resource-size webhook in
// docs/webhooks.md). It replaces resourceSize; the two cannot be combined.
type ResourceAdmission struct {
	// Limits: the first entry matching the request's group, version (the
	// one the client asked for) and resource applies, with its size, its
	// count, or both.
	Limits []ResourceLimit `json:"limits"`
	// UnrestrictedSubjects are never limited: RBAC subjects (kind User or
	// Group with apiGroup rbac.authorization.k8s.io, or ServiceAccount with
	// a namespace), matched as Gardener does.
	UnrestrictedSubjects []rbacv1.Subject `json:"unrestrictedSubjects,omitempty"`
	// OperationMode is block (default) or log.
	OperationMode *string `json:"operationMode,omitempty"`
}

// ResourceLimit is one entry of resourceAdmission.limits.
type ResourceLimit struct {
	APIGroups   []string `json:"apiGroups,omitempty"`
	APIVersions []string `json:"apiVersions,omitempty"`
	Resources   []string `json:"resources"`
	// Size bounds the object's JSON without status and
	// metadata.managedFields.
	Size *Quantity `json:"size,omitempty"`
	// ManagedFieldsSize bounds metadata.managedFields where Size is set
	// (not in Gardener's section). Default: DefaultManagedFieldsSize(Size).
	ManagedFieldsSize *Quantity `json:"managedFieldsSize,omitempty"`
	// Count bounds how many objects may exist (cluster-scoped resources
	// seedwarden's cache counts only).
	Count *int64 `json:"count,omitempty"`
}

// ManagedFieldsBytes is the managedFields limit of an entry with a size:
// managedFieldsSize, else the default for its size.
func (l ResourceLimit) ManagedFieldsBytes() int64 {
	if l.ManagedFieldsSize != nil {
		return l.ManagedFieldsSize.Value()
	}
	if l.Size == nil {
		return 0
	}
	return DefaultManagedFieldsSize(l.Size.Value())
}

// The default managedFields limit follows the object's size limit, with a
// floor. Measured on a real gardener-apiserver (docs/webhooks.md): a Shoot
// of 5.5 KB written by nine managers carried 9.6 KB of managedFields, one of
// 16.6 KB with two managers owning all of its spec 26.9 KB; a manager's
// entry for a whole object is about as long as the object, gardenlet's
// status entry about 3 KB whatever the limit.
const (
	ManagedFieldsSizeFactor = 2
	MinManagedFieldsSize    = 16 << 10
)

// DefaultManagedFieldsSize is the managedFields limit where an object's
// size limit is size bytes and none is configured.
func DefaultManagedFieldsSize(size int64) int64 {
	if size > math.MaxInt64/ManagedFieldsSizeFactor {
		return math.MaxInt64
	}
	return max(size*ManagedFieldsSizeFactor, MinManagedFieldsSize)
}

var errNotAQuantity = fmt.Errorf("not a quantity")

// validateManagedFieldsSize checks a managedFieldsSize as written (raw, for
// the message) and parsed (n; err when it did not parse).
func validateManagedFieldsSize(p *problems, at, raw string, n int64, err error) {
	switch {
	case err != nil:
		p.add(at, "invalid value %s (want a quantity of bytes such as 64Ki): %v", raw, err)
	case n <= 0:
		p.add(at, "%s must be positive (every object the API server writes has a managedFields entry)", raw)
	}
}

// Mode is the operation mode of resourceAdmission (default block).
func (r *ResourceAdmission) Mode() string {
	if r.OperationMode == nil {
		return OperationModeBlock
	}
	return *r.OperationMode
}

// resourceSizeSet reports whether any resourceSize field differs from its
// default.
func (c *Config) resourceSizeSet() bool {
	rs := c.ResourceSize
	return len(rs.Limits) > 0 || len(rs.Counts) > 0 || len(rs.UnrestrictedSubjects) > 0 ||
		(rs.OperationMode != "" && rs.OperationMode != OperationModeBlock) ||
		(rs.Enforcement != "" && rs.Enforcement != DefaultEnforcement)
}

func (c *Config) validateResourceAdmission(p *problems) {
	ra := c.ResourceAdmission
	if ra == nil {
		return
	}
	const path = "resourceAdmission"
	if c.resourceSizeSet() {
		p.add(path, "cannot be combined with resourceSize (configure the resource-size webhook with one of them)")
	}
	if m := ra.Mode(); m != OperationModeBlock && m != OperationModeLog {
		p.add(path+".operationMode", "unsupported value %q (want %s or %s)", m, OperationModeBlock, OperationModeLog)
	}
	for i, s := range ra.UnrestrictedSubjects {
		validateRBACSubject(p, fmt.Sprintf("%s.unrestrictedSubjects[%d]", path, i), s)
	}
	for i, l := range ra.Limits {
		at := fmt.Sprintf("%s.limits[%d]", path, i)
		r := Resources{APIGroups: l.APIGroups, APIVersions: l.APIVersions, Resources: l.Resources}
		validateResources(p, at, r)
		if l.Size == nil && l.Count == nil {
			p.add(at, "needs size, count or both")
		}
		switch {
		case l.Size == nil:
		case l.Size.invalid != "":
			p.add(at+".size", "invalid value %s (want a quantity of bytes such as 100Ki)", l.Size.invalid)
		case l.Size.Sign() < 0:
			p.add(at+".size", "%q must not be negative", l.Size.String())
		}
		if q := l.ManagedFieldsSize; q != nil {
			if l.Size == nil {
				p.add(at+".managedFieldsSize", "needs size (managedFields are limited where the object's size is)")
			}
			if q.invalid != "" {
				validateManagedFieldsSize(p, at+".managedFieldsSize", q.invalid, 0, errNotAQuantity)
			} else {
				validateManagedFieldsSize(p, at+".managedFieldsSize", strconv.Quote(q.String()), q.Value(), nil)
			}
		}
		if l.Count != nil {
			if *l.Count < 0 {
				p.add(at+".count", "%d must not be negative", *l.Count)
			}
			validateCountable(p, at, r)
		}
	}
}

// validateRBACSubject applies Gardener's rules to an unrestricted subject.
func validateRBACSubject(p *problems, at string, s rbacv1.Subject) {
	switch s.Kind {
	case rbacv1.UserKind, rbacv1.GroupKind:
		if s.Namespace != "" {
			p.add(at+".namespace", "%q is only allowed for kind %s", s.Namespace, rbacv1.ServiceAccountKind)
		}
		if s.APIGroup != rbacv1.GroupName {
			p.add(at+".apiGroup", "unsupported value %q for kind %s (want %s)", s.APIGroup, s.Kind, rbacv1.GroupName)
		}
	case rbacv1.ServiceAccountKind:
		if s.Namespace == "" {
			p.add(at+".namespace", "required for kind %s", rbacv1.ServiceAccountKind)
		}
		if s.APIGroup != "" {
			p.add(at+".apiGroup", "%q must be empty for kind %s", s.APIGroup, rbacv1.ServiceAccountKind)
		}
	default:
		p.add(at+".kind", "unsupported value %q (want %s, %s or %s)", s.Kind, rbacv1.UserKind, rbacv1.GroupKind, rbacv1.ServiceAccountKind)
	}
	if s.Name == "" {
		p.add(at+".name", "required (\"*\" matches every name)")
	}
}

// Quantity is a resource quantity written as a string ("100Ki") or a number
// (1024), as Gardener's configuration takes it. A value that does not parse
// is kept and reported by Validate with its field path.
type Quantity struct {
	resource.Quantity
	invalid string // the value as written, when it did not parse
}

// UnmarshalJSON implements json.Unmarshaler.
func (q *Quantity) UnmarshalJSON(b []byte) error {
	*q = Quantity{}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		var n json.Number
		if err := json.Unmarshal(b, &n); err != nil {
			q.invalid = string(b)
			return nil
		}
		s = n.String()
	}
	v, err := resource.ParseQuantity(s)
	if err != nil {
		q.invalid = strconv.Quote(s)
		return nil
	}
	q.Quantity = v
	return nil
}

// MarshalJSON implements json.Marshaler.
func (q Quantity) MarshalJSON() ([]byte, error) { return q.Quantity.MarshalJSON() }
