package config

import (
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
)

// Defaults of the retry controller and of leader election.
const (
	DefaultBindMode    = BindThroughSubresource
	DefaultBackoffBase = time.Second
	DefaultBackoffMax  = 5 * time.Minute
	// DefaultConflictBackoffMax caps the short backoff of a bind that was
	// refused for a place another replica holds, or lost a conflict: such a
	// place usually frees within the reservation TTL (30s).
	DefaultConflictBackoffMax = 5 * time.Second
	DefaultWorkers            = 5
	DefaultLeaderElectionID   = "seedwarden-pending-shoots"
	// PodNamespaceEnv names the environment variable (set from the downward
	// API in deploy/manifests) whose value is the default leader-election
	// namespace.
	PodNamespaceEnv = "POD_NAMESPACE"
)

// Values of pendingShoots.bindMode, how the retry controller writes
// spec.seedName: those of internal/pending's Mode, to which cmd/webhook
// converts them.
const (
	// BindThroughSubresource: the shoots/binding subresource.
	BindThroughSubresource = "binding"
	// BindThroughUpdate: a merge patch of the Shoot itself.
	BindThroughUpdate = "update"
)

// PendingShoots configures the retry controller for Shoots admitted without
// a seed (internal/pending). It runs only when serving a cluster.
type PendingShoots struct {
	// Enabled runs the controller. Default: true.
	Enabled *bool `json:"enabled,omitempty"`
	// BindMode is how a placement is written: "binding" (the shoots/binding
	// subresource, like gardener-scheduler) or "update" (a merge patch of
	// spec.seedName, for Shoots served from a CRD, which has no binding
	// subresource; the binding webhook then judges a spec.seedName change
	// through shoots as a binding). Default: binding.
	BindMode string `json:"bindMode,omitempty"`
	// BackoffBase is the wait after a Shoot's first failed attempt; it
	// doubles per failure up to BackoffMax. Defaults: 1s and 5m.
	BackoffBase Duration `json:"backoffBase,omitempty"`
	BackoffMax  Duration `json:"backoffMax,omitempty"`
	// ConflictBackoffMax caps the short backoff (50ms, doubling) after a
	// bind lost a conflict or was refused because the cluster-wide
	// reservations held the seed's last place: the place may free any
	// moment, so such a Shoot is not sent to the long backoff (for 8
	// retries in a row). At most backoffMax. Default: 5s.
	ConflictBackoffMax Duration `json:"conflictBackoffMax,omitempty"`
	// Workers is the number of Shoots placed concurrently. Default: 5.
	Workers int `json:"workers,omitempty"`
}

// LeaderElection configures the election among replicas for the retry
// controller: only the leader binds. The webhooks are served by every
// replica regardless.
type LeaderElection struct {
	// Enabled elects a leader (a Lease). Turn it off only with a single
	// replica. Default: true.
	Enabled *bool `json:"enabled,omitempty"`
	// Namespace of the Lease. Default: $POD_NAMESPACE, else gardenNamespace.
	Namespace string `json:"namespace,omitempty"`
	// ID is the Lease name. Default: seedwarden-pending-shoots.
	ID string `json:"id,omitempty"`
}

// KubeconfigSecret configures the kubeconfig Secret validator
// (/validate-kubeconfig-secret).
type KubeconfigSecret struct {
	// AllowedFields permits kubeconfig fields that are denied by default,
	// by their kubeconfig names (handlers.KubeconfigRestrictedFields, e.g.
	// "tokenFile"). Default: none.
	AllowedFields []string `json:"allowedFields,omitempty"`
	// Enforcement: deny, warn or dryrun. Default: deny.
	Enforcement string `json:"enforcement,omitempty"`
}

// PendingShootsEnabled reports whether the retry controller runs (against
// a cluster).
func (c *Config) PendingShootsEnabled() bool {
	return c.PendingShoots.Enabled == nil || *c.PendingShoots.Enabled
}

// LeaderElectionEnabled reports whether replicas elect a leader for the
// retry controller.
func (c *Config) LeaderElectionEnabled() bool {
	return c.LeaderElection.Enabled == nil || *c.LeaderElection.Enabled
}

// LeaderElectionNamespace is the namespace of the Lease: the configured one,
// else getenv(POD_NAMESPACE), else the garden namespace.
func (c *Config) LeaderElectionNamespace(getenv func(string) string) string {
	if c.LeaderElection.Namespace != "" {
		return c.LeaderElection.Namespace
	}
	if ns := strings.TrimSpace(getenv(PodNamespaceEnv)); ns != "" {
		return ns
	}
	return c.GardenNamespace
}

func (c *Config) applyPendingDefaults() {
	if c.PendingShoots.Enabled == nil {
		c.PendingShoots.Enabled = ptr.To(true)
	}
	setDefault(&c.PendingShoots.BindMode, DefaultBindMode)
	if !c.PendingShoots.BackoffBase.set {
		c.PendingShoots.BackoffBase = NewDuration(DefaultBackoffBase)
	}
	if !c.PendingShoots.BackoffMax.set {
		c.PendingShoots.BackoffMax = NewDuration(DefaultBackoffMax)
	}
	if !c.PendingShoots.ConflictBackoffMax.set {
		// Never above a shorter backoffMax, so that lowering that alone
		// stays valid.
		d := DefaultConflictBackoffMax
		if m := c.PendingShoots.BackoffMax; m.invalid == "" && m.Duration > 0 {
			d = min(d, m.Duration)
		}
		c.PendingShoots.ConflictBackoffMax = NewDuration(d)
	}
	setDefault(&c.PendingShoots.Workers, DefaultWorkers)
	if c.LeaderElection.Enabled == nil {
		c.LeaderElection.Enabled = ptr.To(true)
	}
	setDefault(&c.LeaderElection.ID, DefaultLeaderElectionID)
}

func (c *Config) validatePending(p *problems) {
	ps := c.PendingShoots
	// A duration that did not parse is reported here and stands in for its
	// partner, so the relation between the two is only judged on values
	// that were written.
	base, ceiling := ps.BackoffBase, ps.BackoffMax
	for _, d := range []struct {
		path string
		d    Duration
	}{{"pendingShoots.backoffBase", base}, {"pendingShoots.backoffMax", ceiling}} {
		if d.d.invalid != "" {
			p.add(d.path, "invalid value %s (want a duration such as \"30s\")", d.d.invalid)
		}
	}
	baseD, maxD := base.Duration, ceiling.Duration
	switch {
	case base.invalid != "" && ceiling.invalid != "":
		baseD, maxD = DefaultBackoffBase, DefaultBackoffMax
	case base.invalid != "":
		baseD = maxD
	case ceiling.invalid != "":
		maxD = baseD
	}
	switch ps.BindMode {
	case BindThroughSubresource, BindThroughUpdate:
	default:
		p.add("pendingShoots.bindMode", "unsupported value %q (want %q or %q)", ps.BindMode, BindThroughSubresource, BindThroughUpdate)
	}
	if baseD <= 0 {
		p.add("pendingShoots.backoffBase", "%s must be positive", baseD)
	}
	if maxD < baseD {
		p.add("pendingShoots.backoffMax", "%s must not be less than backoffBase %s", maxD, baseD)
	}
	switch cb := ps.ConflictBackoffMax; {
	case cb.invalid != "":
		p.add("pendingShoots.conflictBackoffMax", "invalid value %s (want a duration such as \"5s\")", cb.invalid)
	case cb.Duration <= 0:
		p.add("pendingShoots.conflictBackoffMax", "%s must be positive", cb.Duration)
	case cb.Duration > maxD:
		p.add("pendingShoots.conflictBackoffMax", "%s must not be more than backoffMax %s", cb.Duration, maxD)
	}
	if ps.Workers < 1 {
		p.add("pendingShoots.workers", "%d must be at least 1", ps.Workers)
	}

	le := c.LeaderElection
	if le.Namespace != "" {
		if errs := validation.IsDNS1123Label(le.Namespace); len(errs) > 0 {
			p.add("leaderElection.namespace", "invalid value %q: %s", le.Namespace, strings.Join(errs, "; "))
		}
	}
	if errs := validation.IsDNS1123Subdomain(le.ID); len(errs) > 0 {
		p.add("leaderElection.id", "invalid value %q (the name of a Lease): %s", le.ID, strings.Join(errs, "; "))
	}
}
