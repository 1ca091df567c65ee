package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/utils/ptr"
)

const header = "apiVersion: config.seedwarden.io/v1alpha1\nkind: WebhookConfiguration\n"

func TestDefault(t *testing.T) {
	c := Default()
	require.NoError(t, c.Validate())
	assert.Equal(t, &Config{
		APIVersion:      APIVersion,
		Kind:            Kind,
		GardenNamespace: "garden",
		Strategy:        StrategySameRegion,
		NetworkOverlap:  NetworkOverlapDisjoint,
		SchedulerName:   "seedwarden",
		ReservationTTL:  NewDuration(30 * time.Second),
		Reservations:    Reservations{ConfirmWindow: NewDuration(5 * time.Second), MaxPerNamespace: 100, MaxPerUser: 20, MaxTotal: 1000},
		Server: Server{
			Port:            9443,
			CertDir:         "/etc/seedwarden/certs",
			CertName:        "tls.crt",
			KeyName:         "tls.key",
			MaxRequestBytes: 3145728,
			// One request of maxRequestBytes and the reserve for small ones.
			MaxRequestBytesInFlight: 4194304,
			RequestQueueTimeout:     NewDuration(time.Second),
			ReadTimeout:             NewDuration(10 * time.Second),
			WriteTimeout:            NewDuration(30 * time.Second),
		},
		Metrics:     Metrics{BindAddress: "127.0.0.1:8080", Secure: ptr.To(false)},
		Health:      Endpoint{BindAddress: ":8081"},
		Log:         Log{Level: "info", Format: "json"},
		Certificate: Certificate{ExpiryWarning: NewDuration(7 * 24 * time.Hour)},
		Placement:   Placement{TokenTTL: NewDuration(2 * time.Minute), Mode: PlacementViaBinding},
		Binding: Binding{
			Enabled:               ptr.To(true),
			AuthorizationCacheTTL: NewDuration(10 * time.Second),
			AuthorizationTimeout:  NewDuration(3 * time.Second),
			Enforcement:           EnforcementDeny,
		},
		Capacity:          Capacity{Enabled: ptr.To(true), Coordination: CoordinationLocal, Enforcement: EnforcementDeny},
		ResourceSize:      ResourceSize{OperationMode: "block", Enforcement: EnforcementDeny},
		KubeconfigSecret:  KubeconfigSecret{Enforcement: EnforcementDeny},
		NamespaceDeletion: NamespaceDeletion{Enforcement: EnforcementDeny},
		PendingShoots: PendingShoots{
			Enabled:            ptr.To(true),
			BindMode:           "binding",
			BackoffBase:        NewDuration(time.Second),
			BackoffMax:         NewDuration(5 * time.Minute),
			ConflictBackoffMax: NewDuration(5 * time.Second),
			Workers:            5,
		},
		LeaderElection: LeaderElection{Enabled: ptr.To(true), ID: "seedwarden-pending-shoots"},
		Cache:          Cache{MaxStaleness: NewDuration(DefaultMaxStaleness)},
		Autoscaler:     Autoscaler{SyncPeriod: NewDuration(DefaultAutoscalerSyncPeriod), SyncBudget: NewDuration(DefaultAutoscalerSyncBudget)},
		SeedDrain:      SeedDrain{SyncPeriod: NewDuration(DefaultSeedDrainSyncPeriod)},
		Audit:          Audit{Interval: NewDuration(DefaultAuditInterval), ResultsLimit: DefaultAuditResultsLimit},
	}, c)
	assert.True(t, c.BindingEnabled())
	assert.True(t, c.CapacityEnabled())
	assert.True(t, c.PendingShootsEnabled())
	assert.True(t, c.LeaderElectionEnabled())
	assert.False(t, c.MetricsSecure())
	assert.False(t, c.Certificate.Watched())
	assert.False(t, c.Capacity.APIServer())
}

func TestParseMinimalIsDefault(t *testing.T) {
	c, err := Parse([]byte(header))
	require.NoError(t, err)
	assert.Equal(t, Default(), c)

	// JSON works too, and explicit empty values are defaulted.
	c, err = Parse([]byte(`{"apiVersion":"config.seedwarden.io/v1alpha1","kind":"WebhookConfiguration","strategy":"","reservationTTL":"","server":{"port":0}}`))
	require.NoError(t, err)
	assert.Equal(t, Default(), c)

	c, err = Parse([]byte(header + "reservationTTL:\nserver: {}\n"))
	require.NoError(t, err)
	assert.Equal(t, Default(), c)
}

func TestParseAllFields(t *testing.T) {
	c, err := Parse([]byte(header + `
gardenNamespace: garden-ops
strategy: SameRegion
networkOverlap: AllowIPv4
schedulerName: my-scheduler
reservationTTL: 1m30s
reservations:
  confirmWindow: 3s
  maxPerNamespace: 20
  maxPerUser: 5
  maxTotal: 200
server:
  port: 10250
  certDir: ./certs
  certName: serving.crt
  keyName: serving.key
  maxRequestBytes: 1048576
  maxRequestBytesInFlight: 6291456
  requestQueueTimeout: 500ms
  readTimeout: 2s
  writeTimeout: 20s
metrics:
  bindAddress: ":9090"
  secure: true
health:
  bindAddress: "0"
log:
  level: debug
  format: console
certificate:
  namespace: seedwarden
  name: seedwarden-webhook
  expiryWarning: 720h
placement:
  keyFile: /etc/seedwarden/placement-key/key
  tokenTTL: 30s
  mode: patch
binding:
  enabled: false
  authorizationCacheTTL: 0s
  authorizationTimeout: 1500ms
  landscapeAllowedSubjects:
  - {kind: User, name: admin}
  enforcement: warn
capacity:
  enabled: false
  unrestrictedSubjects:
  - {kind: Group, name: "garden:operators"}
  - {kind: ServiceAccount, namespace: garden, name: "*"}
  coordination: apiserver
  reservationNamespace: seedwarden
  enforcement: dryrun
resourceSize:
  operationMode: log
  limits:
  - {apiGroups: [core.gardener.cloud], apiVersions: ["*"], resources: [shoots], size: 100Ki, enforcement: deny}
  - apiGroups: [""]
    apiVersions: [v1]
    resources: ["*"]
    size: 1M
  counts:
  - {apiGroups: [core.gardener.cloud], apiVersions: ["*"], resources: [projects, seeds], count: 100, enforcement: dryrun}
  unrestrictedSubjects:
  - {kind: User, name: "system:serviceaccount:garden:*"}
kubeconfigSecret:
  allowedFields: [tokenFile, exec]
  enforcement: warn
namespaceDeletion:
  enforcement: dryrun
pendingShoots:
  enabled: false
  bindMode: update
  backoffBase: 500ms
  backoffMax: 1m
  conflictBackoffMax: 2s
  workers: 2
leaderElection:
  enabled: false
  namespace: seedwarden
  id: my-lease
cache:
  maxStaleness: 45s
autoscaler:
  enabled: true
  dryRun: true
  syncPeriod: 10s
seedDrain:
  enabled: true
  syncPeriod: 5s
audit:
  enabled: true
  interval: 1m
  resultsLimit: 20
scoring:
  scorers:
  - {name: LeastAllocated, weight: 5}
  - {name: RegionDistance, weight: 1}
  defaultCapacity: 100
`))
	require.NoError(t, err)
	assert.Equal(t, &Config{
		APIVersion:      APIVersion,
		Kind:            Kind,
		GardenNamespace: "garden-ops",
		Strategy:        StrategySameRegion,
		NetworkOverlap:  NetworkOverlapAllowIPv4,
		SchedulerName:   "my-scheduler",
		ReservationTTL:  NewDuration(90 * time.Second),
		Reservations:    Reservations{ConfirmWindow: NewDuration(3 * time.Second), MaxPerNamespace: 20, MaxPerUser: 5, MaxTotal: 200},
		Server: Server{Port: 10250, CertDir: "./certs", CertName: "serving.crt", KeyName: "serving.key", MaxRequestBytes: 1 << 20,
			MaxRequestBytesInFlight: 6 << 20, RequestQueueTimeout: NewDuration(500 * time.Millisecond),
			ReadTimeout: NewDuration(2 * time.Second), WriteTimeout: NewDuration(20 * time.Second)},
		Metrics:     Metrics{BindAddress: ":9090", Secure: ptr.To(true)},
		Health:      Endpoint{BindAddress: "0"},
		Log:         Log{Level: "debug", Format: "console"},
		Certificate: Certificate{Namespace: "seedwarden", Name: "seedwarden-webhook", ExpiryWarning: NewDuration(720 * time.Hour)},
		Placement:   Placement{KeyFile: "/etc/seedwarden/placement-key/key", TokenTTL: NewDuration(30 * time.Second), Mode: PlacementViaPatch},
		Binding: Binding{
			Enabled:                  ptr.To(false),
			AuthorizationCacheTTL:    NewDuration(0),
			AuthorizationTimeout:     NewDuration(1500 * time.Millisecond),
			LandscapeAllowedSubjects: []Subject{{Kind: "User", Name: "admin"}},
			Enforcement:              EnforcementWarn,
		},
		Capacity: Capacity{Enabled: ptr.To(false), UnrestrictedSubjects: []Subject{
			{Kind: "Group", Name: "garden:operators"},
			{Kind: "ServiceAccount", Namespace: "garden", Name: "*"},
		}, Coordination: CoordinationAPIServer, ReservationNamespace: "seedwarden", Enforcement: EnforcementDryRun},
		ResourceSize: ResourceSize{
			OperationMode: "log",
			Enforcement:   EnforcementWarn,
			Limits: []SizeLimit{
				{Resources: Resources{APIGroups: []string{"core.gardener.cloud"}, APIVersions: []string{"*"}, Resources: []string{"shoots"}}, Size: "100Ki", Enforcement: EnforcementDeny},
				{Resources: Resources{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"*"}}, Size: "1M"},
			},
			Counts: []CountLimit{
				{Resources: Resources{APIGroups: []string{"core.gardener.cloud"}, APIVersions: []string{"*"}, Resources: []string{"projects", "seeds"}}, Count: ptr.To(int64(100)), Enforcement: EnforcementDryRun},
			},
			UnrestrictedSubjects: []Subject{{Kind: "User", Name: "system:serviceaccount:garden:*"}},
		},
		KubeconfigSecret:  KubeconfigSecret{AllowedFields: []string{"tokenFile", "exec"}, Enforcement: EnforcementWarn},
		NamespaceDeletion: NamespaceDeletion{Enforcement: EnforcementDryRun},
		PendingShoots: PendingShoots{
			Enabled:            ptr.To(false),
			BindMode:           "update",
			BackoffBase:        NewDuration(500 * time.Millisecond),
			BackoffMax:         NewDuration(time.Minute),
			ConflictBackoffMax: NewDuration(2 * time.Second),
			Workers:            2,
		},
		LeaderElection: LeaderElection{Enabled: ptr.To(false), Namespace: "seedwarden", ID: "my-lease"},
		Cache:          Cache{MaxStaleness: NewDuration(45 * time.Second)},
		Autoscaler:     Autoscaler{Enabled: true, DryRun: true, SyncPeriod: NewDuration(10 * time.Second), SyncBudget: NewDuration(DefaultAutoscalerSyncBudget)},
		SeedDrain:      SeedDrain{Enabled: true, SyncPeriod: NewDuration(5 * time.Second)},
		Audit:          Audit{Enabled: true, Interval: NewDuration(time.Minute), ResultsLimit: 20},
		Scoring: &Scoring{
			Scorers:         []WeightedScorer{{Name: "LeastAllocated", Weight: 5}, {Name: "RegionDistance", Weight: 1}},
			DefaultCapacity: 100,
		},
	}, c)
	assert.False(t, c.BindingEnabled())
	assert.False(t, c.CapacityEnabled())
	assert.False(t, c.PendingShootsEnabled())
	assert.False(t, c.LeaderElectionEnabled())
	assert.True(t, c.MetricsSecure())
	assert.True(t, c.Certificate.Watched())
	assert.True(t, c.Capacity.APIServer())
	n, err := c.ResourceSize.Limits[0].Bytes()
	require.NoError(t, err)
	assert.Equal(t, int64(102400), n)
	n, err = c.ResourceSize.Limits[1].Bytes()
	require.NoError(t, err)
	assert.Equal(t, int64(1000000), n)
}

// TestFieldRules has one row per rule: the YAML after the header, and the
// problem expected (exactly; empty means valid).
func TestFieldRules(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"gardenNamespace ok", "gardenNamespace: garden-x", ""},

		{"binding.enforcement warn", "binding: {enforcement: warn}", ""},
		{"binding.enforcement unknown", "binding: {enforcement: audit}", `binding.enforcement: unsupported value "audit" (want deny, warn or dryrun)`},
		{"capacity.enforcement dryrun", "capacity: {enforcement: dryrun}", ""},
		{"capacity.enforcement wrong case", "capacity: {enforcement: Warn}", `capacity.enforcement: unsupported value "Warn" (want deny, warn or dryrun)`},
		{"kubeconfigSecret.enforcement unknown", "kubeconfigSecret: {enforcement: log}", `kubeconfigSecret.enforcement: unsupported value "log" (want deny, warn or dryrun)`},
		{"namespaceDeletion.enforcement warn", "namespaceDeletion: {enforcement: warn}", ""},
		{"namespaceDeletion.enforcement unknown", "namespaceDeletion: {enforcement: block}", `namespaceDeletion.enforcement: unsupported value "block" (want deny, warn or dryrun)`},
		{"resourceSize.enforcement warn", "resourceSize: {enforcement: warn}", ""},
		{"resourceSize.enforcement with operationMode log", "resourceSize: {operationMode: log, enforcement: warn}", ""},
		{"resourceSize.enforcement contradicts operationMode log", "resourceSize: {operationMode: log, enforcement: dryrun}", `resourceSize.enforcement: "dryrun" contradicts resourceSize.operationMode "log" (which is enforcement warn); set one of them`},
		{"resourceSize.enforcement unknown", "resourceSize: {enforcement: block}", `resourceSize.enforcement: unsupported value "block" (want deny, warn or dryrun)`},
		{"resourceSize.limits[].enforcement", "resourceSize: {limits: [{apiGroups: [''], apiVersions: ['*'], resources: [configmaps], size: 1Mi, enforcement: warn}]}", ""},
		{"resourceSize.limits[].enforcement unknown", "resourceSize: {limits: [{apiGroups: [''], apiVersions: ['*'], resources: [configmaps], size: 1Mi, enforcement: Deny}]}", `resourceSize.limits[0].enforcement: unsupported value "Deny" (want deny, warn or dryrun)`},
		{"resourceSize.counts[].enforcement unknown", "resourceSize: {counts: [{apiGroups: [core.gardener.cloud], apiVersions: ['*'], resources: [projects], count: 1, enforcement: never}]}", `resourceSize.counts[0].enforcement: unsupported value "never" (want deny, warn or dryrun)`},
		{"resourceSize.enforcement with resourceAdmission", "resourceSize: {enforcement: warn}\nresourceAdmission: {limits: [{resources: [shoots], size: 1Mi}]}", "resourceAdmission: cannot be combined with resourceSize"},
		{"gardenNamespace uppercase", "gardenNamespace: Garden", `gardenNamespace: invalid value "Garden": a lowercase RFC 1123 label must consist of`},
		{"gardenNamespace too long", "gardenNamespace: " + strings.Repeat("a", 64), `gardenNamespace: invalid value "aaaa`},

		{"strategy SameRegion", "strategy: SameRegion", ""},
		{"strategy MinimalDistance", "strategy: MinimalDistance", ""},
		{"strategy unknown", "strategy: Nearest", `strategy: unsupported value "Nearest" (want SameRegion or MinimalDistance)`},
		{"strategy wrong case", "strategy: sameregion", `strategy: unsupported value "sameregion" (want SameRegion or MinimalDistance)`},

		{"networkOverlap Disjoint", "networkOverlap: Disjoint", ""},
		{"networkOverlap AllowIPv4", "networkOverlap: AllowIPv4", ""},
		{"networkOverlap unknown", "networkOverlap: None", `networkOverlap: unsupported value "None" (want Disjoint or AllowIPv4)`},

		{"schedulerName ok", "schedulerName: custom.example.com", ""},
		{"schedulerName space", "schedulerName: my scheduler", `schedulerName: invalid value "my scheduler" (want a name without spaces, at most 253 characters)`},
		{"schedulerName too long", "schedulerName: " + strings.Repeat("s", 254), `schedulerName: invalid value "ssss`},

		{"reservationTTL ok", "reservationTTL: 2m", ""},
		{"reservationTTL max", "reservationTTL: 1h", ""},
		{"reservationTTL zero", "reservationTTL: 0s", "reservationTTL: 0s must be positive"},
		{"reservationTTL negative", "reservationTTL: -5s", "reservationTTL: -5s must be positive"},
		{"reservationTTL too long", "reservationTTL: 2h", "reservationTTL: 2h0m0s is longer than the maximum 1h0m0s"},
		{"reservationTTL garbage", "reservationTTL: soon", `reservationTTL: invalid value "soon" (want a duration such as "30s")`},
		{"reservationTTL number", "reservationTTL: 30", `reservationTTL: invalid value 30 (want a duration such as "30s")`},

		{"server.port low", "server: {port: 1}", ""},
		{"server.port high", "server: {port: 65535}", ""},
		{"server.port too high", "server: {port: 70000}", "server.port: 70000 out of range 1-65535"},
		{"server.port negative", "server: {port: -1}", "server.port: -1 out of range 1-65535"},
		{"server.port string", "server: {port: https}", "server.port: cannot use string here (want an integer)"},
		{"server.certDir blank", "server: {certDir: ' '}", "server.certDir: must not be empty"},
		{"server.certName path", "server: {certName: ../tls.crt}", `server.certName: invalid value "../tls.crt" (want a file name inside server.certDir)`},
		{"server.keyName dot", "server: {keyName: ..}", `server.keyName: invalid value ".." (want a file name inside server.certDir)`},
		{"server.keyName same as cert", "server: {certName: both.pem, keyName: both.pem}", `server.keyName: "both.pem" is also server.certName`},
		{"server.maxRequestBytes ok", "server: {maxRequestBytes: 1024}", ""},
		{"server.maxRequestBytesInFlight one request", "server: {maxRequestBytes: 1048576, maxRequestBytesInFlight: 1048576}", ""},
		{"server.maxRequestBytesInFlight below maxRequestBytes", "server: {maxRequestBytesInFlight: 1048576}", "server.maxRequestBytesInFlight: 1048576 out of range 3145728 (server.maxRequestBytes)-68719476736"},
		{"server.maxRequestBytesInFlight negative", "server: {maxRequestBytesInFlight: -1}", "server.maxRequestBytesInFlight: -1 out of range 3145728 (server.maxRequestBytes)-68719476736"},
		{"server.maxRequestBytesInFlight huge", "server: {maxRequestBytesInFlight: 137438953472}", "server.maxRequestBytesInFlight: 137438953472 out of range 3145728 (server.maxRequestBytes)-68719476736"},
		{"server.requestQueueTimeout off", "server: {requestQueueTimeout: 0s}", ""},
		{"server.requestQueueTimeout negative", "server: {requestQueueTimeout: -1s}", "server.requestQueueTimeout: -1s is shorter than the minimum 0s"},
		{"server.requestQueueTimeout long", "server: {requestQueueTimeout: 11s}", "server.requestQueueTimeout: 11s is longer than the maximum 10s"},
		{"server.requestQueueTimeout not below writeTimeout", "server: {requestQueueTimeout: 5s, writeTimeout: 5s}", "server.requestQueueTimeout: 5s must be shorter than server.writeTimeout 5s"},
		{"server.requestQueueTimeout garbage", "server: {requestQueueTimeout: soon}", `server.requestQueueTimeout: invalid value "soon" (want a duration such as "30s")`},
		{"server.clientAuth ok", "server: {clientAuth: {caFile: /etc/ca.crt, allowedNames: [kube-apiserver, front-proxy-client]}}", ""},
		{"server.clientAuth any name", "server: {clientAuth: {caFile: /etc/ca.crt}}", ""},
		{"server.clientAuth names without CA", "server: {clientAuth: {allowedNames: [kube-apiserver]}}", `server.clientAuth.allowedNames: ["kube-apiserver"] needs server.clientAuth.caFile`},
		{"server.clientAuth empty name", `server: {clientAuth: {caFile: /ca, allowedNames: [""]}}`, `server.clientAuth.allowedNames[0]: invalid value ""`},
		{"server.clientAuth control character", `server: {clientAuth: {caFile: /ca, allowedNames: ["a\nb"]}}`, `server.clientAuth.allowedNames[0]: invalid value "a\nb"`},
		{"server.clientAuth long name", "server: {clientAuth: {caFile: /ca, allowedNames: [" + strings.Repeat("n", 65) + "]}}", "server.clientAuth.allowedNames[0]: invalid value"},
		{"server.clientAuth duplicate", "server: {clientAuth: {caFile: /ca, allowedNames: [a, b, a]}}", `server.clientAuth.allowedNames[2]: duplicate value "a"`},
		{"server.clientAuth padded file", `server: {clientAuth: {caFile: " /ca"}}`, `server.clientAuth.caFile: invalid value " /ca"`},
		{"server.maxRequestBytes small", "server: {maxRequestBytes: 100}", "server.maxRequestBytes: 100 out of range 1024-67108864"},
		{"server.maxRequestBytes negative", "server: {maxRequestBytes: -1}", "server.maxRequestBytes: -1 out of range 1024-67108864"},
		{"server.maxRequestBytes huge", "server: {maxRequestBytes: 1073741824}", "server.maxRequestBytes: 1073741824 out of range 1024-67108864"},

		{"server.readTimeout ok", "server: {readTimeout: 500ms}", ""},
		{"server.shutdownDelay ok", "server: {shutdownDelay: 5s}", ""},
		{"server.shutdownDelay negative", "server: {shutdownDelay: -1s}", "server.shutdownDelay: -1s is shorter than the minimum 0s"},
		{"server.shutdownDelay long", "server: {shutdownDelay: 3m}", "server.shutdownDelay: 3m0s is longer than the maximum 2m0s"},
		{"server.readTimeout short", "server: {readTimeout: 10ms}", "server.readTimeout: 10ms is shorter than the minimum 100ms"},
		{"server.readTimeout long", "server: {readTimeout: 1h}", "server.readTimeout: 1h0m0s is longer than the maximum 5m0s"},
		{"server.readTimeout garbage", "server: {readTimeout: slow}", `server.readTimeout: invalid value "slow" (want a duration such as "30s")`},
		{"server.writeTimeout ok", "server: {writeTimeout: 5s}", ""},
		{"server.writeTimeout short", "server: {writeTimeout: 1s}", "server.writeTimeout: 1s is shorter than the minimum 5s"},
		{"server.writeTimeout long", "server: {writeTimeout: 10m}", "server.writeTimeout: 10m0s is longer than the maximum 5m0s"},
		{"server.writeTimeout below authorization timeout", "server: {writeTimeout: 10s}\nbinding: {authorizationTimeout: 10s}", "server.writeTimeout: 10s must be longer than binding.authorizationTimeout 10s"},

		{"metrics.bindAddress localhost", "metrics: {bindAddress: 'localhost:9090'}", ""},
		{"metrics.bindAddress ipv6 loopback", "metrics: {bindAddress: '[::1]:9090'}", ""},
		{"metrics.bindAddress 127/8", "metrics: {bindAddress: '127.0.0.2:9090'}", ""},
		{"metrics.bindAddress disabled", "metrics: {bindAddress: '0'}", ""},
		{"metrics.bindAddress no port", "metrics: {bindAddress: localhost}", `metrics.bindAddress: invalid value "localhost" (want host:port, :port or "0" to disable)`},
		{"metrics.bindAddress bad port", "metrics: {bindAddress: ':99999'}", `metrics.bindAddress: invalid port in ":99999" (want 0-65535)`},
		{"metrics.bindAddress is server port", "metrics: {bindAddress: '127.0.0.1:9443'}", `metrics.bindAddress: "127.0.0.1:9443" uses server.port 9443`},
		{"metrics.bindAddress all interfaces, not secure", "metrics: {bindAddress: '0.0.0.0:8080'}", `metrics.bindAddress: "0.0.0.0:8080" must be a loopback address when metrics.secure is false`},
		{"metrics.bindAddress empty host, not secure", "metrics: {bindAddress: ':8080', secure: false}", `metrics.bindAddress: ":8080" must be a loopback address when metrics.secure is false`},
		{"metrics.bindAddress other host, not secure", "metrics: {bindAddress: '10.0.0.1:8080'}", `metrics.bindAddress: "10.0.0.1:8080" must be a loopback address when metrics.secure is false`},
		{"metrics.secure any address", "metrics: {bindAddress: ':8443', secure: true}", ""},
		{"metrics.secure disabled endpoint", "metrics: {bindAddress: '0', secure: false}", ""},
		{"metrics.secure string", "metrics: {secure: 'yes'}", "metrics.secure: cannot use string here (want true or false)"},
		{"health.bindAddress bad", "health: {bindAddress: 'x:y'}", `health.bindAddress: invalid port in "x:y" (want 0-65535)`},
		{"health.bindAddress same as metrics", "health: {bindAddress: '127.0.0.1:8080'}", `health.bindAddress: "127.0.0.1:8080" is also metrics.bindAddress`},

		{"certificate both", "certificate: {namespace: seedwarden, name: seedwarden-webhook}", ""},
		{"certificate neither", "certificate: {expiryWarning: 24h}", ""},
		{"certificate name only", "certificate: {name: seedwarden-webhook}", `certificate.namespace: required when certificate.name is set (the namespace of Certificate "seedwarden-webhook")`},
		{"certificate namespace only", "certificate: {namespace: seedwarden}", "certificate.name: required when certificate.namespace is set"},
		{"certificate bad namespace", "certificate: {namespace: Seedwarden, name: a}", `certificate.namespace: invalid value "Seedwarden": a lowercase RFC 1123 label`},
		{"certificate bad name", "certificate: {namespace: a, name: 'web hook'}", `certificate.name: invalid value "web hook": a lowercase RFC 1123 subdomain`},
		{"certificate.expiryWarning off", "certificate: {expiryWarning: 0s}", ""},
		{"certificate.expiryWarning negative", "certificate: {expiryWarning: -1h}", "certificate.expiryWarning: -1h0m0s is shorter than the minimum 0s"},
		{"certificate.expiryWarning long", "certificate: {expiryWarning: 9000h}", "certificate.expiryWarning: 9000h0m0s is longer than the maximum 8760h0m0s"},
		{"certificate.expiryWarning garbage", "certificate: {expiryWarning: week}", `certificate.expiryWarning: invalid value "week" (want a duration such as "30s")`},
		{"certificate unknown field", "certificate: {namespace: a, name: b, secretName: c}", "certificate.secretName: unknown field"},

		{"capacity.coordination local", "capacity: {coordination: local}", ""},
		{"capacity.coordination apiserver", "capacity: {coordination: apiserver}", ""},
		{"capacity.coordination apiserver with namespace", "capacity: {coordination: apiserver, reservationNamespace: seedwarden}", ""},
		{"capacity.coordination unknown", "capacity: {coordination: etcd}", `capacity.coordination: unsupported value "etcd" (want local or apiserver)`},
		{"capacity.coordination wrong case", "capacity: {coordination: APIServer}", `capacity.coordination: unsupported value "APIServer" (want local or apiserver)`},
		{"capacity.reservationNamespace bad", "capacity: {coordination: apiserver, reservationNamespace: Seedwarden}", `capacity.reservationNamespace: invalid value "Seedwarden"`},
		{"capacity unknown field", "capacity: {coordinaton: apiserver}", "capacity.coordinaton: unknown field"},
		{"both disabled", "health: {bindAddress: '0'}\nmetrics: {bindAddress: '0'}", ""},

		{"log.level debug", "log: {level: debug}", ""},
		{"log.level warn", "log: {level: warn}", ""},
		{"log.level error", "log: {level: error}", ""},
		{"log.level unknown", "log: {level: trace}", `log.level: unsupported value "trace" (want debug, info, warn or error)`},
		{"log.format console", "log: {format: console}", ""},
		{"log.format unknown", "log: {format: text}", `log.format: unsupported value "text" (want json or console)`},

		{"placement.keyFile ok", "placement: {keyFile: /key}", ""},
		{"placement.keyFile blank", "placement: {keyFile: ' '}", `placement.keyFile: invalid value " " (want a file path)`},
		{"placement.tokenTTL min", "placement: {tokenTTL: 10s}", ""},
		{"placement.tokenTTL short", "placement: {tokenTTL: 1s}", "placement.tokenTTL: 1s is shorter than the minimum 10s"},
		{"placement.tokenTTL long", "placement: {tokenTTL: 2h}", "placement.tokenTTL: 2h0m0s is longer than the maximum 1h0m0s"},
		{"placement.tokenTTL garbage", "placement: {tokenTTL: x}", `placement.tokenTTL: invalid value "x" (want a duration such as "30s")`},
		{"placement.mode patch", "placement: {mode: patch}", ""},
		{"placement.mode binding", "placement: {mode: binding}", ""},
		{"placement.mode unknown", "placement: {mode: direct}", `placement.mode: unsupported value "direct" (want binding or patch)`},
		{"binding.enabled string", "binding: {enabled: 'no'}", "binding.enabled: cannot use string here (want true or false)"},
		{"binding.authorizationCacheTTL zero", "binding: {authorizationCacheTTL: 0s}", ""},
		{"binding.authorizationCacheTTL negative", "binding: {authorizationCacheTTL: -1s}", "binding.authorizationCacheTTL: -1s is shorter than the minimum 0s"},
		{"binding.authorizationCacheTTL long", "binding: {authorizationCacheTTL: 10m}", "binding.authorizationCacheTTL: 10m0s is longer than the maximum 5m0s"},
		{"binding.authorizationTimeout zero", "binding: {authorizationTimeout: 0s}", "binding.authorizationTimeout: 0s is shorter than the minimum 1ms"},
		{"binding.authorizationTimeout long", "binding: {authorizationTimeout: 31s}", "binding.authorizationTimeout: 31s is longer than the maximum 30s"},
		{"binding.landscapeAllowedSubjects bad kind", "binding: {landscapeAllowedSubjects: [{kind: user, name: a}]}", `binding.landscapeAllowedSubjects[0].kind: unsupported value "user" (want User, Group or ServiceAccount)`},
		{"subject without name", "capacity: {unrestrictedSubjects: [{kind: Group}]}", `capacity.unrestrictedSubjects[0].name: required ("*" matches every name)`},
		{"service account without namespace", "capacity: {unrestrictedSubjects: [{kind: ServiceAccount, name: a}]}", `capacity.unrestrictedSubjects[0].namespace: required for kind ServiceAccount ("*" for all namespaces)`},
		{"user with namespace", "capacity: {unrestrictedSubjects: [{kind: User, name: a, namespace: b}]}", `capacity.unrestrictedSubjects[0].namespace: "b" is only allowed for kind ServiceAccount`},
		{"subject wildcards", "resourceSize: {unrestrictedSubjects: [{kind: ServiceAccount, name: '*', namespace: '*'}, {kind: User, name: 'system:*'}]}", ""},
		{"subject unknown field", "resourceSize: {unrestrictedSubjects: [{kind: User, name: a, apiGroup: x}]}", "resourceSize.unrestrictedSubjects[0].apiGroup: unknown field"},
		{"operationMode log", "resourceSize: {operationMode: log}", ""},
		{"operationMode unknown", "resourceSize: {operationMode: warn}", `resourceSize.operationMode: unsupported value "warn" (want block or log)`},
		{"size limit ok", `resourceSize: {limits: [{apiGroups: [""], apiVersions: [v1], resources: [secrets], size: 64Ki}]}`, ""},
		{"size limit bad size", `resourceSize: {limits: [{apiGroups: ["*"], apiVersions: ["*"], resources: ["*"], size: lots}]}`, `resourceSize.limits[0].size: invalid value "lots" (want a quantity of bytes such as 100Ki)`},
		{"size limit missing size", `resourceSize: {limits: [{apiGroups: ["*"], apiVersions: ["*"], resources: ["*"]}]}`, `resourceSize.limits[0].size: required`},
		{"size limit zero", `resourceSize: {limits: [{apiGroups: ["*"], apiVersions: ["*"], resources: ["*"], size: "0"}]}`, `resourceSize.limits[0].size: "0" must be positive`},
		{"size limit empty lists", `resourceSize: {limits: [{size: 1Ki}]}`, `resourceSize.limits[0].apiGroups: must not be empty (use ["*"] for all)`},
		{"size limit empty version", `resourceSize: {limits: [{apiGroups: [a], apiVersions: [""], resources: [b], size: 1Ki}]}`, `resourceSize.limits[0].apiVersions[0]: must not be empty`},
		{"size limit subresource", `resourceSize: {limits: [{apiGroups: [a], apiVersions: [v1], resources: [shoots/status], size: 1Ki}]}`, `resourceSize.limits[0].resources[0]: invalid value "shoots/status": subresources are not limited`},
		{"count ok", `resourceSize: {counts: [{apiGroups: [core.gardener.cloud], apiVersions: ["*"], resources: [seeds, cloudprofiles], count: 0}]}`, ""},
		{"count missing", `resourceSize: {counts: [{apiGroups: [core.gardener.cloud], apiVersions: ["*"], resources: [seeds]}]}`, "resourceSize.counts[0].count: required"},
		{"count negative", `resourceSize: {counts: [{apiGroups: [core.gardener.cloud], apiVersions: ["*"], resources: [seeds], count: -1}]}`, "resourceSize.counts[0].count: -1 must not be negative"},
		{"count other group", `resourceSize: {counts: [{apiGroups: ["*"], apiVersions: ["*"], resources: [seeds], count: 1}]}`,
			`resourceSize.counts[0].apiGroups[0]: cannot count resources of group "*" (want core.gardener.cloud)`},

		// resourceAdmission: gardener-admission-controller's section, pasted.
		{"resourceAdmission pasted from Gardener", `resourceAdmission:
  operationMode: log
  limits:
  - apiGroups: ["core.gardener.cloud"]
    apiVersions: ["*"]
    resources: ["shoots", "plants"]
    size: 100k
  - apiGroups: [""]
    apiVersions: ["v1"]
    resources: ["secrets"]
    size: 1048576
  - apiGroups: ["core.gardener.cloud"]
    apiVersions: ["v1beta1"]
    resources: ["projects"]
    count: 500
  unrestrictedSubjects:
  - kind: Group
    name: gardener.cloud:system:seeds
    apiGroup: rbac.authorization.k8s.io
  - kind: User
    name: admin
    apiGroup: rbac.authorization.k8s.io
  - kind: ServiceAccount
    name: "*"
    namespace: garden`, ""},
		{"resourceAdmission with resourceSize", "resourceAdmission: {limits: []}\nresourceSize: {operationMode: log}", "resourceAdmission: cannot be combined with resourceSize"},
		{"resourceAdmission operationMode", "resourceAdmission: {limits: [], operationMode: warn}", `resourceAdmission.operationMode: unsupported value "warn" (want block or log)`},
		{"resourceAdmission user without apiGroup", "resourceAdmission: {limits: [], unrestrictedSubjects: [{kind: User, name: a}]}",
			`resourceAdmission.unrestrictedSubjects[0].apiGroup: unsupported value "" for kind User (want rbac.authorization.k8s.io)`},
		{"resourceAdmission service account with apiGroup", "resourceAdmission: {limits: [], unrestrictedSubjects: [{kind: ServiceAccount, name: a, namespace: b, apiGroup: rbac.authorization.k8s.io}]}",
			`resourceAdmission.unrestrictedSubjects[0].apiGroup: "rbac.authorization.k8s.io" must be empty for kind ServiceAccount`},
		{"resourceAdmission subject kind", "resourceAdmission: {limits: [], unrestrictedSubjects: [{kind: Team, name: a}]}",
			`resourceAdmission.unrestrictedSubjects[0].kind: unsupported value "Team" (want User, Group or ServiceAccount)`},
		{"resourceAdmission subject unknown field", "resourceAdmission: {limits: [], unrestrictedSubjects: [{kind: User, name: a, apiGroup: rbac.authorization.k8s.io, uid: x}]}",
			"resourceAdmission.unrestrictedSubjects[0].uid: unknown field"},
		{"resourceAdmission limit without size or count", `resourceAdmission: {limits: [{apiGroups: ["*"], apiVersions: ["*"], resources: ["*"]}]}`, "resourceAdmission.limits[0]: needs size, count or both"},
		{"resourceAdmission size zero", `resourceAdmission: {limits: [{apiGroups: ["*"], apiVersions: ["*"], resources: ["*"], size: "0"}]}`, ""},
		{"resourceAdmission size negative", `resourceAdmission: {limits: [{apiGroups: ["*"], apiVersions: ["*"], resources: ["*"], size: "-1Ki"}]}`, `resourceAdmission.limits[0].size: "-1Ki" must not be negative`},
		{"resourceAdmission size garbage", `resourceAdmission: {limits: [{apiGroups: ["*"], apiVersions: ["*"], resources: ["*"], size: lots}]}`, `resourceAdmission.limits[0].size: invalid value "lots" (want a quantity of bytes such as 100Ki)`},
		{"resourceAdmission limit unknown field", `resourceAdmission: {limits: [{apiGroups: ["*"], apiVersions: ["*"], resources: ["*"], size: 1Ki, bytes: 1}]}`, "resourceAdmission.limits[0].bytes: unknown field"},

		{"pendingShoots.bindMode binding", "pendingShoots: {bindMode: binding}", ""},
		{"pendingShoots.bindMode update", "pendingShoots: {bindMode: update}", ""},
		{"pendingShoots.bindMode unknown", "pendingShoots: {bindMode: patch}", `pendingShoots.bindMode: unsupported value "patch" (want "binding" or "update")`},
		{"pendingShoots.enabled string", "pendingShoots: {enabled: 'yes'}", "pendingShoots.enabled: cannot use string here (want true or false)"},
		{"pendingShoots.backoffBase zero", "pendingShoots: {backoffBase: 0s}", "pendingShoots.backoffBase: 0s must be positive"},
		{"pendingShoots.backoffBase negative", "pendingShoots: {backoffBase: -1s}", "pendingShoots.backoffBase: -1s must be positive"},
		{"pendingShoots.backoffBase garbage", "pendingShoots: {backoffBase: soon}", `pendingShoots.backoffBase: invalid value "soon" (want a duration such as "30s")`},
		{"pendingShoots.backoffMax below base", "pendingShoots: {backoffBase: 10s, backoffMax: 5s}", "pendingShoots.backoffMax: 5s must not be less than backoffBase 10s"},
		{"pendingShoots.backoffMax below default base", "pendingShoots: {backoffMax: 500ms}", "pendingShoots.backoffMax: 500ms must not be less than backoffBase 1s"},
		{"pendingShoots.backoffMax garbage", "pendingShoots: {backoffMax: 5}", `pendingShoots.backoffMax: invalid value 5 (want a duration such as "30s")`},
		{"pendingShoots.backoff equal", "pendingShoots: {backoffBase: 2s, backoffMax: 2s}", ""},
		{"pendingShoots.conflictBackoffMax zero", "pendingShoots: {conflictBackoffMax: 0s}", "pendingShoots.conflictBackoffMax: 0s must be positive"},
		{"pendingShoots.conflictBackoffMax garbage", "pendingShoots: {conflictBackoffMax: soon}", `pendingShoots.conflictBackoffMax: invalid value "soon" (want a duration such as "5s")`},
		{"pendingShoots.conflictBackoffMax above backoffMax", "pendingShoots: {backoffMax: 10s, conflictBackoffMax: 11s}", "pendingShoots.conflictBackoffMax: 11s must not be more than backoffMax 10s"},
		{"pendingShoots.conflictBackoffMax defaulted below a short backoffMax", "pendingShoots: {backoffMax: 2s}", ""},
		{"pendingShoots.workers negative", "pendingShoots: {workers: -1}", "pendingShoots.workers: -1 must be at least 1"},
		{"pendingShoots.workers many", "pendingShoots: {workers: 50}", ""},

		{"leaderElection.namespace ok", "leaderElection: {namespace: seedwarden}", ""},
		{"leaderElection.namespace bad", "leaderElection: {namespace: Seedwarden}", `leaderElection.namespace: invalid value "Seedwarden": a lowercase RFC 1123 label`},
		{"leaderElection.id dotted", "leaderElection: {id: pending.seedwarden.io}", ""},
		{"leaderElection.id bad", "leaderElection: {id: 'my lease'}", `leaderElection.id: invalid value "my lease" (the name of a Lease): a lowercase RFC 1123 subdomain`},
		{"leaderElection.enabled false", "leaderElection: {enabled: false}", ""},

		// Names and weights are placement's: cmd/webhook's TestConfigChecks.
		{"scoring ok", "scoring: {scorers: [{name: LeastAllocated, weight: 5}, {name: RegionDistance, weight: 1}], defaultCapacity: 100}", ""},
		{"scoring no defaultCapacity", "scoring: {scorers: [{name: MostAllocated, weight: 1}]}", ""},
		{"scoring empty list", "scoring: {scorers: []}", "scoring.scorers: empty (name at least one scorer, or leave scoring out for Gardener's least-used rule)"},
		{"scoring no list", "scoring: {defaultCapacity: 10}", "scoring.scorers: empty"},
		{"scoring empty block", "scoring: {}", "scoring.scorers: empty"},
		{"scoring duplicate", "scoring: {scorers: [{name: LeastShoots, weight: 1}, {name: RegionDistance, weight: 2}, {name: LeastShoots, weight: 3}]}",
			`scoring.scorers[2].name: duplicate scorer "LeastShoots" (already scoring.scorers[0])`},
		{"scoring negative defaultCapacity", "scoring: {scorers: [{name: LeastAllocated, weight: 1}], defaultCapacity: -1}", "scoring.defaultCapacity: -1 must not be negative"},
		{"scoring weight not a number", "scoring: {scorers: [{name: LeastAllocated, weight: heavy}]}", "scoring.scorers.weight: cannot use string here (want an integer)"},
		{"scoring unknown field", "scoring: {scorers: [{name: LeastAllocated, wieght: 1}]}", "scoring.scorers[0].wieght: unknown field"},

		{"unknown top-level field", "stratgy: SameRegion", "stratgy: unknown field"},
		{"unknown nested field", "server: {prot: 1}", "server.prot: unknown field"},
		{"field names are case-sensitive", "Strategy: SameRegion", "Strategy: unknown field"},
		{"duplicate field", "strategy: SameRegion\nstrategy: MinimalDistance", `line 4: key "strategy" already set in map`},
		{"wrong type for section", "server: 9443", "server: cannot use number here (want an object)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(header + tc.yaml + "\n"))
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestAPIVersionAndKind(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		want       []string
	}{
		{"missing both", "strategy: SameRegion", []string{`apiVersion: unsupported value "" (want config.seedwarden.io/v1alpha1)`, `kind: unsupported value "" (want WebhookConfiguration)`}},
		{"wrong version", "apiVersion: config.seedwarden.io/v1\nkind: WebhookConfiguration", []string{`apiVersion: unsupported value "config.seedwarden.io/v1" (want config.seedwarden.io/v1alpha1)`}},
		{"wrong kind", "apiVersion: config.seedwarden.io/v1alpha1\nkind: Configuration", []string{`kind: unsupported value "Configuration" (want WebhookConfiguration)`}},
		{"empty file", "", []string{"the file is empty"}},
		{"not a mapping", "- a\n- b", []string{"(top level): cannot use array here (want an object)"}},
		{"not YAML", "a: [b", []string{"not valid YAML or JSON"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.yaml))
			require.Error(t, err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestValidateReportsAllProblems(t *testing.T) {
	_, err := Parse([]byte(header + `
strategy: Nearest
networkOverlap: Overlap
server:
  port: 70000
log:
  level: loud
`))
	var cfgErr *Error
	require.ErrorAs(t, err, &cfgErr)
	assert.Equal(t, []string{
		`strategy: unsupported value "Nearest" (want SameRegion or MinimalDistance)`,
		`networkOverlap: unsupported value "Overlap" (want Disjoint or AllowIPv4)`,
		`server.port: 70000 out of range 1-65535`,
		`log.level: unsupported value "loud" (want debug, info, warn or error)`,
	}, cfgErr.Problems)
	assert.True(t, strings.HasPrefix(err.Error(), "invalid configuration:\n  strategy: "), err.Error())

	// Every unknown field is reported, not just the first, and invalid
	// values with them.
	_, err = Parse([]byte(header + "a: 1\nserver: {b: 2, port: 0x7fffffff}\nlog: {format: xml}\n"))
	require.ErrorAs(t, err, &cfgErr)
	assert.ElementsMatch(t, []string{
		"a: unknown field",
		"server.b: unknown field",
		"server.port: 2147483647 out of range 1-65535",
		`log.format: unsupported value "xml" (want json or console)`,
	}, cfgErr.Problems)
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	require.NoError(t, os.WriteFile(good, []byte(header+"strategy: SameRegion\n"), 0o600))
	c, err := Load(good)
	require.NoError(t, err)
	assert.Equal(t, StrategySameRegion, c.Strategy)

	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte(header+"strategy: Nearest\n"), 0o600))
	_, err = Load(bad)
	require.Error(t, err)
	assert.Equal(t, bad+`: invalid configuration: strategy: unsupported value "Nearest" (want SameRegion or MinimalDistance)`, err.Error())
	var cfgErr *Error
	assert.ErrorAs(t, err, &cfgErr)

	_, err = Load(filepath.Join(dir, "missing.yaml"))
	assert.True(t, errors.Is(err, os.ErrNotExist))
}

// TestExamples keeps the shipped example configurations valid.
func TestExamples(t *testing.T) {
	for _, f := range []string{"config.yaml", "config-dev.yaml"} {
		t.Run(f, func(t *testing.T) {
			c, err := Load(filepath.Join("..", "..", "examples", f))
			require.NoError(t, err)
			if f == "config.yaml" {
				// The reference example spells out every default.
				assert.Equal(t, Default(), c)
			}
		})
	}
}

func FuzzLoad(f *testing.F) {
	for _, s := range []string{
		header,
		header + "strategy: SameRegion\nreservationTTL: 1m\nserver: {port: 70000}\n",
		header + "server: {prot: 1}\nlog: {level: [a]}\n",
		header + "reservationTTL: {a: b}\n",
		`{"apiVersion":"config.seedwarden.io/v1alpha1","kind":"WebhookConfiguration","metrics":{"bindAddress":"[::1]:0"}}`,
		"- a\n- b\n",
		"",
		"null",
		"a: &a [*a]",
	} {
		f.Add([]byte(s))
	}
	if data, err := os.ReadFile(filepath.Join("..", "..", "examples", "config.yaml")); err == nil {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data)
		if err == nil {
			// Whatever parses is valid and complete.
			require.NoError(t, c.Validate())
			require.NotZero(t, c.Server.Port)
			require.NotEmpty(t, c.Log.Level)
		}
	})
}

func TestCacheMaxStaleness(t *testing.T) {
	c := Default()
	assert.Equal(t, DefaultMaxStaleness, c.Cache.MaxStaleness.Duration)
	require.NoError(t, c.Validate())

	c, err := Parse([]byte("apiVersion: " + APIVersion + "\nkind: " + Kind + "\ncache:\n  maxStaleness: 0s\n"))
	require.NoError(t, err)
	assert.Zero(t, c.Cache.MaxStaleness.Duration, "0s disables the bound")

	_, err = Parse([]byte("apiVersion: " + APIVersion + "\nkind: " + Kind + "\ncache:\n  maxStaleness: 2h\n"))
	require.ErrorContains(t, err, "cache.maxStaleness")
	_, err = Parse([]byte("apiVersion: " + APIVersion + "\nkind: " + Kind + "\ncache:\n  maxStaleness: -1s\n"))
	require.ErrorContains(t, err, "cache.maxStaleness")
}
