package placement

import (
	"fmt"
	"strings"

	"k8s.io/utils/ptr"
)

// filterDomain is step 8: a Shoot domain under a seed's default domain keeps
// only the seeds that give it.
func (d *decider) filterDomain(seeds []*Seed) ([]*Seed, Decision) {
	kept, err := d.matchDomain(seeds)
	if err != nil {
		return nil, d.failErr(StepDomain, "", err)
	}
	if len(kept) == 0 {
		return nil, d.fail(StepDomain, "", "none of the %d seeds support the domain %q configured in the shoot specification", len(seeds), ptr.Deref(d.shoot.Spec.DNS.Domain, ""))
	}
	return kept, Decision{}
}

// matchDomain: a shoot domain under some seed's default domain d is a
// Gardener-managed domain and must be exactly <shoot>.<project>.<d>; only seeds
// with such a d qualify. A custom domain leaves every seed.
func (d *decider) matchDomain(seeds []*Seed) ([]*Seed, error) {
	dns := d.shoot.Spec.DNS
	if dns == nil || dns.Domain == nil || *dns.Domain == "" {
		return seeds, nil
	}
	domain := *dns.Domain
	managed := false
	for _, s := range seeds {
		for _, def := range s.defaultDomains {
			if strings.HasSuffix(domain, "."+def) {
				managed = true
			}
		}
	}
	if !managed {
		return seeds, nil
	}
	project, ok := d.snap.Projects[d.shoot.Namespace]
	if !ok {
		return nil, &codedError{ProjectNotFound, fmt.Errorf("spec.dns.domain %q is under a seed default domain, but no Project owns namespace %q", domain, d.shoot.Namespace)}
	}
	prefix := d.shoot.Name + "." + project.Name + "."
	return d.filterBy(seeds, func(s *Seed) (ReasonCode, string) {
		for _, def := range s.defaultDomains {
			if domain == prefix+def {
				return "", ""
			}
		}
		return DomainMismatch, "no default domain of the seed gives the shoot's domain"
	}), nil
}
