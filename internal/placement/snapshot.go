package placement

import (
	"encoding/binary"
	"fmt"
	"net"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/seedwarden/seedwarden/internal/api"
)

// Snapshot is a consistent, read-only view of the landscape. Everything in it
// is digested once when the object changes (CIDRs parsed, selectors built,
// region YAML parsed), so a decision only compares.
type Snapshot struct {
	// Seeds, sorted by name.
	Seeds []*Seed
	// CloudProfiles by name.
	CloudProfiles map[string]*CloudProfile
	// NamespacedCloudProfiles by "namespace/name".
	NamespacedCloudProfiles map[string]*CloudProfile
	// Projects by the namespace they own. A Shoot in a namespace no
	// Project owns is unschedulable (StepProject); nil means Projects are
	// not tracked, and every namespace counts as owned.
	Projects map[string]*Project
	// RegionConfigs, sorted by name (the first matching one wins).
	RegionConfigs []*RegionConfig
	// Usage returns a seed's current usage: shoots on it (a migrating shoot
	// counts on both seeds) plus in-flight reservations. Nil means zero.
	Usage func(*Seed) int64
	// ProjectShoots returns, for a project's namespace, how many of its
	// Shoots count against each seed, by seed name (ChargedSeeds: a
	// migrating Shoot on both seeds); seeds it leaves out hold none. Only
	// the ProjectSpread scorer reads it, once per decision, and never
	// writes the map; the map must not change while decisions may read
	// it (publish a new one instead). Nil: unknown, and that scorer rates
	// every seed alike.
	ProjectShoots func(namespace string) map[string]int64
}

func (s *Snapshot) usage(seed *Seed) int64 {
	if s.Usage == nil {
		return 0
	}
	return s.Usage(seed)
}

// Seed is an api.Seed digested for placement.
type Seed struct {
	Name   string
	Object *api.Seed

	// What the fast path (fast.go) reads of every seed comes first, inline
	// (hashes and an enum rather than strings behind pointers), so a seed it
	// drops costs a cache line or two instead of a miss per field.
	visible      bool
	ready        bool          // lastOperation set, GardenletReady and (with backup) BackupBucketsReady
	zoneSel      zoneSelection // zoneMode as an enum
	providerHash uint64        // strHash(providerType)
	zones        []string
	zoneHashes   [inlineZones]uint64 // strHash of zones[:inlineZones]
	labels       labels.Set

	deleting       bool
	cordoned       string // why seedwarden keeps new Shoots off it (a SeedDrain), or ""
	providerType   string
	region         string
	regionHash     uint64 // strHash(region), for the RegionDistance scorer's memo
	nameHash       uint64 // strHash(Name), for a decision's usage memo (decision_usage.go)
	zoneMode       string
	access         []string
	defaultDomains []string
	emergencyStop  bool
	taints         []api.SeedTaint

	hasAllocatable bool
	allocatable    int64

	// The placement policies' markers (policies.go): avoided with the
	// operator's reason; softLimitPct from the annotation, -1 without a
	// valid one (softLimitErr says why it is ignored).
	avoided      bool
	avoid        string
	softLimitPct int
	softLimitErr error

	nodes, pods, services cidr
	hasNodes              bool
	defaultPods           *cidr
	defaultServices       *cidr
}

// NewSeed digests a Seed. It never fails: values the reference would treat in
// a particular way (an unparsable CIDR intersects everything) keep that meaning.
func NewSeed(obj *api.Seed) *Seed {
	s := &Seed{
		Name:          obj.Name,
		Object:        obj,
		labels:        labels.Set(obj.Labels),
		deleting:      obj.DeletionTimestamp != nil,
		visible:       obj.Spec.Settings == nil || obj.Spec.Settings.Scheduling == nil || obj.Spec.Settings.Scheduling.Visible,
		ready:         seedReady(obj),
		providerType:  obj.Spec.Provider.Type,
		region:        obj.Spec.Provider.Region,
		zones:         obj.Spec.Provider.Zones,
		emergencyStop: obj.Annotations[api.AnnotationEmergencyStop] == "true",
		taints:        obj.Spec.Taints,
		nodes:         parseCIDR(ptr.Deref(obj.Spec.Networks.Nodes, "")),
		hasNodes:      obj.Spec.Networks.Nodes != nil,
		pods:          parseCIDR(obj.Spec.Networks.Pods),
		services:      parseCIDR(obj.Spec.Networks.Services),
	}
	s.digestPolicyMarkers(obj.Annotations)
	if obj.Spec.Settings != nil && obj.Spec.Settings.ZoneSelection != nil {
		s.zoneMode = obj.Spec.Settings.ZoneSelection.Mode
	}
	s.providerHash = strHash(s.providerType)
	s.regionHash = strHash(s.region)
	s.nameHash = strHash(s.Name)
	for i, z := range s.zones[:min(len(s.zones), inlineZones)] {
		s.zoneHashes[i] = strHash(z)
	}
	switch s.zoneMode {
	case api.ZoneSelectionEnforce:
		s.zoneSel = zoneEnforce
	case api.ZoneSelectionPrefer:
		s.zoneSel = zonePrefer
	}
	for _, a := range obj.Spec.AccessRestrictions {
		s.access = append(s.access, a.Name)
	}
	for _, d := range obj.Spec.DNS.Defaults {
		s.defaultDomains = append(s.defaultDomains, d.Domain)
	}
	if q, ok := obj.Status.Allocatable[api.ResourceShoots]; ok {
		s.hasAllocatable = true
		s.allocatable = q.Value()
	}
	if d := obj.Spec.Networks.ShootDefaults; d != nil {
		if d.Pods != nil {
			c := parseCIDR(*d.Pods)
			s.defaultPods = &c
		}
		if d.Services != nil {
			c := parseCIDR(*d.Services)
			s.defaultServices = &c
		}
	}
	return s
}

// WithCordon returns a copy of the seed that takes no new Shoots, for the
// reason given (a SeedDrain of it); "" returns a copy without a cordon. A
// cordoned seed is not usable (step Usable), as one being deleted: Shoots
// already on it stay, and CheckSeedForShoot still allows binding to it
// (an operator's hand, as on a cordoned Kubernetes node). Gardener has no
// cordon, so a landscape without one decides exactly as Gardener does.
func (s *Seed) WithCordon(reason string) *Seed {
	c := *s
	c.cordoned = reason
	return &c
}

// Cordoned says why the seed takes no new Shoots, or "".
func (s *Seed) Cordoned() string { return s.cordoned }

// Allocatable returns status.allocatable.shoots and whether it is set.
func (s *Seed) Allocatable() (int64, bool) { return s.allocatable, s.hasAllocatable }

func seedReady(obj *api.Seed) bool {
	if obj.Status.LastOperation == nil {
		return false
	}
	if !conditionTrue(obj.Status.Conditions, api.ConditionGardenletReady) {
		return false
	}
	if obj.Spec.Backup != nil && !conditionTrue(obj.Status.Conditions, api.ConditionBackupBucketsReady) {
		return false
	}
	return true
}

func conditionTrue(conds []api.Condition, t string) bool {
	for _, c := range conds {
		if c.Type == t {
			return c.Status == api.ConditionTrue
		}
	}
	return false
}

// CloudProfile is the part of a CloudProfile (or the status.cloudProfileSpec of a
// NamespacedCloudProfile) that placement reads.
type CloudProfile struct {
	Name string
	// SeedSelector is nil when the profile has none.
	SeedSelector *api.SeedSelector
	selector     labels.Selector
	selectorErr  error
}

// NewCloudProfile digests a profile spec under the given name.
func NewCloudProfile(name string, spec *api.CloudProfileSpec) *CloudProfile {
	p := &CloudProfile{Name: name, SeedSelector: spec.SeedSelector}
	if spec.SeedSelector != nil {
		p.selector, p.selectorErr = metav1.LabelSelectorAsSelector(&spec.SeedSelector.LabelSelector)
	}
	return p
}

// ProviderTypes returns the profile's seedSelector.providerTypes.
func (p *CloudProfile) ProviderTypes() []string {
	if p.SeedSelector == nil {
		return nil
	}
	return p.SeedSelector.ProviderTypes
}

// Project is what placement needs of a Project.
type Project struct {
	Name     string
	Deleting bool
	// Labels are the Project's, for the projectSelector of seed pools
	// (Policies); the map is never written.
	Labels map[string]string
}

// RegionConfig is a region-config ConfigMap with its distance tables parsed.
type RegionConfig struct {
	Namespace, Name string
	// CloudProfiles are the names from the scheduling.gardener.cloud/cloudprofiles annotation.
	CloudProfiles []string
	distances     map[string]map[string]int
	errs          map[string]error
}

// NewRegionConfig parses a region-config ConfigMap. A table that does not parse
// is kept as an error: it only matters (and fails the decision) for Shoots in
// that region, exactly as in the reference.
func NewRegionConfig(cm *corev1.ConfigMap) *RegionConfig {
	rc := &RegionConfig{Namespace: cm.Namespace, Name: cm.Name}
	for _, n := range strings.Split(cm.Annotations[api.AnnotationSchedulingCloudProfiles], ",") {
		if n = strings.TrimSpace(n); n != "" {
			rc.CloudProfiles = append(rc.CloudProfiles, n)
		}
	}
	for region, text := range cm.Data {
		if text == "" {
			continue // the reference treats an empty entry as absent
		}
		d := map[string]int{}
		if err := yaml.Unmarshal([]byte(text), &d); err != nil {
			if rc.errs == nil {
				rc.errs = map[string]error{}
			}
			rc.errs[region] = fmt.Errorf("region config %s/%s: data[%q] is not a map of region to integer distance: %w", cm.Namespace, cm.Name, region, err)
			continue
		}
		if rc.distances == nil {
			rc.distances = map[string]map[string]int{}
		}
		rc.distances[region] = d
	}
	return rc
}

// Validate returns the parse errors of all regions, for tools that check a
// ConfigMap before it is applied.
func (rc *RegionConfig) Validate() error {
	if len(rc.errs) == 0 {
		return nil
	}
	regions := make([]string, 0, len(rc.errs))
	for r := range rc.errs {
		regions = append(regions, r)
	}
	sort.Strings(regions)
	msgs := make([]string, len(regions))
	for i, r := range regions {
		msgs[i] = rc.errs[r].Error()
	}
	return fmt.Errorf("%s", strings.Join(msgs, "; "))
}

// distancesFrom returns the distance table for a shoot region: nil with no
// error when the config has no entry for it.
func (rc *RegionConfig) distancesFrom(region string) (map[string]int, error) {
	if err := rc.errs[region]; err != nil {
		return nil, err
	}
	return rc.distances[region], nil
}

func (rc *RegionConfig) appliesTo(cloudProfile string) bool {
	return slices.Contains(rc.CloudProfiles, cloudProfile)
}

// cidr mirrors Gardener's CIDR helper: an unparsable value is kept, and the
// reference treats it as intersecting anything.
type cidr struct {
	net *net.IPNet
	// fam is 4 or 6 when base and mask hold a plain IPv4 or IPv6 network as
	// integers, so the hot path compares words instead of going through net's
	// per-call conversions; 0 (odd forms such as IPv4-mapped IPv6) falls back
	// to net's semantics.
	fam        uint8
	base, mask [2]uint64
}

func parseCIDR(s string) cidr {
	_, n, err := net.ParseCIDR(s)
	if err != nil {
		return cidr{}
	}
	c := cidr{net: n}
	switch {
	case len(n.IP) == net.IPv4len && len(n.Mask) == net.IPv4len:
		c.fam = 4
		c.base[1] = uint64(binary.BigEndian.Uint32(n.IP))
		c.mask[1] = uint64(binary.BigEndian.Uint32(n.Mask))
	case len(n.IP) == net.IPv6len && len(n.Mask) == net.IPv6len && n.IP.To4() == nil:
		c.fam = 6
		c.base = [2]uint64{binary.BigEndian.Uint64(n.IP[:8]), binary.BigEndian.Uint64(n.IP[8:])}
		c.mask = [2]uint64{binary.BigEndian.Uint64(n.Mask[:8]), binary.BigEndian.Uint64(n.Mask[8:])}
	}
	return c
}

func (c *cidr) valid() bool { return c.net != nil }
func (c *cidr) isIPv4() bool {
	return c.fam == 4 || (c.fam == 0 && c.net != nil && c.net.IP.To4() != nil)
}
func (c *cidr) isIPv6() bool {
	return c.fam == 6 || (c.fam == 0 && c.net != nil && c.net.IP.To4() == nil)
}

// contains reports whether c's network holds o's base address (plain forms).
func (c *cidr) contains(o *cidr) bool {
	return o.base[0]&c.mask[0] == c.base[0] && o.base[1]&c.mask[1] == c.base[1]
}

// intersects is Gardener's NetworksIntersect: true when either side does not
// parse, otherwise when either network contains the other's base address.
func (c *cidr) intersects(o *cidr) bool {
	if !c.valid() || !o.valid() {
		return true
	}
	if c.fam != 0 && o.fam != 0 {
		return c.fam == o.fam && (c.contains(o) || o.contains(c))
	}
	return c.net.Contains(o.net.IP) || o.net.Contains(c.net.IP)
}

// Ready says whether the seed is ready as placement counts it
// (lastOperation set, GardenletReady, BackupBucketsReady with backup).
func (s *Seed) Ready() bool { return s.ready }
