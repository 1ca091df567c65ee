package difftest

import "strings"

// feature is a family of rare values the generator may stress in a scenario
// (docs/testing.md, "Differential testing", lists what each one varies).
type feature uint8

const (
	fRegionConfigs    feature = iota // several region-config ConfigMaps, malformed ones, odd annotations
	fOddTable                        // distances: negative, at and past 2^31-1, huge
	fIPv6                            // IPv6 and dual-stack Shoots and seeds
	fShootDefaults                   // seeds' spec.networks.shootDefaults, Shoots without pods/services
	fStatusNetworking                // Shoots with status.networking
	fWorkerless                      // Shoots without worker pools
	fDuplicates                      // duplicate taints, tolerations, access restrictions, zones
	fTaints                          // taints and tolerations with and without values
	fAccess                          // access restrictions
	fProviderTypes                   // CloudProfile seedSelector.providerTypes, seeds of other providers
	fHAZones                         // failure tolerance, control-plane zones, zone selection modes
	fInvisible                       // invisible seeds, seeds without settings
	fDeleting                        // deleting seeds, projects and Shoots
	fProject                         // missing, several or deleting Projects, other namespaces
	fSelectors                       // CloudProfile and Shoot label selectors, broken ones
	fReadiness                       // lastOperation, conditions (duplicated), backup
	fCapacity                        // allocatable quantities at the usage, odd quantities, migrations
	fOddCIDR                         // unparsable, host-bit, IPv4-mapped, reserved and huge CIDRs
	fLongRegion                      // region names far apart by name distance
	fDomain                          // Shoot domains under seeds' default domains
	fEmergency                       // the emergency-stop annotation
	fPurpose                         // purposes, testing included
	fProfileRef                      // cloudProfile / cloudProfileName / NamespacedCloudProfile references
	fShuffle                         // objects in random order
	fEmpty                           // empty strings where a value is expected: values, zones, domains, seed names
	fEdgeStrings                     // edge values (edge.go) in every string field placement reads
)

// crashKind is an input Gardener's scheduler crashes on (a nil pointer);
// docs/placement.md, "Where Gardener itself crashes", says what
// seedwarden does instead.
type crashKind uint8

const (
	crashNone            crashKind = iota
	crashNoScheduling              // a Seed without spec.settings.scheduling (isUsableSeed dereferences it)
	crashPartialDefaults           // shootDefaults without pods or services, for a Shoot without them
	crashKinds
)

// crashOdds is how often a scenario carries one of them.
const crashOdds = 0.03

var features = []feature{
	fRegionConfigs, fOddTable, fIPv6, fShootDefaults, fStatusNetworking, fWorkerless,
	fDuplicates, fTaints, fAccess, fProviderTypes, fHAZones, fInvisible, fDeleting, fProject,
	fSelectors, fReadiness, fCapacity, fOddCIDR, fLongRegion, fDomain, fEmergency, fPurpose,
	fProfileRef, fShuffle, fEmpty, fEdgeStrings,
}

const (
	gardenNamespace  = "garden"
	projectNamespace = "garden-proj"
	otherNamespace   = "garden-other"
	profileName      = "profile-a"
	otherProfile     = "profile-b"
	nsProfileName    = "ncp"
	apiCore          = "core.gardener.cloud/v1beta1"
	timestamp        = "2023-11-14T22:13:20Z"
)

var providers = []string{"aws", "gcp", "azure"}

// regionsOf are the ordinary regions of each provider; orientations in the
// names make name distances differ by one or two.
var regionsOf = map[string][]string{
	"aws":   {"eu-west-1", "eu-central-1", "us-east-1"},
	"gcp":   {"europe-west1", "europe-west3", "us-east1"},
	"azure": {"westeurope", "northeurope", "eastus"},
}

// longRegion is a region name far from every ordinary one: its name distance
// to them falls either side of the 1,000 at which the reference's name
// distance search starts.
func longRegion(n int, suffix string) string {
	return strings.Repeat("q", n) + suffix
}

// unicodeRegions differ from each other and the ordinary ones by a few
// runes of several bytes each.
var unicodeRegions = []string{"eu-wést-1", "eü-west-1", "日本-east-1", "日本-west-1", "südost-1"}

var (
	labelKeys   = []string{"environment", "tier", "seed.gardener.cloud/eu-access"}
	labelValues = []string{"a", "b", "prod", "dev", "true"}
	taintKeys   = []string{"seed.gardener.cloud/protected", "seed.gardener.cloud/beta", "dedicated"}
	taintValues = []string{"team-a", "team-b"}
	accessNames = []string{"eu-access-only", "restricted-a"}
	domains     = []string{"example.com", "a.example.com", "ondemand.example.org"}
	purposes    = []string{"evaluation", "testing", "development", "production", "infrastructure"}
)

// CIDRs: ordinary ones overlap each other in places, so whether a Shoot's
// network meets a seed's is often decided by the values drawn.
var (
	ipv4CIDRs = []string{
		"10.0.0.0/16", "10.1.0.0/16", "10.2.0.0/16", "10.0.0.0/8", "100.64.0.0/13",
		"172.16.0.0/14", "192.168.0.0/16", "10.240.0.0/12", "10.3.0.0/16",
	}
	ipv6CIDRs = []string{
		"2001:db8:1::/48", "2001:db8:2::/48", "2001:db8::/32", "fd00:10::/64", "fd00:10:0:1::/64",
	}
	oddCIDRs = []string{
		"10.0.0.1/16", "::ffff:10.0.0.0/104", "::ffff:240.0.0.0/104", "not-a-cidr", "10.0.0.0/33",
		"", "0.0.0.0/0", "::/0", "240.10.0.0/16", "244.0.0.0/8", "241.1.0.0/16",
		"fd8f:6d53:b97a:1::/96", "fd8f:6d53:b97a::/48", "10.0.0.0/0", "2001:db8::1/128",
	}
)
