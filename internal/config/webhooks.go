package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
)

// The validating webhooks' settings: binding, capacity and resourceSize.

// Defaults and limits of the validating webhooks' settings.
const (
	DefaultAuthorizationCacheTTL = 10 * time.Second
	MaxAuthorizationCacheTTL     = 5 * time.Minute
	DefaultAuthorizationTimeout  = 3 * time.Second
	// MaxAuthorizationTimeout is the longest timeout the API server allows a
	// webhook; a SubjectAccessReview waiting longer could never be answered.
	MaxAuthorizationTimeout = 30 * time.Second

	OperationModeBlock = "block"
	OperationModeLog   = "log"

	SubjectUser           = "User"
	SubjectGroup          = "Group"
	SubjectServiceAccount = "ServiceAccount"

	// GardenerGroup is the API group of the resources count limits can count.
	GardenerGroup = "core.gardener.cloud"
)

// Binding configures the binding webhook (/validate-shoot-binding).
type Binding struct {
	// Enabled registers the webhook. Default: true.
	Enabled *bool `json:"enabled,omitempty"`
	// AuthorizationCacheTTL is how long a SubjectAccessReview answer is
	// reused for the same user, groups, UID, extra, namespace and Shoot.
	// "0s" disables the cache. Default: 10s; at most 5m.
	AuthorizationCacheTTL Duration `json:"authorizationCacheTTL,omitempty"`
	// AuthorizationTimeout bounds one SubjectAccessReview. Default: 3s; at
	// most 30s. Keep it below the webhook's timeoutSeconds.
	AuthorizationTimeout Duration `json:"authorizationTimeout,omitempty"`
	// LandscapeAllowedSubjects may bind Shoots in --landscape mode, where
	// there is no API server to ask. Default: nobody. Ignored against a
	// cluster (RBAC decides there).
	LandscapeAllowedSubjects []Subject `json:"landscapeAllowedSubjects,omitempty"`
	// Enforcement of the binding rules (permission, the seed's fit, the
	// ways a seed may change): deny, warn or dryrun. Default: deny.
	Enforcement string `json:"enforcement,omitempty"`
}

// Capacity configures the capacity webhook (/validate-shoot-capacity).
type Capacity struct {
	// Enabled registers the webhook. Default: true.
	Enabled *bool `json:"enabled,omitempty"`
	// UnrestrictedSubjects may place Shoots on full seeds (binding RBAC
	// still applies to them).
	UnrestrictedSubjects []Subject `json:"unrestrictedSubjects,omitempty"`
	// Coordination is how replicas share seed capacity: local (reservations
	// in each replica's memory: right for one replica and for --landscape)
	// or apiserver (through ConfigMaps in ReservationNamespace, so that any
	// number of replicas never overfill a seed together; see
	// internal/seedreserve). Default: local.
	Coordination string `json:"coordination,omitempty"`
	// ReservationNamespace holds the seedwarden-capacity-<seed> ConfigMaps
	// (apiserver only). Default: the pod's namespace ($POD_NAMESPACE, else
	// the service account's namespace file), resolved when serving.
	ReservationNamespace string `json:"reservationNamespace,omitempty"`
	// Enforcement of a full seed (and of the reservation limits): deny,
	// warn or dryrun. Default: deny. A request admitted by warn or dryrun
	// that deny would have refused takes no place.
	Enforcement string `json:"enforcement,omitempty"`
}

// Values of capacity.coordination.
const (
	CoordinationLocal     = "local"
	CoordinationAPIServer = "apiserver"
	// DefaultCoordination is local: a single replica (and --landscape)
	// needs no API round trips. deploy/manifests sets apiserver.
	DefaultCoordination = CoordinationLocal
)

// APIServer reports whether reservations go through the API server.
func (c Capacity) APIServer() bool { return c.Coordination == CoordinationAPIServer }

// ResourceSize configures the resource-size webhook (/validate-resource-size).
type ResourceSize struct {
	// OperationMode: block denies writes over a limit; log admits them with
	// a warning and a log line. Default: block.
	OperationMode string `json:"operationMode,omitempty"`
	// Limits on the size of an object's JSON without status and
	// metadata.managedFields. The first limit matching the request's
	// group, version and resource applies.
	Limits []SizeLimit `json:"limits,omitempty"`
	// Counts limit how many objects of a cluster-scoped resource may exist
	// (seeds, projects, cloudprofiles of core.gardener.cloud): a CREATE is
	// refused when as many already exist. The first matching entry applies.
	Counts []CountLimit `json:"counts,omitempty"`
	// UnrestrictedSubjects are never limited.
	UnrestrictedSubjects []Subject `json:"unrestrictedSubjects,omitempty"`
	// Enforcement of the limits that set none of their own: deny, warn or
	// dryrun. Default: deny (warn with operationMode log).
	Enforcement string `json:"enforcement,omitempty"`
}

// Resources selects resources like an admission webhook rule: each list
// holds names or "*" for all; "" in APIGroups is the core group.
type Resources struct {
	APIGroups   []string `json:"apiGroups"`
	APIVersions []string `json:"apiVersions"`
	Resources   []string `json:"resources"`
}

// SizeLimit limits the size of the selected resources' objects.
type SizeLimit struct {
	Resources
	// Size is a quantity of bytes, such as 100Ki or 1M.
	Size string `json:"size"`
	// ManagedFieldsSize bounds metadata.managedFields, a quantity of bytes.
	// Default: DefaultManagedFieldsSize(Size).
	ManagedFieldsSize string `json:"managedFieldsSize,omitempty"`
	// Enforcement of this limit (its size and managedFields): deny, warn
	// or dryrun. Default: resourceSize.enforcement.
	Enforcement string `json:"enforcement,omitempty"`
}

// Bytes returns the limit in bytes (rounded up).
func (l SizeLimit) Bytes() (int64, error) {
	q, err := resource.ParseQuantity(l.Size)
	if err != nil {
		return 0, err
	}
	return q.Value(), nil
}

// ManagedFieldsBytes returns the managedFields limit in bytes:
// managedFieldsSize, else the default for the size.
func (l SizeLimit) ManagedFieldsBytes() (int64, error) {
	if l.ManagedFieldsSize != "" {
		q, err := resource.ParseQuantity(l.ManagedFieldsSize)
		if err != nil {
			return 0, err
		}
		return q.Value(), nil
	}
	n, err := l.Bytes()
	if err != nil {
		return 0, err
	}
	return DefaultManagedFieldsSize(n), nil
}

// CountLimit limits how many objects of the selected resources may exist.
type CountLimit struct {
	Resources
	// Count is required: no CREATE is admitted while this many objects
	// exist (0 allows none).
	Count *int64 `json:"count"`
	// Enforcement of this limit: deny, warn or dryrun. Default:
	// resourceSize.enforcement.
	Enforcement string `json:"enforcement,omitempty"`
}

// Subject names users exempted from a limit. Name (and Namespace for a
// ServiceAccount) may contain "*", which matches any run of characters.
type Subject struct {
	// Kind is User, Group or ServiceAccount.
	Kind string `json:"kind"`
	// Name of the user, group or service account.
	Name string `json:"name"`
	// Namespace of a ServiceAccount (required for it, forbidden for others).
	Namespace string `json:"namespace,omitempty"`
}

// BindingEnabled reports whether the binding webhook is served.
func (c *Config) BindingEnabled() bool { return c.Binding.Enabled == nil || *c.Binding.Enabled }

// CapacityEnabled reports whether the capacity webhook is served.
func (c *Config) CapacityEnabled() bool { return c.Capacity.Enabled == nil || *c.Capacity.Enabled }

func (c *Config) applyWebhookDefaults() {
	if !c.Binding.AuthorizationCacheTTL.set {
		c.Binding.AuthorizationCacheTTL = NewDuration(DefaultAuthorizationCacheTTL)
	}
	if !c.Binding.AuthorizationTimeout.set {
		c.Binding.AuthorizationTimeout = NewDuration(DefaultAuthorizationTimeout)
	}
	setDefault(&c.ResourceSize.OperationMode, OperationModeBlock)
	if c.Binding.Enabled == nil {
		c.Binding.Enabled = ptr.To(true)
	}
	if c.Capacity.Enabled == nil {
		c.Capacity.Enabled = ptr.To(true)
	}
	setDefault(&c.Capacity.Coordination, DefaultCoordination)
	c.applyEnforcementDefaults()
}

func (c *Config) validateWebhooks(p *problems) {
	validateDurationRange(p, "binding.authorizationCacheTTL", c.Binding.AuthorizationCacheTTL, 0, MaxAuthorizationCacheTTL)
	validateDurationRange(p, "binding.authorizationTimeout", c.Binding.AuthorizationTimeout, time.Millisecond, MaxAuthorizationTimeout)
	validateSubjects(p, "binding.landscapeAllowedSubjects", c.Binding.LandscapeAllowedSubjects)
	validateSubjects(p, "capacity.unrestrictedSubjects", c.Capacity.UnrestrictedSubjects)
	switch c.Capacity.Coordination {
	case CoordinationLocal, CoordinationAPIServer:
	default:
		p.add("capacity.coordination", "unsupported value %q (want %s or %s)", c.Capacity.Coordination, CoordinationLocal, CoordinationAPIServer)
	}
	if ns := c.Capacity.ReservationNamespace; ns != "" {
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			p.add("capacity.reservationNamespace", "invalid value %q: %s", ns, strings.Join(errs, "; "))
		}
	}
	c.validateResourceSize(p)
	c.validateEnforcement(p)
}

func (c *Config) validateResourceSize(p *problems) {
	rs := c.ResourceSize
	switch rs.OperationMode {
	case OperationModeBlock, OperationModeLog:
	default:
		p.add("resourceSize.operationMode", "unsupported value %q (want %s or %s)", rs.OperationMode, OperationModeBlock, OperationModeLog)
	}
	for i, l := range rs.Limits {
		path := fmt.Sprintf("resourceSize.limits[%d]", i)
		validateResources(p, path, l.Resources)
		switch n, err := l.Bytes(); {
		case l.Size == "":
			p.add(path+".size", "required (a quantity of bytes such as 100Ki)")
		case err != nil:
			p.add(path+".size", "invalid value %q (want a quantity of bytes such as 100Ki): %v", l.Size, err)
		case n <= 0:
			p.add(path+".size", "%q must be positive", l.Size)
		}
		if l.ManagedFieldsSize != "" {
			q, err := resource.ParseQuantity(l.ManagedFieldsSize)
			validateManagedFieldsSize(p, path+".managedFieldsSize", strconv.Quote(l.ManagedFieldsSize), q.Value(), err)
		}
	}
	for i, l := range rs.Counts {
		path := fmt.Sprintf("resourceSize.counts[%d]", i)
		validateResources(p, path, l.Resources)
		validateCountable(p, path, l.Resources)
		switch {
		case l.Count == nil:
			p.add(path+".count", "required (the number of objects that may exist)")
		case *l.Count < 0:
			p.add(path+".count", "%d must not be negative", *l.Count)
		}
	}
	validateSubjects(p, "resourceSize.unrestrictedSubjects", rs.UnrestrictedSubjects)
}

func validateResources(p *problems, path string, r Resources) {
	check := func(field string, list []string, allowEmptyName bool) {
		if len(list) == 0 {
			p.add(path+"."+field, `must not be empty (use ["*"] for all)`)
		}
		for j, v := range list {
			switch {
			case v == "" && !allowEmptyName:
				p.add(fmt.Sprintf("%s.%s[%d]", path, field, j), "must not be empty")
			case strings.ContainsFunc(v, isSpaceOrControl):
				p.add(fmt.Sprintf("%s.%s[%d]", path, field, j), "invalid value %q", v)
			case field == "resources" && strings.Contains(v, "/"):
				p.add(fmt.Sprintf("%s.%s[%d]", path, field, j), "invalid value %q: subresources are not limited (their requests are admitted)", v)
			}
		}
	}
	check("apiGroups", r.APIGroups, true)
	check("apiVersions", r.APIVersions, false)
	check("resources", r.Resources, false)
}

// validateCountable rejects count limits on groups the cache does not count
// from. Which resources of the group it counts, cmd/webhook checks (a
// Check with internal/cache's list).
func validateCountable(p *problems, path string, r Resources) {
	for j, g := range r.APIGroups {
		if g != GardenerGroup {
			p.add(fmt.Sprintf("%s.apiGroups[%d]", path, j), "cannot count resources of group %q (want %s)", g, GardenerGroup)
		}
	}
}

func validateSubjects(p *problems, path string, subjects []Subject) {
	for i, s := range subjects {
		at := fmt.Sprintf("%s[%d]", path, i)
		switch s.Kind {
		case SubjectUser, SubjectGroup:
			if s.Namespace != "" {
				p.add(at+".namespace", "%q is only allowed for kind %s", s.Namespace, SubjectServiceAccount)
			}
		case SubjectServiceAccount:
			if s.Namespace == "" {
				p.add(at+".namespace", "required for kind %s (\"*\" for all namespaces)", SubjectServiceAccount)
			}
		default:
			p.add(at+".kind", "unsupported value %q (want %s, %s or %s)", s.Kind, SubjectUser, SubjectGroup, SubjectServiceAccount)
		}
		if s.Name == "" {
			p.add(at+".name", "required (\"*\" matches every name)")
		}
	}
}
