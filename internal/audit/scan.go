// Package audit checks the Shoots already on seeds against the rules of
// staying there (placement.CheckStaying): what an operator changed since a
// Shoot was placed (a taint, labels, a CloudProfile's seedSelector, access
// restrictions, zones, a deletion, allocatable) and that the binding guard
// would now refuse. Scan reads the reduced Shoots of the watch cache and
// the Store's snapshot only; Reports turns its findings into OpenReports
// Reports, one per project namespace; the Reconciler runs it on the leader
// every audit.interval and writes the reports that changed.
package audit

import (
	"cmp"
	"iter"
	"slices"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/metrics"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// Result is one rule one bound Shoot breaks.
type Result struct {
	Namespace, Shoot, Seed string
	Rule                   placement.ReasonCode
	Message                string
}

// Findings are one scan's results, sorted by namespace, Shoot and rule,
// and how many bound Shoots it checked.
type Findings struct {
	Results []Result
	Checked int
}

// check is a memo key: Shoots that agree on what CheckStaying reads share
// one check per seed. namespace is set only for a NamespacedCloudProfile,
// which resolves in the Shoot's namespace.
type check struct {
	key       cache.StayingKey
	seed      string
	namespace string
}

// spec is a decoded StayingKey.
type spec struct {
	spec       api.ShootSpec
	namespaced bool
	err        error
}

// Scan checks every Shoot with a seed (spec.seedName) that is not being
// deleted. The snapshot and the Shoots come from the cache: no API call.
func Scan(snap *placement.Snapshot, shoots iter.Seq[*cache.ReducedShoot]) Findings {
	return new(Scanner).Scan(snap, shoots)
}

// Scanner is Scan with the decoded keys kept from one scan to the next
// (the Reconciler's): a landscape of Shoots that share little decodes each
// key once, not once per audit. Keys no Shoot has any more are dropped at
// the end of a scan. Not safe for concurrent use.
type Scanner struct {
	specs map[cache.StayingKey]*spec
}

// Scan is the package's Scan, reusing the keys the last one decoded.
func (sc *Scanner) Scan(snap *placement.Snapshot, shoots iter.Seq[*cache.ReducedShoot]) Findings {
	prev := sc.specs
	specs := make(map[cache.StayingKey]*spec, len(prev))
	checks := map[check][]placement.Violation{}
	var f Findings
	for s := range shoots {
		seed, key := s.SeedName(), s.StayingKey()
		if seed == "" || key.IsZero() || s.GetDeletionTimestamp() != nil {
			continue
		}
		f.Checked++
		sp := specs[key]
		if sp == nil {
			if sp = prev[key]; sp == nil {
				sp = &spec{}
				sp.spec, sp.err = key.Spec()
				sp.namespaced = sp.spec.CloudProfile != nil && sp.spec.CloudProfile.Kind == api.KindNamespacedCloudProfile
			}
			specs[key] = sp
		}
		if sp.err != nil {
			continue // cannot happen: the key is the cache's own encoding
		}
		c := check{key: key, seed: seed}
		if sp.namespaced {
			c.namespace = s.GetNamespace()
		}
		vs, ok := checks[c]
		if !ok {
			shoot := &api.Shoot{Spec: sp.spec}
			shoot.Namespace = s.GetNamespace()
			vs = placement.CheckStaying(snap, seed, shoot)
			checks[c] = vs
		}
		f.Results = appendResults(f.Results, s, seed, vs)
	}
	slices.SortFunc(f.Results, compareResults)
	sc.specs = specs
	return f
}

// appendResults adds one result per rule the Shoot breaks: violations of
// one rule (two missing zones) share it, their messages joined.
func appendResults(out []Result, s *cache.ReducedShoot, seed string, vs []placement.Violation) []Result {
	first := len(out)
	for _, v := range vs {
		if i := slices.IndexFunc(out[first:], func(r Result) bool { return r.Rule == v.Code }); i >= 0 {
			out[first+i].Message += "; " + v.Message
			continue
		}
		out = append(out, Result{Namespace: s.GetNamespace(), Shoot: s.GetName(), Seed: seed, Rule: v.Code, Message: v.Message})
	}
	return out
}

func compareResults(a, b Result) int {
	return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Shoot, b.Shoot), cmp.Compare(a.Rule, b.Rule), cmp.Compare(a.Message, b.Message))
}

// Violating counts the Shoots in violation per seed and rule.
func (f Findings) Violating() map[metrics.AuditKey]int {
	out := map[metrics.AuditKey]int{}
	for _, r := range f.Results {
		out[metrics.AuditKey{Seed: r.Seed, Rule: string(r.Rule)}]++
	}
	return out
}
