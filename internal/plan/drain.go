package plan

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/utils/ptr"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// A drain moves a seed's Shoots as an operator would with Gardener: the
// seed is cordoned (it takes no Shoots), then each Shoot, in namespace/name
// order, is decided again by the placement rules on the seeds a control
// plane migration may go to, and the seed chosen is checked as Gardener's
// admission checks a changed spec.seedName. Each move is counted before
// the next Shoot is decided, so the k-th sees the first k-1.

// DrainedReason is why a drained seed takes no Shoots.
const DrainedReason = "seed is being drained by the plan"

// StepMigration is the step of a drained Shoot that the placement rules
// would place, but only on seeds Gardener refuses as the new seed of a
// control plane migration from its own: the migration rules, not the
// placement step that ran out of seeds, are why it found none.
const StepMigration placement.Step = "Migration"

func (op Drain) apply(p *planner) error {
	from, ok := p.view.Seed(op.Seed)
	if !ok {
		return fmt.Errorf("no seed %q", op.Seed)
	}
	p.view.cordon(from.Name, DrainedReason)
	// A Shoot that cannot move stays on the list; new ones are not added
	// to a cordoned seed, so the list only shrinks.
	shoots := slices.SortedFunc(slices.Values(p.view.onSeed[from.Name]), compareShoots)
	vetoes := seedVetoes(p.view, from)
	for _, shoot := range shoots {
		p.move(shoot, from, vetoes)
	}
	return nil
}

// move decides one Shoot of a drained seed again and, if a seed takes it,
// moves it there. vetoes are the seeds no Shoot of from may migrate to.
func (p *planner) move(shoot *api.Shoot, from *placement.Seed, vetoes *vetoes) {
	if code, why := immovable(shoot, from.Name); why != "" {
		p.report.Unplaced = append(p.report.Unplaced, Unplaced{Shoot: shootKey(shoot), From: from.Name, Message: why, Code: code})
		return
	}
	candidate := shoot.DeepCopy()
	candidate.Spec.SeedName, candidate.Status.SeedName = nil, nil
	vt := domainVetoes(p.view, from, shoot, vetoes)
	d, to := p.view.decide(candidate, p.opts, vt)
	if to == nil {
		p.report.Unplaced = append(p.report.Unplaced, p.whyUnplaced(shoot, candidate, from.Name, d, vt))
		return
	}
	// Decide applied every rule a binding is checked against; checking
	// again as the validating webhook would keeps a plan from promising a
	// move the admission would refuse should the two ever part.
	if v := placement.CheckSeedForShoot(p.view.Snapshot(), to, shoot, p.opts.NetworkMode); len(v) > 0 {
		p.report.Unplaced = append(p.report.Unplaced, Unplaced{Shoot: shootKey(shoot), From: from.Name, Step: placement.StepCandidates,
			Message: "the seed the placement rules chose would be refused as a binding", Reasons: map[string]string{to.Name: strings.Join(v, "; ")},
			Codes: map[string]placement.ReasonCode{to.Name: BindingRefused}, Counts: map[placement.ReasonCode]int{BindingRefused: 1}})
		return
	}
	moved := shoot.DeepCopy()
	moved.Spec.SeedName, moved.Status.SeedName = ptr.To(to.Name), ptr.To(to.Name)
	p.view.unplace(shoot, from)
	p.view.place(moved, to)
	p.report.Placed = append(p.report.Placed, Placed{Shoot: shootKey(shoot), From: from.Name, To: to.Name, Scores: d.Scores})
}

// whyUnplaced reports a drained Shoot that found no seed with the rule
// that stopped it. d is the decision with the migration vetoes vt; the
// placement rules alone decide again: if they find a seed, the vetoes are
// the reason (StepMigration); if not, their step is, since it would stop
// the Shoot whatever the vetoes, and a seed they keep shows its veto.
func (p *planner) whyUnplaced(shoot, candidate *api.Shoot, from string, d placement.Decision, vt *vetoes) Unplaced {
	if len(vt.reasons) == 0 {
		return unplaced(shoot, from, d)
	}
	alone, to := p.view.decide(candidate, p.opts, nil)
	if to != nil {
		u := unplaced(shoot, from, d)
		u.Step, u.Code = StepMigration, MigrationRefused
		u.Message = fmt.Sprintf("no seed it could go to accepts a control plane migration from %q (without the migration rules it would go to %q)", from, to.Name)
		return u
	}
	if seedsConsidered(alone.Step) {
		if alone.Codes == nil {
			alone.Codes = map[string]placement.ReasonCode{}
		}
		for name, why := range vt.reasons {
			if _, ok := alone.Reasons[name]; !ok {
				alone.Reasons[name], alone.Codes[name] = why, vt.codes[name]
			}
		}
	}
	return unplaced(shoot, from, alone)
}

// immovable says why a Shoot cannot be moved at all, or "": Gardener
// refuses a new seed while a migration is under way (status.seedName is
// another seed) and for a Shoot being deleted.
func immovable(shoot *api.Shoot, from string) (placement.ReasonCode, string) {
	if shoot.DeletionTimestamp != nil {
		return ShootDeleting, "the Shoot is being deleted (metadata.deletionTimestamp is set)"
	}
	if status := ptr.Deref(shoot.Status.SeedName, ""); status != "" && status != from {
		return MigrationInProgress, fmt.Sprintf("a control plane migration from seed %q to %q is under way (status.seedName is %q)", status, from, status)
	}
	return "", ""
}

// Gardener's admission refuses a new seed for a control plane migration
// unless both seeds have backup and the internal domain stays the same
// (seedVetoes, the same for every Shoot of the seed), and, for a Shoot
// under one of the old seed's default domains, unless the new seed serves
// that domain too (domainVetoes).

// seedVetoes are the seeds no Shoot of from may migrate to, with the reason.
func seedVetoes(v *View, from *placement.Seed) *vetoes {
	veto := &vetoes{reasons: map[string]string{}, codes: map[string]placement.ReasonCode{}}
	old := from.Object
	for _, s := range v.snap.Seeds {
		target := s.Object
		switch o, n := internalDomain(old), internalDomain(target); {
		case old.Spec.Backup == nil:
			veto.veto(s.Name, MigrationOldSeedNoBackup, fmt.Sprintf("cannot change seed name because backup is not configured for old seed %q", old.Name))
		case target.Spec.Backup == nil:
			veto.veto(s.Name, MigrationSeedNoBackup, fmt.Sprintf("cannot change seed name because backup is not configured for seed %q", target.Name))
		case o != n:
			veto.veto(s.Name, MigrationInternalDomainChange, fmt.Sprintf("cannot change seed name because internal domain would change from %q to %q", o, n))
		}
	}
	return veto
}

// domainVetoes adds to vt the seeds that do not serve the default domain of
// from the Shoot's spec.dns.domain lies under, if any: new vetoes, vt itself
// is not changed (and is returned as it is for a Shoot without one).
func domainVetoes(v *View, from *placement.Seed, shoot *api.Shoot, vt *vetoes) *vetoes {
	d := usedDefaultDomain(from.Object, shoot)
	if d == "" {
		return vt
	}
	out := &vetoes{reasons: maps.Clone(vt.reasons), codes: maps.Clone(vt.codes)}
	for _, s := range v.snap.Seeds {
		if _, ok := out.reasons[s.Name]; !ok && !slices.Contains(defaultDomains(s.Object), d) {
			out.veto(s.Name, MigrationDefaultDomainNotServed, fmt.Sprintf("the Shoot uses the default domain %q of seed %q, which seed %q does not serve (it serves %q)", d, from.Name, s.Name, defaultDomains(s.Object)))
		}
	}
	return out
}

func internalDomain(s *api.Seed) string {
	if s.Spec.DNS.Internal == nil {
		return ""
	}
	return s.Spec.DNS.Internal.Domain
}

func defaultDomains(s *api.Seed) []string {
	out := make([]string, len(s.Spec.DNS.Defaults))
	for i, d := range s.Spec.DNS.Defaults {
		out[i] = d.Domain
	}
	return out
}

// usedDefaultDomain is the default domain of seed under which the Shoot's
// spec.dns.domain lies, or "".
func usedDefaultDomain(seed *api.Seed, shoot *api.Shoot) string {
	if shoot.Spec.DNS == nil || shoot.Spec.DNS.Domain == nil {
		return ""
	}
	for _, d := range defaultDomains(seed) {
		if strings.HasSuffix(*shoot.Spec.DNS.Domain, "."+d) {
			return d
		}
	}
	return ""
}
