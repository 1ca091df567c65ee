package placement

import (
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/seedwarden/seedwarden/internal/api"
)

// Policies are seedwarden's placement policies beyond Gardener's
// algorithm (issue 39): three preferences (seeds to avoid, a soft limit
// below allocatable, places kept for zone-redundant Shoots) and seed
// pools. A nil *Policies is none configured; the seed annotations
// api.AnnotationSeedAvoid and api.AnnotationSeedSoftLimitPercent act with
// or without it, as each is an operator's act on that one seed.
//
// The preferences never drop a seed: after the strategy (step 11) they
// rank the seeds left and only those of the best rank go on to step 12
// (policies_step.go). A Required pool is a filter (StepPools, after step
// 4: filters.go says why). Every decision site gets them from the same Options, so the
// webhook, the retry controller, simulate, plan, headroom and the
// SeedAutoscaler decide alike.
type Policies struct {
	// SoftLimitPercent is every seed's soft limit as a percentage of its
	// status.allocatable.shoots (SoftLimit); 0: none, 1-100.
	SoftLimitPercent int
	// KeptSeats and KeptSeatsPercent are the places a multi-zonal seed
	// with allocatable keeps for Shoots with failure tolerance zone
	// (KeptSeatsOf): a number, or a percentage of allocatable rounded up;
	// at most one of them is set.
	KeptSeats        int64
	KeptSeatsPercent int
	// Pools, at most MaxPools, names unique.
	Pools []Pool

	// err: the configuration did not convert (BrokenPolicies); every
	// decision fails at StepPools rather than ignore a Required pool.
	err error
}

// BrokenPolicies stands for policies whose configuration did not convert:
// decisions with them fail (StepPools, PoliciesInvalid), so a Shoot is left
// to Gardener's scheduler instead of placed against a Required pool.
// Configuration is validated at start-up; this only keeps a decision from
// acting on policies that were not.
func BrokenPolicies(err error) *Policies { return &Policies{err: err} }

// PoolMode is how a pool binds its projects and seeds.
type PoolMode string

const (
	// PoolRequired: the pool's projects go only to its seeds and its seeds
	// take only its projects' Shoots (a filter, StepPools).
	PoolRequired PoolMode = "Required"
	// PoolPreferred: the pool's projects prefer its seeds (the last of
	// the preferences); its seeds take any Shoot.
	PoolPreferred PoolMode = "Preferred"
)

// MaxPools bounds Policies.Pools: a seed's and a project's pools are each
// a PoolSet of one word.
const MaxPools = 64

// Pool maps projects (by name or label selector) to seeds (by label
// selector). Build it with NewPool.
type Pool struct {
	Name     string
	Mode     PoolMode
	Projects []string
	// ProjectSelector is nil when the pool names its projects only.
	ProjectSelector labels.Selector
	SeedSelector    labels.Selector
	// matchLabels is the seed selector when it is matchLabels alone
	// (policies_match.go); nil otherwise.
	matchLabels []label
}

// NewPool builds a pool from the selectors of its configuration; errors
// name the field and the value. A seed selector is required and must
// select something (an empty one would take every seed).
func NewPool(name string, mode PoolMode, projects []string, projectSelector, seedSelector *metav1.LabelSelector) (Pool, error) {
	p := Pool{Name: name, Mode: mode, Projects: projects}
	switch mode {
	case PoolRequired, PoolPreferred:
	default:
		return Pool{}, fmt.Errorf("pool %q: mode: unsupported value %q (want %s or %s)", name, mode, PoolRequired, PoolPreferred)
	}
	if seedSelector == nil || (len(seedSelector.MatchLabels) == 0 && len(seedSelector.MatchExpressions) == 0) {
		return Pool{}, fmt.Errorf("pool %q: seedSelector: missing or empty (want matchLabels or matchExpressions)", name)
	}
	var err error
	if p.SeedSelector, err = metav1.LabelSelectorAsSelector(seedSelector); err != nil {
		return Pool{}, fmt.Errorf("pool %q: seedSelector: %w", name, err)
	}
	p.matchLabels = simpleMatchLabels(seedSelector)
	if projectSelector != nil {
		if p.ProjectSelector, err = metav1.LabelSelectorAsSelector(projectSelector); err != nil {
			return Pool{}, fmt.Errorf("pool %q: projectSelector: %w", name, err)
		}
	}
	if len(projects) == 0 && p.ProjectSelector == nil {
		return Pool{}, fmt.Errorf("pool %q: names no project (want projects, projectSelector or both)", name)
	}
	return p, nil
}

// Validate names the offending field and value.
func (p *Policies) Validate() error {
	if p == nil {
		return nil
	}
	if p.err != nil {
		return p.err
	}
	if p.SoftLimitPercent < 0 || p.SoftLimitPercent > 100 {
		return fmt.Errorf("softLimitPercent: %d is out of range (want 0 to 100)", p.SoftLimitPercent)
	}
	if p.KeptSeats < 0 || p.KeptSeatsPercent < 0 || p.KeptSeatsPercent > 100 || (p.KeptSeats > 0 && p.KeptSeatsPercent > 0) {
		return fmt.Errorf("keptSeats: seats %d, percent %d (want one of them, seats >= 0, percent 0 to 100)", p.KeptSeats, p.KeptSeatsPercent)
	}
	if len(p.Pools) > MaxPools {
		return fmt.Errorf("pools: %d pools, more than %d", len(p.Pools), MaxPools)
	}
	for i, pool := range p.Pools {
		if pool.SeedSelector == nil || (pool.Mode != PoolRequired && pool.Mode != PoolPreferred) {
			return fmt.Errorf("pools[%d] %q: build it with NewPool (mode %q)", i, pool.Name, pool.Mode)
		}
		if slices.IndexFunc(p.Pools[:i], func(o Pool) bool { return o.Name == pool.Name }) >= 0 {
			return fmt.Errorf("pools[%d]: duplicate pool %q", i, pool.Name)
		}
	}
	return nil
}

// PoolSet is a set of pools by their index in Policies.Pools.
type PoolSet uint64

// Has reports whether pool i is in the set.
func (s PoolSet) Has(i int) bool { return s&(1<<uint(i)) != 0 }

// first is the lowest pool index in a non-empty set.
func (s PoolSet) first() int { return bits.TrailingZeros64(uint64(s)) }

// SeedPools are the pools whose seed selector selects the seed.
func (p *Policies) SeedPools(s *Seed) PoolSet {
	if p == nil {
		return 0
	}
	return p.seedPoolsOf(s, ^PoolSet(0))
}

// seedPoolsOf is SeedPools among the pools of among only: a decision
// matches only the selectors it needs.
func (p *Policies) seedPoolsOf(s *Seed, among PoolSet) PoolSet {
	var set PoolSet
	for i := range p.Pools {
		if among.Has(i) && p.Pools[i].selects(s) {
			set |= 1 << uint(i)
		}
	}
	return set
}

// inAny reports whether the seed is in some pool of set.
func (p *Policies) inAny(s *Seed, set PoolSet) bool {
	for i := range p.Pools {
		if set.Has(i) && p.Pools[i].selects(s) {
			return true
		}
	}
	return false
}

// ProjectPools are the pools the project belongs to, by name or by its
// labels; none for a nil project (a Snapshot that does not track them).
func (p *Policies) ProjectPools(pr *Project) PoolSet {
	if p == nil || pr == nil {
		return 0
	}
	var set PoolSet
	for i := range p.Pools {
		pool := &p.Pools[i]
		if slices.Contains(pool.Projects, pr.Name) || (pool.ProjectSelector != nil && pool.ProjectSelector.Matches(labels.Set(pr.Labels))) {
			set |= 1 << uint(i)
		}
	}
	return set
}

// PoolsOf returns the pools of the given mode as a set.
func (p *Policies) PoolsOf(mode PoolMode) PoolSet {
	if p == nil {
		return 0
	}
	var set PoolSet
	for i := range p.Pools {
		if p.Pools[i].Mode == mode {
			set |= 1 << uint(i)
		}
	}
	return set
}

// PoolNames names the pools of a set, in configuration order.
func (p *Policies) PoolNames(set PoolSet) []string {
	var names []string
	for i := range p.poolCount() {
		if set.Has(i) {
			names = append(names, p.Pools[i].Name)
		}
	}
	return names
}

func (p *Policies) poolCount() int {
	if p == nil {
		return 0
	}
	return len(p.Pools)
}

// RequiredRefusal is the Required pool that keeps the seed from the
// project's Shoots, or ok false when none does: for every Required pool a
// seed in it takes only its projects' Shoots, and its projects go only to
// its seeds. The first such pool in configuration order is named. A nil
// project belongs to no pool. The binding guard asks this of a seed
// chosen by hand; decisions apply the same rule (StepPools).
func (p *Policies) RequiredRefusal(s *Seed, pr *Project) (pool RequiredViolation, ok bool) {
	required := p.PoolsOf(PoolRequired)
	if required == 0 {
		return RequiredViolation{}, false
	}
	return p.requiredRefusal(required, p.ProjectPools(pr), s)
}

// RequiredViolation is why a Required pool keeps a seed from a Shoot.
type RequiredViolation struct {
	// Pool is the pool's name.
	Pool string
	// SeedInPool: the seed is the pool's and the Shoot's project is not;
	// otherwise the project is the pool's and the seed is not.
	SeedInPool bool
}

// Code is the violation's reason code.
func (v RequiredViolation) Code() ReasonCode {
	if v.SeedInPool {
		return SeedReservedForPool
	}
	return SeedOutsideRequiredPool
}

// String says it for people, naming the pool.
func (v RequiredViolation) String() string {
	if v.SeedInPool {
		return fmt.Sprintf("seed belongs to Required pool %q, which the shoot's project is not in", v.Pool)
	}
	return fmt.Sprintf("shoot's project is in Required pool %q, which the seed is not in", v.Pool)
}

func (p *Policies) requiredRefusal(required, project PoolSet, s *Seed) (RequiredViolation, bool) {
	diff := (p.seedPoolsOf(s, required) ^ project) & required
	if diff == 0 {
		return RequiredViolation{}, false
	}
	i := diff.first()
	return RequiredViolation{Pool: p.Pools[i].Name, SeedInPool: !project.Has(i)}, true
}

// SoftLimit is the seed's soft limit: floor(allocatable x percent / 100),
// percent from the seed's api.AnnotationSeedSoftLimitPercent if it has a
// valid one, else Policies.SoftLimitPercent. ok is false without one (no
// allocatable, percent 0). A seed at or past it is used only when every
// seed left is.
func (p *Policies) SoftLimit(s *Seed) (limit int64, ok bool) {
	if !s.hasAllocatable {
		return 0, false
	}
	pct := s.softLimitPct
	if pct < 0 {
		pct = 0
		if p != nil {
			pct = p.SoftLimitPercent
		}
	}
	if pct == 0 {
		return 0, false
	}
	return s.allocatable * int64(pct) / 100, true
}

// KeptSeatsOf is how many places the seed keeps for Shoots with failure
// tolerance zone: only a multi-zonal seed (3 or more zones, as the
// failure-tolerance filter counts) with allocatable keeps any.
func (p *Policies) KeptSeatsOf(s *Seed) int64 {
	if p == nil || !s.hasAllocatable || len(s.zones) < 3 {
		return 0
	}
	if p.KeptSeatsPercent > 0 {
		return (s.allocatable*int64(p.KeptSeatsPercent) + 99) / 100
	}
	return p.KeptSeats
}

// Avoided is the operator's reason for avoiding the seed (the value of
// api.AnnotationSeedAvoid, "avoided" when empty) and whether it is avoided.
func (s *Seed) Avoided() (reason string, ok bool) { return s.avoid, s.avoided }

// SoftLimitAnnotationError is why the seed's
// api.AnnotationSeedSoftLimitPercent is ignored, or nil.
func (s *Seed) SoftLimitAnnotationError() error { return s.softLimitErr }

// digestPolicyMarkers reads the policy annotations of a Seed.
func (s *Seed) digestPolicyMarkers(ann map[string]string) {
	s.softLimitPct = -1
	if reason, ok := ann[api.AnnotationSeedAvoid]; ok {
		s.avoided = true
		s.avoid = strings.TrimSpace(reason)
		if s.avoid == "" {
			s.avoid = "avoided"
		}
	}
	v, ok := ann[api.AnnotationSeedSoftLimitPercent]
	if !ok {
		return
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 || n > 100 {
		s.softLimitErr = fmt.Errorf("annotation %s: invalid value %q (want an integer 0 to 100), ignored", api.AnnotationSeedSoftLimitPercent, v)
		return
	}
	s.softLimitPct = n
}

// marked: the seed carries a policy annotation that acts on decisions.
func (s *Seed) marked() bool { return s.avoided || s.softLimitPct > 0 }
