package main

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	cidrvalidation "github.com/gardener/gardener/pkg/utils/validation/cidr"
)

// The corpus's two network rules.
const (
	// overlapAllowIPv4 is Gardener as it is: only IPv6 shoot networks are
	// checked against the seed's.
	overlapAllowIPv4 = "AllowIPv4"
	// overlapDisjoint is Gardener with that IPv4 exemption removed (the
	// decide-disjoint build, see hack/gardener-bins.sh).
	overlapDisjoint = "Disjoint"
)

// linkedOverlapRule tells which rule the Gardener code linked into this binary
// applies, by asking it: an IPv4 shoot node network inside the seed's pod
// network is refused only under Disjoint. Asking, rather than a build flag,
// means a binary can never claim a rule its code does not have.
func linkedOverlapRule() string {
	shootNodes := "10.10.0.0/24"
	if errs := cidrvalidation.ValidateNetworkDisjointedness(field.NewPath("probe"), &shootNodes, nil, nil, nil, "10.10.0.0/16", "10.20.0.0/16"); len(errs) > 0 {
		return overlapDisjoint
	}
	return overlapAllowIPv4
}
