// Package config is seedwarden's versioned configuration file: its types,
// defaults, strict decoding and validation. The file is YAML or JSON:
//
//	apiVersion: config.seedwarden.io/v1alpha1
//	kind: WebhookConfiguration
//	strategy: SameRegion
//	...
//
// Every field is optional; Default documents what an omitted field means.
// Unknown fields are rejected (a typo must not silently fall back to a
// default), and Validate reports every problem at once, each naming the field
// path and the offending value.
//
// Adding a setting for a later feature: add a field (with a JSON name and a
// comment giving its default), default it in (*Config).applyDefaults, check it
// in (*Config).Validate with v.add("path", ...), add a row to the tests, and
// document it in examples/config.yaml and docs/configuration.md (docs/config_reference_test.go fails until it is).
//
// The package is plain data and imports no other package of seedwarden
// (TestImportsNoSeedwardenPackage): it owns the defaults it documents, and
// cmd/webhook converts a Config into each package's options. A rule that
// needs another package's knowledge is a Check that cmd/webhook passes to
// Load.
package config

import (
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
)

// APIVersion and Kind identify the configuration file format.
const (
	APIVersion = "config.seedwarden.io/v1alpha1"
	Kind       = "WebhookConfiguration"
)

// Values of strategy and networkOverlap: those of internal/placement's
// Strategy and NetworkMode, to which cmd/webhook converts them.
const (
	StrategySameRegion      = "SameRegion"
	StrategyMinimalDistance = "MinimalDistance"
	NetworkOverlapDisjoint  = "Disjoint"
	NetworkOverlapAllowIPv4 = "AllowIPv4"
)

// Defaults of the configuration file. internal/cache's Store defaults to the
// same garden namespace and reservation TTL (a test in cmd/webhook keeps
// them equal).
const (
	DefaultGardenNamespace = "garden"
	// DefaultStrategy is Gardener's own default for the scheduler's candidate
	// determination strategy (SchedulerConfiguration
	// .schedulers.shoot.candidateDeterminationStrategy), so a landscape that
	// never configured its scheduler gets the same placements from seedwarden.
	DefaultStrategy = StrategySameRegion
	// DefaultNetworkOverlap is the rule the seeds document: shoot and seed
	// networks must not intersect, because of the VPN between them.
	DefaultNetworkOverlap = NetworkOverlapDisjoint
	// DefaultSchedulerName is the name seedwarden claims Shoots with, so
	// that the gardener-scheduler every Gardener landscape runs (only Shoots
	// naming no scheduler or "default-scheduler" are its) leaves them alone.
	DefaultSchedulerName   = "seedwarden"
	DefaultReservationTTL  = 30 * time.Second
	DefaultMaxStaleness    = 30 * time.Second
	DefaultPort            = 9443
	DefaultCertDir         = "/etc/seedwarden/certs"
	DefaultCertName        = "tls.crt"
	DefaultKeyName         = "tls.key"
	DefaultMaxRequestBytes = 3 << 20 // 3 MiB
	// DefaultReadTimeout bounds reading a request body; the API server sends
	// it at once.
	DefaultReadTimeout = 10 * time.Second
	// DefaultWriteTimeout bounds a request from its headers to its answer:
	// the API server waits at most 30s (timeoutSeconds) for any webhook.
	DefaultWriteTimeout = 30 * time.Second
	// DefaultMetricsAddress is loopback only: plain HTTP metrics must not
	// be reachable from other hosts (metrics.secure serves them to
	// authenticated clients on any address).
	DefaultMetricsAddress = "127.0.0.1:8080"
	DefaultHealthAddress  = ":8081"
	DefaultLogLevel       = "info"
	DefaultLogFormat      = "json"
	// DefaultExpiryWarning is certificate.expiryWarning's default: a week
	// leaves time to look into a renewal cert-manager failed.
	DefaultExpiryWarning = 7 * 24 * time.Hour
)

// Limits that Validate enforces.
const (
	MaxReservationTTL  = time.Hour
	MaxMaxStaleness    = time.Hour
	MinMaxRequestBytes = 1 << 10  // 1 KiB: smaller cannot hold any AdmissionReview
	MaxMaxRequestBytes = 64 << 20 // 64 MiB
	MinReadTimeout     = 100 * time.Millisecond
	MaxReadTimeout     = 5 * time.Minute
	MinWriteTimeout    = 5 * time.Second
	MaxWriteTimeout    = 5 * time.Minute
	MaxShutdownDelay   = 2 * time.Minute
	// MaxExpiryWarning is the longest certificate.expiryWarning.
	MaxExpiryWarning = 365 * 24 * time.Hour
)

// Config is the configuration of the webhook server and of `webhook simulate`.
type Config struct {
	// APIVersion must be config.seedwarden.io/v1alpha1.
	APIVersion string `json:"apiVersion"`
	// Kind must be WebhookConfiguration.
	Kind string `json:"kind"`

	// GardenNamespace holds the region-config ConfigMaps. Default: garden.
	GardenNamespace string `json:"gardenNamespace,omitempty"`
	// Strategy is the candidate determination strategy: SameRegion or
	// MinimalDistance. Default: SameRegion (Gardener's default).
	Strategy string `json:"strategy,omitempty"`
	// NetworkOverlap says which shoot networks must avoid the seed's: Disjoint
	// (all of them) or AllowIPv4 (only IPv6 ones). Default: Disjoint.
	NetworkOverlap string `json:"networkOverlap,omitempty"`
	// SchedulerName is the scheduler seedwarden acts as. Any name but
	// default-scheduler (default: seedwarden): the mutating webhook claims
	// the Shoots it takes on that name no scheduler or default-scheduler by
	// writing this name into spec.schedulerName, so the gardener-scheduler
	// running beside seedwarden leaves them alone (and still places those
	// the webhook never saw). default-scheduler: seedwarden replaces
	// gardener-scheduler, which must not run. Shoots naming any other
	// scheduler are left alone.
	SchedulerName string `json:"schedulerName,omitempty"`
	// ReservationTTL is how long a placement holds capacity on its seed until
	// the Shoot appears in the watch. Default: 30s.
	ReservationTTL Duration `json:"reservationTTL,omitempty"`
	// Reservations limits the reservations placements hold
	// (reservations.go).
	Reservations Reservations `json:"reservations,omitempty"`

	// Server is the HTTPS server the API server calls.
	Server Server `json:"server,omitempty"`
	// Metrics is the Prometheus endpoint.
	Metrics Metrics `json:"metrics,omitempty"`
	// Health serves /healthz and /readyz.
	Health Endpoint `json:"health,omitempty"`
	// Log configures logging.
	Log Log `json:"log,omitempty"`
	// Certificate names the cert-manager Certificate of the serving
	// certificate, watched for metrics and logs (cluster mode only).
	Certificate Certificate `json:"certificate,omitempty"`

	// Placement configures the token marking the mutating webhook's own
	// placements.
	Placement Placement `json:"placement,omitempty"`
	// Binding configures the binding webhook (/validate-shoot-binding).
	Binding Binding `json:"binding,omitempty"`
	// Capacity configures the capacity webhook (/validate-shoot-capacity).
	Capacity Capacity `json:"capacity,omitempty"`
	// ResourceSize configures the resource-size webhook (/validate-resource-size).
	ResourceSize ResourceSize `json:"resourceSize,omitempty"`
	// ResourceAdmission configures the same webhook in the shape of
	// gardener-admission-controller's resourceAdmissionConfiguration, instead
	// of ResourceSize.
	ResourceAdmission *ResourceAdmission `json:"resourceAdmission,omitempty"`
	// KubeconfigSecret configures the kubeconfig Secret webhook
	// (/validate-kubeconfig-secret).
	KubeconfigSecret KubeconfigSecret `json:"kubeconfigSecret,omitempty"`
	// NamespaceDeletion configures the namespace-deletion webhook
	// (/validate-namespace-deletion).
	NamespaceDeletion NamespaceDeletion `json:"namespaceDeletion,omitempty"`

	// PendingShoots configures the retry controller for Shoots admitted
	// without a seed (cluster mode only).
	PendingShoots PendingShoots `json:"pendingShoots,omitempty"`
	// LeaderElection elects the replica that runs the retry controller and
	// the autoscaler.
	LeaderElection LeaderElection `json:"leaderElection,omitempty"`
	// Cache configures the informer cache (cluster mode only).
	Cache Cache `json:"cache,omitempty"`

	// Scoring, when present, ranks the seeds the filters keep by weighted
	// scorers (scoring.go). Default: absent, Gardener's rule (strategy
	// filter, then the least-used seed).
	Scoring *Scoring `json:"scoring,omitempty"`

	// Policies, when present, are placement policies beyond Gardener's:
	// soft capacity, seats kept for zone-redundant Shoots, seed pools
	// (policies.go). Default: absent.
	Policies *Policies `json:"policies,omitempty"`

	// Headroom, when present, exports how many more Shoots like each
	// profile's template fit right now (headroom.go). Default: absent.
	Headroom *Headroom `json:"headroom,omitempty"`

	// Autoscaler configures the SeedAutoscaler controller (autoscaler.go).
	Autoscaler Autoscaler `json:"autoscaler,omitempty"`

	// SeedDrain configures SeedDrains: their cordon and their controller
	// (seeddrain.go).
	SeedDrain SeedDrain `json:"seedDrain,omitempty"`

	// Audit configures the placement audit (audit.go).
	Audit Audit `json:"audit,omitempty"`
}

// Cache configures the informer cache the webhooks decide from.
type Cache struct {
	// MaxStaleness bounds how long the webhooks decide from a cache some
	// informer of which has no open watch (cache.Freshness): beyond it the
	// mutating webhook admits Shoots without a seed (with a warning), the
	// capacity and binding webhooks deny requests that set a seed, the retry
	// controller waits, and /readyz fails. "0s" disables the bound. Default: 30s.
	MaxStaleness Duration `json:"maxStaleness,omitempty"`
}

// Log configures logging.
type Log struct {
	// Level is debug, info, warn or error. Default: info.
	Level string `json:"level,omitempty"`
	// Format is json or console. Default: json.
	Format string `json:"format,omitempty"`
}

// Disabled is the bind address that turns an endpoint off.
const Disabled = "0"

// Default returns the configuration used when no file is given.
func Default() *Config {
	c := &Config{APIVersion: APIVersion, Kind: Kind}
	c.applyDefaults()
	return c
}

// applyDefaults fills every field that was left empty.
func (c *Config) applyDefaults() {
	setDefault(&c.GardenNamespace, DefaultGardenNamespace)
	setDefault(&c.Strategy, DefaultStrategy)
	setDefault(&c.NetworkOverlap, DefaultNetworkOverlap)
	setDefault(&c.SchedulerName, DefaultSchedulerName)
	if !c.ReservationTTL.set {
		c.ReservationTTL = Duration{Duration: DefaultReservationTTL, set: true}
	}
	setDefault(&c.Server.Port, DefaultPort)
	setDefault(&c.Server.CertDir, DefaultCertDir)
	setDefault(&c.Server.CertName, DefaultCertName)
	setDefault(&c.Server.KeyName, DefaultKeyName)
	setDefault(&c.Server.MaxRequestBytes, DefaultMaxRequestBytes)
	c.applyServerDefaults()
	if !c.Server.ReadTimeout.set {
		c.Server.ReadTimeout = NewDuration(DefaultReadTimeout)
	}
	if !c.Server.WriteTimeout.set {
		c.Server.WriteTimeout = NewDuration(DefaultWriteTimeout)
	}
	setDefault(&c.Metrics.BindAddress, DefaultMetricsAddress)
	if c.Metrics.Secure == nil {
		c.Metrics.Secure = ptr.To(false)
	}
	setDefault(&c.Health.BindAddress, DefaultHealthAddress)
	setDefault(&c.Log.Level, DefaultLogLevel)
	setDefault(&c.Log.Format, DefaultLogFormat)
	if !c.Certificate.ExpiryWarning.set {
		c.Certificate.ExpiryWarning = NewDuration(DefaultExpiryWarning)
	}
	if !c.Cache.MaxStaleness.set {
		c.Cache.MaxStaleness = NewDuration(DefaultMaxStaleness)
	}
	c.applyPlacementDefaults()
	c.applyWebhookDefaults()
	c.applyPendingDefaults()
	c.applyReservationDefaults()
	c.applyHeadroomDefaults()
	c.applyAutoscalerDefaults()
	c.applySeedDrainDefaults()
	c.applyAuditDefaults()
}

func setDefault[T comparable](field *T, def T) {
	var zero T
	if *field == zero {
		*field = def
	}
}

// Validate returns every problem of the configuration, each naming the field
// path and the offending value, or nil. It expects defaults to be applied.
func (c *Config) Validate() error {
	var p problems
	c.validateTopLevel(&p)
	c.validateServer(&p)
	validateDurationRange(&p, "cache.maxStaleness", c.Cache.MaxStaleness, 0, MaxMaxStaleness)
	c.validateServerTimeouts(&p)
	c.validateEndpoints(&p)
	c.validateLog(&p)
	c.validateCertificate(&p)
	c.validatePlacement(&p)
	c.validateWebhooks(&p)
	c.validateResourceAdmission(&p)
	c.validatePending(&p)
	c.validateReservations(&p)
	c.validateScoring(&p)
	c.validatePolicies(&p)
	c.validateSeedLabels(&p)
	c.validateHeadroom(&p)
	c.validateAutoscaler(&p)
	c.validateSeedDrain(&p)
	c.validateAudit(&p)

	if len(p.list) == 0 {
		return nil
	}
	return &Error{Problems: p.list}
}

// validateTopLevel checks the fields outside any section.
func (c *Config) validateTopLevel(p *problems) {
	if c.APIVersion != APIVersion {
		p.add("apiVersion", "unsupported value %q (want %s)", c.APIVersion, APIVersion)
	}
	if c.Kind != Kind {
		p.add("kind", "unsupported value %q (want %s)", c.Kind, Kind)
	}
	if errs := validation.IsDNS1123Label(c.GardenNamespace); len(errs) > 0 {
		p.add("gardenNamespace", "invalid value %q: %s", c.GardenNamespace, strings.Join(errs, "; "))
	}
	switch c.Strategy {
	case StrategySameRegion, StrategyMinimalDistance:
	default:
		p.add("strategy", "unsupported value %q (want %s or %s)", c.Strategy, StrategySameRegion, StrategyMinimalDistance)
	}
	switch c.NetworkOverlap {
	case NetworkOverlapDisjoint, NetworkOverlapAllowIPv4:
	default:
		p.add("networkOverlap", "unsupported value %q (want %s or %s)", c.NetworkOverlap, NetworkOverlapDisjoint, NetworkOverlapAllowIPv4)
	}
	if c.SchedulerName == "" || len(c.SchedulerName) > 253 || strings.ContainsFunc(c.SchedulerName, isSpaceOrControl) {
		p.add("schedulerName", "invalid value %q (want a name without spaces, at most 253 characters)", c.SchedulerName)
	}
	c.ReservationTTL.validate(p, "reservationTTL", MaxReservationTTL)
}

// validateLog checks the log level and format.
func (c *Config) validateLog(p *problems) {
	switch c.Log.Level {
	case "debug", "info", "warn", "error":
	default:
		p.add("log.level", "unsupported value %q (want debug, info, warn or error)", c.Log.Level)
	}
	switch c.Log.Format {
	case "json", "console":
	default:
		p.add("log.format", "unsupported value %q (want json or console)", c.Log.Format)
	}
}
