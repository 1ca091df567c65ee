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

// shootNetworks is a Shoot's networking, parsed once per decision.
type shootNetworks struct {
	nodes, pods, services *namedCIDR
	ipv4, ipv6            bool
	workerless            bool
	status                *api.NetworkingStatus
	statusNodes           []namedCIDR
	statusPods            []namedCIDR
	statusServices        []namedCIDR
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
	}
	return sn
}

// familyWanted: a seed's shoot default applies only when its IP family is
// among the Shoot's ipFamilies.
func (n *shootNetworks) familyWanted(c cidr) bool {
	return (c.isIPv6() && n.ipv6) || (c.isIPv4() && n.ipv4)
}

// check returns why the seed's networks conflict with the Shoot's, or "".
func (n *shootNetworks) check(s *Seed, mode NetworkMode) string {
	pods, services := n.pods, n.services
	if s.Object.Spec.Networks.ShootDefaults != nil {
		if pods == nil && !n.workerless && s.defaultPods != nil && n.familyWanted(*s.defaultPods) {
			pods = &namedCIDR{text: *s.Object.Spec.Networks.ShootDefaults.Pods, cidr: *s.defaultPods}
		}
		if services == nil && s.defaultServices != nil && n.familyWanted(*s.defaultServices) {
			services = &namedCIDR{text: *s.Object.Spec.Networks.ShootDefaults.Services, cidr: *s.defaultServices}
		}
	}
	allowIPv4 := mode == AllowIPv4
	if r := checkNetworks(s, "node", optional(n.nodes), false, allowIPv4); r != "" {
		return r
	}
	if r := checkNetworks(s, "service", optional(services), true, allowIPv4); r != "" {
		return r
	}
	if r := checkNetworks(s, "pod", optional(pods), !n.workerless, allowIPv4); r != "" {
		return r
	}
	if n.status != nil {
		if r := checkNetworks(s, "node", n.statusNodes, false, allowIPv4); r != "" {
			return "status.networking: " + r
		}
		if r := checkNetworks(s, "service", n.statusServices, true, allowIPv4); r != "" {
			return "status.networking: " + r
		}
		if r := checkNetworks(s, "pod", n.statusPods, !n.workerless, allowIPv4); r != "" {
			return "status.networking: " + r
		}
	}
	return ""
}

func optional(c *namedCIDR) []namedCIDR {
	if c == nil {
		return nil
	}
	return []namedCIDR{*c}
}

// checkNetworks mirrors Gardener's validateOverlapWithSeed: each network must
// avoid the seed's networks (only IPv6 ones when IPv4 overlap is allowed) and
// the reserved ranges; a required network that is missing is a conflict too.
func checkNetworks(s *Seed, kind string, nets []namedCIDR, required, allowIPv4 bool) string {
	for _, n := range nets {
		if !allowIPv4 || n.cidr.isIPv6() {
			if s.services.intersects(n.cidr) {
				return fmt.Sprintf("shoot %s network %s intersects with seed service network %s", kind, n.text, s.Object.Spec.Networks.Services)
			}
			if s.pods.intersects(n.cidr) {
				return fmt.Sprintf("shoot %s network %s intersects with seed pod network %s", kind, n.text, s.Object.Spec.Networks.Pods)
			}
			if s.hasNodes && s.nodes.intersects(n.cidr) {
				return fmt.Sprintf("shoot %s network %s intersects with seed node network %s", kind, n.text, *s.Object.Spec.Networks.Nodes)
			}
		}
		for _, r := range reservedRanges {
			if r.intersects(n.cidr) {
				return fmt.Sprintf("shoot %s network %s intersects with reserved range %s", kind, n.text, r.net)
			}
		}
	}
	return ""
}
