package config

import (
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Policies are seedwarden's placement policies (issue 39): preferences
// Gardener's scheduler cannot express and seed pools. cmd/webhook converts
// them into placement.Policies once (placementOptions), for every decision
// site. Absent: every decision is Gardener's. A Seed annotated
// seedwarden.io/avoid or seedwarden.io/soft-limit-percent opts in by
// itself, config or not: each is an operator's act on that one seed.
type Policies struct {
	// SoftLimitPercent is the soft limit of every seed with
	// status.allocatable.shoots, as a percentage of it: a seed holding at
	// least that many Shoots is used only when every admitting seed does.
	// 0 (default): no soft limit; 1-100. A Seed's annotation
	// seedwarden.io/soft-limit-percent overrides it.
	SoftLimitPercent int `json:"softLimitPercent,omitempty"`
	// KeptSeats are places kept on multi-zonal seeds for Shoots with
	// failure tolerance zone.
	KeptSeats KeptSeats `json:"keptSeats,omitempty"`
	// Pools map projects to seeds, by name in this list.
	Pools []Pool `json:"pools,omitempty"`
}

// KeptSeats sets how many places each multi-zonal seed (3 or more zones,
// as Gardener's zone filter counts) with status.allocatable.shoots keeps for
// zone-redundant Shoots: Seats, or Percent of the seed's capacity (rounded
// up), not both. Default: none.
type KeptSeats struct {
	Seats   int64 `json:"seats,omitempty"`
	Percent int   `json:"percent,omitempty"`
}

// Pool maps projects to seeds.
type Pool struct {
	// Name names the pool in decisions and messages (a DNS-1123 label).
	Name string `json:"name"`
	// Mode is Required (the pool's projects go only to its seeds, its
	// seeds take only its projects' Shoots) or Preferred (the same as a
	// preference).
	Mode string `json:"mode"`
	// Projects are the pool's projects by name; ProjectSelector adds those
	// whose labels match. At least one of them.
	Projects        []string              `json:"projects,omitempty"`
	ProjectSelector *metav1.LabelSelector `json:"projectSelector,omitempty"`
	// SeedSelector selects the pool's seeds by label (required, not empty).
	SeedSelector *metav1.LabelSelector `json:"seedSelector"`
}

// Values of policies.pools[].mode.
const (
	PoolRequired  = "Required"
	PoolPreferred = "Preferred"
)

// MaxPools bounds policies.pools: a decision keeps the pools of a seed and
// of a Shoot as bit sets of one word.
const MaxPools = 64

func (c *Config) validatePolicies(p *problems) {
	pol := c.Policies
	if pol == nil {
		return
	}
	if pol.SoftLimitPercent < 0 || pol.SoftLimitPercent > 100 {
		p.add("policies.softLimitPercent", "%d is out of range (want 0 for none, or 1 to 100)", pol.SoftLimitPercent)
	}
	k := pol.KeptSeats
	if k.Seats < 0 {
		p.add("policies.keptSeats.seats", "%d must not be negative", k.Seats)
	}
	if k.Percent < 0 || k.Percent > 100 {
		p.add("policies.keptSeats.percent", "%d is out of range (want 0 to 100)", k.Percent)
	}
	if k.Seats > 0 && k.Percent > 0 {
		p.add("policies.keptSeats", "seats %d and percent %d both set (want one of them)", k.Seats, k.Percent)
	}
	if len(pol.Pools) > MaxPools {
		p.add("policies.pools", "%d pools, more than %d", len(pol.Pools), MaxPools)
	}
	seen := map[string]int{}
	for i, pool := range pol.Pools {
		path := "policies.pools[" + strconv.Itoa(i) + "]"
		if errs := validation.IsDNS1123Label(pool.Name); len(errs) > 0 {
			p.add(path+".name", "invalid value %q: %s", pool.Name, strings.Join(errs, "; "))
		} else if j, dup := seen[pool.Name]; dup {
			p.add(path+".name", "duplicate pool %q (already policies.pools[%d])", pool.Name, j)
		} else {
			seen[pool.Name] = i
		}
		switch pool.Mode {
		case PoolRequired, PoolPreferred:
		default:
			p.add(path+".mode", "unsupported value %q (want %s or %s)", pool.Mode, PoolRequired, PoolPreferred)
		}
		if len(pool.Projects) == 0 && pool.ProjectSelector == nil {
			p.add(path, "names no project (set projects, projectSelector or both)")
		}
		for j, name := range pool.Projects {
			if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
				p.add(path+".projects["+strconv.Itoa(j)+"]", "invalid project name %q: %s", name, strings.Join(errs, "; "))
			}
		}
		validatePoolSelector(p, path+".projectSelector", pool.ProjectSelector, false)
		validatePoolSelector(p, path+".seedSelector", pool.SeedSelector, true)
	}
}

// validatePoolSelector checks a selector parses; a required one must be
// present and not empty (an empty selector would take every seed).
func validatePoolSelector(p *problems, path string, sel *metav1.LabelSelector, required bool) {
	if sel == nil {
		if required {
			p.add(path, "missing (want matchLabels or matchExpressions)")
		}
		return
	}
	if len(sel.MatchLabels) == 0 && len(sel.MatchExpressions) == 0 {
		p.add(path, "empty selector matches everything (want matchLabels or matchExpressions)")
		return
	}
	if _, err := metav1.LabelSelectorAsSelector(sel); err != nil {
		p.add(path, "invalid selector: %v", err)
	}
}
