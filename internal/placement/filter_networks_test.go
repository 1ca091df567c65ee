package placement

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/utils/ptr"

	"github.com/seedwarden/seedwarden/internal/api"
)

func TestNetworks(t *testing.T) {
	seedNets := func(nodes *string, pods, services string, defaults *api.ShootNetworks) func(*api.Seed) {
		return func(s *api.Seed) {
			s.Spec.Networks = api.SeedNetworks{Nodes: nodes, Pods: pods, Services: services, ShootDefaults: defaults}
		}
	}
	net := func(nodes, pods, services *string, families ...string) func(*api.Shoot) {
		return func(s *api.Shoot) {
			s.Spec.Networking = &api.Networking{Nodes: nodes, Pods: pods, Services: services, IPFamilies: families}
		}
	}
	v4 := seedNets(ptr.To("10.0.0.0/16"), "10.1.0.0/16", "10.2.0.0/16", nil)
	tests := []struct {
		name  string
		seed  func(*api.Seed)
		shoot []func(*api.Shoot)
		mode  NetworkMode
		ok    bool
	}{
		{"disjoint networks", v4, []func(*api.Shoot){net(ptr.To("10.10.0.0/16"), ptr.To("10.11.0.0/16"), ptr.To("10.12.0.0/16"), "IPv4")}, Disjoint, true},
		{"pods overlap seed pods", v4, []func(*api.Shoot){net(nil, ptr.To("10.1.0.0/24"), ptr.To("10.12.0.0/16"), "IPv4")}, Disjoint, false},
		{"nodes overlap seed nodes", v4, []func(*api.Shoot){net(ptr.To("10.0.0.0/8"), nil, nil, "IPv4")}, Disjoint, false},
		{"seed nodes unset: shoot nodes only checked against pods and services", seedNets(nil, "10.1.0.0/16", "10.2.0.0/16", nil),
			[]func(*api.Shoot){net(ptr.To("10.0.0.0/16"), nil, nil, "IPv4")}, Disjoint, true},
		{"AllowIPv4 lets IPv4 overlap", v4, []func(*api.Shoot){net(nil, ptr.To("10.1.0.0/24"), nil, "IPv4")}, AllowIPv4, true},
		{"AllowIPv4 still checks IPv6", seedNets(nil, "2001:db8::/48", "10.2.0.0/16", nil),
			[]func(*api.Shoot){net(nil, ptr.To("2001:db8::/64"), nil, "IPv6")}, AllowIPv4, false},
		{"reserved range rejected in any mode", v4, []func(*api.Shoot){net(nil, ptr.To("240.1.0.0/16"), nil, "IPv4")}, AllowIPv4, false},
		{"IPv6 VPN range rejected", v4, []func(*api.Shoot){net(nil, ptr.To("fd8f:6d53:b97a:1::/64"), nil, "IPv6")}, AllowIPv4, false},
		{"unparsable shoot CIDR intersects everything", v4, []func(*api.Shoot){net(nil, ptr.To("not-a-cidr"), nil, "IPv4")}, AllowIPv4, false},
		{"unparsable seed CIDR intersects everything", seedNets(nil, "bogus", "10.2.0.0/16", nil),
			[]func(*api.Shoot){net(nil, ptr.To("10.50.0.0/16"), nil, "IPv4")}, Disjoint, false},
		{"seed default pods of the shoot's family are taken", seedNets(nil, "10.1.0.0/16", "10.2.0.0/16", &api.ShootNetworks{Pods: ptr.To("10.1.128.0/17")}),
			[]func(*api.Shoot){net(nil, nil, nil, "IPv4")}, Disjoint, false},
		{"seed default of another family is not taken", seedNets(nil, "10.1.0.0/16", "10.2.0.0/16", &api.ShootNetworks{Pods: ptr.To("10.1.128.0/17")}),
			[]func(*api.Shoot){net(nil, nil, nil, "IPv6")}, Disjoint, true},
		{"workerless shoots take no pod default", seedNets(nil, "10.1.0.0/16", "10.2.0.0/16", &api.ShootNetworks{Pods: ptr.To("10.1.128.0/17")}),
			[]func(*api.Shoot){net(nil, nil, nil, "IPv4"), func(s *api.Shoot) { s.Spec.Provider.Workers = nil }}, Disjoint, true},
		{"service default is taken for workerless shoots", seedNets(nil, "10.1.0.0/16", "10.2.0.0/16", &api.ShootNetworks{Services: ptr.To("10.2.1.0/24")}),
			[]func(*api.Shoot){net(nil, nil, nil, "IPv4"), func(s *api.Shoot) { s.Spec.Provider.Workers = nil }}, Disjoint, false},
		{"status networks are checked too", v4, []func(*api.Shoot){net(nil, nil, nil, "IPv4"), func(s *api.Shoot) {
			s.Status.Networking = &api.NetworkingStatus{Pods: []string{"10.9.0.0/16", "10.2.5.0/24"}}
		}}, Disjoint, false},
		{"different families never intersect", seedNets(nil, "2001:db8::/48", "2001:db9::/48", nil),
			[]func(*api.Shoot){net(nil, ptr.To("10.0.0.0/8"), ptr.To("10.1.0.0/16"), "IPv4")}, Disjoint, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nets := newShootNetworks(basicShoot(tt.shoot...))
			seed := NewSeed(readySeed("s", tt.seed))
			c := nets.conflict(seed, tt.mode)
			assert.Equal(t, tt.ok, !c.found(), c.String())
			assert.Equal(t, c.found(), nets.conflicts(seed, tt.mode), "fast path agrees")
		})
	}
	assert.Nil(t, newShootNetworks(basicShoot()), "a Shoot without networking skips the check")
}

// TestCIDRIntersectsMatchesNet checks the integer fast path against the net
// package semantics the reference uses, on plain and odd forms.
func TestCIDRIntersectsMatchesNet(t *testing.T) {
	forms := []string{"10.0.0.0/8", "10.1.0.0/16", "10.1.2.0/24", "11.0.0.0/8", "0.0.0.0/0", "10.0.0.5/32", "10.1.2.3/16",
		"2001:db8::/32", "2001:db8:1::/48", "::/0", "fd8f:6d53:b97a:1::/96", "fd8f:6d53:b97a:1:2::/80",
		"::ffff:10.0.0.0/104", "::ffff:0:0/96", "::ffff:10.0.0.0/64", "bogus", ""}
	for _, a := range forms {
		for _, b := range forms {
			ca, cb := parseCIDR(a), parseCIDR(b)
			slow := !ca.valid() || !cb.valid() || ca.net.Contains(cb.net.IP) || cb.net.Contains(ca.net.IP)
			assert.Equal(t, slow, ca.intersects(&cb), "%s ~ %s", a, b)
		}
	}
}
