package placement

import (
	"fmt"
	"slices"

	"github.com/seedwarden/seedwarden/internal/api"
)

// reservedRanges are ranges Gardener keeps for itself (VPN and the
// kube-apiserver / network mapping ranges); no shoot network may touch them.
var reservedRanges = func() []cidr {
	var out []cidr
	for _, s := range []string{"fd8f:6d53:b97a:1::/96", "240.0.0.0/8", "241.0.0.0/8", "242.0.0.0/8", "243.0.0.0/8", "244.0.0.0/8"} {
		out = append(out, parseCIDR(s))
	}
	return out
}()

// shootNetworks is a Shoot's networking, parsed once per decision, for the
// network check of step 10 (gardener-scheduler's filterCandidates, which
// validates a Shoot's networks against a seed's).
type shootNetworks struct {
	nodes, pods, services *namedCIDR
	ipv4, ipv6            bool
	workerless            bool
	status                *api.NetworkingStatus
	statusNodes           []namedCIDR
	statusPods            []namedCIDR
	statusServices        []namedCIDR
	// ownReserved: one of the Shoot's own networks touches a reserved range,
	// which no seed can change.
	ownReserved bool
	// statusMissing names the network kind status.networking lacks though
	// Gardener requires it there ("service", or "pod" for a Shoot with
	// workers): no seed passes then, whatever its networks.
	statusMissing string
}

type namedCIDR struct {
	text string
	cidr cidr
}

func newNamed(s *string) *namedCIDR {
	if s == nil {
		return nil
	}
	return &namedCIDR{text: *s, cidr: parseCIDR(*s)}
}

func newNamedList(list []string) []namedCIDR {
	out := make([]namedCIDR, len(list))
	for i, s := range list {
		out[i] = namedCIDR{text: s, cidr: parseCIDR(s)}
	}
	return out
}

// newShootNetworks returns nil for a Shoot without spec.networking: the
// reference skips the network check for it.
func newShootNetworks(shoot *api.Shoot) *shootNetworks {
	n := shoot.Spec.Networking
	if n == nil {
		return nil
	}
	sn := &shootNetworks{
		nodes:      newNamed(n.Nodes),
		pods:       newNamed(n.Pods),
		services:   newNamed(n.Services),
		ipv4:       slices.Contains(n.IPFamilies, api.IPFamilyIPv4),
		ipv6:       slices.Contains(n.IPFamilies, api.IPFamilyIPv6),
		workerless: len(shoot.Spec.Provider.Workers) == 0,
		status:     shoot.Status.Networking,
	}
	if st := shoot.Status.Networking; st != nil {
		sn.statusNodes = newNamedList(st.Nodes)
		sn.statusPods = newNamedList(st.Pods)
		sn.statusServices = newNamedList(st.Services)
		sn.statusMissing = missingStatusNetwork(st, sn.workerless)
	}
	for _, c := range []*namedCIDR{sn.nodes, sn.pods, sn.services} {
		if c != nil && hitsReserved(&c.cidr) {
			sn.ownReserved = true
		}
	}
	for _, list := range [][]namedCIDR{sn.statusNodes, sn.statusServices, sn.statusPods} {
		for i := range list {
			if hitsReserved(&list[i].cidr) {
				sn.ownReserved = true
			}
		}
	}
	return sn
}

// missingStatusNetwork is Gardener's ValidateMultiNetworkDisjointedness,
// which requires the services of status.networking, and its pods unless the
// Shoot is workerless (unlike spec.networking, where neither is required):
// it returns the kind that is missing, "" for none.
func missingStatusNetwork(st *api.NetworkingStatus, workerless bool) string {
	switch {
	case len(st.Services) == 0:
		return "service"
	case len(st.Pods) == 0 && !workerless:
		return "pod"
	}
	return ""
}

// familyWanted: a seed's shoot default applies only when its IP family is
// among the Shoot's ipFamilies.
func (n *shootNetworks) familyWanted(c *cidr) bool {
	return (c.isIPv6() && n.ipv6) || (c.isIPv4() && n.ipv4)
}

// netConflict describes the first network conflict found; the zero value
// means none. It is formatted only when a decision is explained.
type netConflict struct {
	missing  bool   // status.networking lacks the networks of kind
	status   bool   // from status.networking
	kind     string // node, service, pod
	network  string // the shoot's network
	with     string // what it hits: "seed service network", "reserved range"
	withCIDR string
}

func (c netConflict) found() bool { return c.kind != "" }

func (c netConflict) code() ReasonCode {
	switch {
	case c.missing:
		return StatusNetworkMissing
	case c.with == withReserved:
		return NetworkReservedRange
	}
	return NetworkOverlap
}

// withReserved is what a network hitting a reserved range hits.
const withReserved = "reserved range"

func (c netConflict) String() string {
	if c.missing {
		return fmt.Sprintf("status.networking: %ss are required", c.kind)
	}
	prefix := ""
	if c.status {
		prefix = "status.networking: "
	}
	return fmt.Sprintf("%sshoot %s network %s intersects with %s %s", prefix, c.kind, c.network, c.with, c.withCIDR)
}

// conflicts is the fast form of conflict for decisions: the same verdict,
// with the seed-independent reserved-range check of the Shoot's own networks
// done once per decision (ownReserved) instead of once per seed.
func (n *shootNetworks) conflicts(s *Seed, mode NetworkMode) bool {
	if n.ownReserved || n.statusMissing != "" {
		return true
	}
	h := seedNets{s: s, allowIPv4: mode == AllowIPv4}
	if n.nodes != nil && h.hit(&n.nodes.cidr) {
		return true
	}
	if n.services != nil {
		if h.hit(&n.services.cidr) {
			return true
		}
	} else if n.defaultConflicts(&h, s.defaultServices) {
		return true
	}
	if n.pods != nil {
		if h.hit(&n.pods.cidr) {
			return true
		}
	} else if !n.workerless && n.defaultConflicts(&h, s.defaultPods) {
		return true
	}
	return n.statusConflicts(&h)
}

// seedNets is what conflicts checks a Shoot network against: one seed's
// networks, all of them or (allowIPv4) only for IPv6 networks.
type seedNets struct {
	s         *Seed
	allowIPv4 bool
}

func (h *seedNets) hit(c *cidr) bool {
	s := h.s
	return (!h.allowIPv4 || c.isIPv6()) &&
		(s.services.intersects(c) || s.pods.intersects(c) || (s.hasNodes && s.nodes.intersects(c)))
}

// defaultConflicts: the seed's shoot default d, when the Shoot takes it,
// hits the seed's networks or a reserved range.
func (n *shootNetworks) defaultConflicts(h *seedNets, d *cidr) bool {
	d = n.seedDefault(h.s, d)
	return d != nil && (h.hit(d) || hitsReserved(d))
}

func (n *shootNetworks) statusConflicts(h *seedNets) bool {
	for _, list := range [][]namedCIDR{n.statusNodes, n.statusServices, n.statusPods} {
		for i := range list {
			if h.hit(&list[i].cidr) {
				return true
			}
		}
	}
	return false
}

// seedDefault returns the seed's shoot default when the Shoot takes it (its
// IP family is among the Shoot's), else nil.
func (n *shootNetworks) seedDefault(s *Seed, d *cidr) *cidr {
	if s.Object.Spec.Networks.ShootDefaults == nil || d == nil || !n.familyWanted(d) {
		return nil
	}
	return d
}

func hitsReserved(c *cidr) bool {
	for i := range reservedRanges {
		if reservedRanges[i].intersects(c) {
			return true
		}
	}
	return false
}

// conflict returns the first conflict between the Shoot's networks and the
// seed's (or the reserved ranges).
func (n *shootNetworks) conflict(s *Seed, mode NetworkMode) netConflict {
	pods, services := n.withDefaults(s)
	allowIPv4 := mode == AllowIPv4
	for _, one := range []struct {
		kind string
		net  *namedCIDR
	}{{"node", n.nodes}, {"service", services}, {"pod", pods}} {
		if one.net != nil {
			if c := checkNetwork(s, one.kind, *one.net, allowIPv4); c.found() {
				return c
			}
		}
	}
	if n.status != nil {
		return n.statusConflict(s, allowIPv4)
	}
	return netConflict{}
}

// statusConflict is conflict for the networks in status.networking.
func (n *shootNetworks) statusConflict(s *Seed, allowIPv4 bool) netConflict {
	if n.statusMissing != "" {
		return netConflict{missing: true, status: true, kind: n.statusMissing}
	}
	return n.statusListConflict(s, allowIPv4)
}

// withDefaults returns the Shoot's pod and service networks, the seed's shoot
// defaults filling in missing ones the Shoot takes (pods only with workers).
func (n *shootNetworks) withDefaults(s *Seed) (pods, services *namedCIDR) {
	pods, services = n.pods, n.services
	defaults := s.Object.Spec.Networks.ShootDefaults
	if defaults == nil {
		return pods, services
	}
	if pods == nil && !n.workerless && s.defaultPods != nil && n.familyWanted(s.defaultPods) {
		pods = &namedCIDR{text: *defaults.Pods, cidr: *s.defaultPods}
	}
	if services == nil && s.defaultServices != nil && n.familyWanted(s.defaultServices) {
		services = &namedCIDR{text: *defaults.Services, cidr: *s.defaultServices}
	}
	return pods, services
}

// statusListConflict is conflict for the lists of status.networking.
func (n *shootNetworks) statusListConflict(s *Seed, allowIPv4 bool) netConflict {
	for _, list := range []struct {
		kind string
		nets []namedCIDR
	}{{"node", n.statusNodes}, {"service", n.statusServices}, {"pod", n.statusPods}} {
		for _, net := range list.nets {
			if c := checkNetwork(s, list.kind, net, allowIPv4); c.found() {
				c.status = true
				return c
			}
		}
	}
	return netConflict{}
}

// checkNetwork mirrors Gardener's validateOverlapWithSeed for one network: it
// must avoid the seed's networks (only IPv6 ones need to when IPv4 overlap is
// allowed) and the reserved ranges. Gardener no longer requires pod and service
// networks here (the recorded reference admits Shoots without them).
func checkNetwork(s *Seed, kind string, n namedCIDR, allowIPv4 bool) netConflict {
	hit := func(with, withCIDR string) netConflict {
		return netConflict{kind: kind, network: n.text, with: with, withCIDR: withCIDR}
	}
	if !allowIPv4 || n.cidr.isIPv6() {
		if s.services.intersects(&n.cidr) {
			return hit("seed service network", s.Object.Spec.Networks.Services)
		}
		if s.pods.intersects(&n.cidr) {
			return hit("seed pod network", s.Object.Spec.Networks.Pods)
		}
		if s.hasNodes && s.nodes.intersects(&n.cidr) {
			return hit("seed node network", *s.Object.Spec.Networks.Nodes)
		}
	}
	for i := range reservedRanges {
		if r := &reservedRanges[i]; r.intersects(&n.cidr) {
			return hit(withReserved, r.net.String())
		}
	}
	return netConflict{}
}
