package config

import "fmt"

// What a guard does with a request its rules refuse (the enforcement field
// of binding, capacity, resourceSize and its limits, kubeconfigSecret,
// namespaceDeletion), as Gatekeeper's enforcementAction: deny refuses it;
// warn admits it with an admission warning saying what deny would have
// refused, and records an event; dryrun admits it without a word to the
// client. All three count in seedwarden_guard_refusals_total. Only the
// rules' verdicts are softened: a guard that cannot decide (stale cache,
// unreadable request, an authorizer error) still refuses.
const (
	EnforcementDeny   = "deny"
	EnforcementWarn   = "warn"
	EnforcementDryRun = "dryrun"
	// DefaultEnforcement keeps every guard refusing.
	DefaultEnforcement = EnforcementDeny
)

// NamespaceDeletion configures the namespace-deletion webhook
// (/validate-namespace-deletion).
type NamespaceDeletion struct {
	// Enforcement: deny, warn or dryrun. Default: deny.
	Enforcement string `json:"enforcement,omitempty"`
}

func (c *Config) applyEnforcementDefaults() {
	setDefault(&c.Binding.Enforcement, DefaultEnforcement)
	setDefault(&c.Capacity.Enforcement, DefaultEnforcement)
	setDefault(&c.KubeconfigSecret.Enforcement, DefaultEnforcement)
	setDefault(&c.NamespaceDeletion.Enforcement, DefaultEnforcement)
	// operationMode log is Gardener's word for warn; an enforcement given
	// beside it must agree (validateEnforcement).
	def := DefaultEnforcement
	if c.ResourceSize.OperationMode == OperationModeLog {
		def = EnforcementWarn
	}
	setDefault(&c.ResourceSize.Enforcement, def)
}

func (c *Config) validateEnforcement(p *problems) {
	validateEnforcementValue(p, "binding.enforcement", c.Binding.Enforcement)
	validateEnforcementValue(p, "capacity.enforcement", c.Capacity.Enforcement)
	validateEnforcementValue(p, "kubeconfigSecret.enforcement", c.KubeconfigSecret.Enforcement)
	validateEnforcementValue(p, "namespaceDeletion.enforcement", c.NamespaceDeletion.Enforcement)
	rs := c.ResourceSize
	validateEnforcementValue(p, "resourceSize.enforcement", rs.Enforcement)
	if rs.OperationMode == OperationModeLog && rs.Enforcement != EnforcementWarn {
		p.add("resourceSize.enforcement", "%q contradicts resourceSize.operationMode %q (which is enforcement %s); set one of them", rs.Enforcement, OperationModeLog, EnforcementWarn)
	}
	for i, l := range rs.Limits {
		if l.Enforcement != "" {
			validateEnforcementValue(p, fmt.Sprintf("resourceSize.limits[%d].enforcement", i), l.Enforcement)
		}
	}
	for i, l := range rs.Counts {
		if l.Enforcement != "" {
			validateEnforcementValue(p, fmt.Sprintf("resourceSize.counts[%d].enforcement", i), l.Enforcement)
		}
	}
}

func validateEnforcementValue(p *problems, path, v string) {
	switch v {
	case EnforcementDeny, EnforcementWarn, EnforcementDryRun:
	default:
		p.add(path, "unsupported value %q (want %s, %s or %s)", v, EnforcementDeny, EnforcementWarn, EnforcementDryRun)
	}
}

// Enforcement is the resource-size webhook's enforcement where it is
// configured by resourceAdmission: operationMode log is warn.
func (r *ResourceAdmission) Enforcement() string {
	if r.Mode() == OperationModeLog {
		return EnforcementWarn
	}
	return EnforcementDeny
}
