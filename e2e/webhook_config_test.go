package e2e

import (
	"fmt"
	"os"
	"strings"

	"github.com/seedwarden/seedwarden/internal/config"
)

// The configuration file of the webhook processes the suite starts.

// sizeLimitConfig is the resource-size part of the webhook's configuration.
type sizeLimitConfig struct {
	limit int64 // bytes allowed for a Shoot
}

// shootSizeLimit is the e2e limit for Shoots: far above any Shoot the tests
// create (about 1 KiB), far below the oversized one.
const shootSizeLimit = 8 << 10

// sizeLimitCandidates are configuration snippets for the resource-size
// webhook (limit: 8Ki for shoots, operation mode block), in the order tried;
// the first that internal/config accepts is used. None accepted: the size
// test skips.
var sizeLimitCandidates = []string{
	`
resourceSize:
  operationMode: block
  limits:
  - apiGroups: ["core.gardener.cloud"]
    apiVersions: ["*"]
    resources: ["shoots"]
    size: 8Ki
`,
}

// capacityConfig reserves seed capacity through the API server, as
// deploy/manifests does (two replicas there), in the seedwarden namespace;
// TestCapacityAcrossReplicas runs three replicas on it.
const capacityConfig = `
capacity:
  coordination: apiserver
  reservationNamespace: seedwarden
`

// pendingConfig configures the retry controller of the webhook under test.
const pendingConfig = `
pendingShoots:
  enabled: true
  bindMode: update
  backoffBase: 30s
  backoffMax: 5m
leaderElection:
  namespace: seedwarden
  id: seedwarden-pending-shoots
`

// placementMode is placement.mode of every webhook process the suite starts
// (PlacementEnv).
var placementMode = config.PlacementViaBinding

// placementModeFromEnv reads PlacementEnv.
func placementModeFromEnv() (string, error) {
	switch v := os.Getenv(PlacementEnv); v {
	case "":
		return config.PlacementViaBinding, nil
	case config.PlacementViaBinding, config.PlacementViaPatch:
		return v, nil
	default:
		return "", fmt.Errorf("%s=%q: want %q or %q", PlacementEnv, v, config.PlacementViaBinding, config.PlacementViaPatch)
	}
}

// bindingMode reports whether the webhooks announce seeds and the retry
// controller binds them (placement.mode binding).
func bindingMode() bool { return placementMode == config.PlacementViaBinding }

// webhookConfig is the configuration file of the webhook under test.
//
// reservationTTL is short: a placement whose Shoot is then refused by a
// validating webhook holds its seed's slot until the TTL, which would skew
// the comparisons with `webhook simulate` for 30s (the default).
//
// Seed capacity is reserved through the API server (ConfigMaps in the
// seedwarden namespace), as in deploy/manifests.
//
// The retry controller binds by update (the CRDs have no binding
// subresource) and backs off from 30s: a pending Shoot bound within seconds
// of a Seed change was bound because of that change, not by a timed retry.
// Its Lease is in the seedwarden namespace, as in a real installation.
//
// Settings of webhooks still being written are added only when
// internal/config accepts them, so the suite runs while they land.
func webhookConfig(p ports, certDir, work string) (string, *sizeLimitConfig, error) {
	base := fmt.Sprintf(`apiVersion: %s
kind: %s
reservationTTL: 5s
server:
  port: %d
  certDir: %s
  # Only kube-apiserver's certificate is accepted (clientauth_test.go).
  clientAuth:
    caFile: %s
    allowedNames: [%s]
metrics:
  # Plain HTTP, so loopback only: the tests read it without a token.
  bindAddress: "127.0.0.1:%d"
  secure: false
health:
  bindAddress: "127.0.0.1:%d"
log:
  level: info
  format: json
`, config.APIVersion, config.Kind, p.webhook, certDir, clientCAFile(work), apiserverClientName, p.metrics, p.health)
	if _, err := config.Parse([]byte(base)); err != nil {
		return "", nil, fmt.Errorf("the e2e configuration is no longer valid (update e2e/webhook_config_test.go): %w", err)
	}
	accepted := func(snippet string) bool {
		_, err := config.Parse([]byte(base + snippet))
		return err == nil
	}
	// The HMAC key of the placement token (binding webhook) and the
	// placement mode (PlacementEnv).
	placement := fmt.Sprintf("placement:\n  keyFile: %s\n  mode: %s\n", placementKeyFile(work), placementMode)
	if _, err := config.Parse([]byte(base + placement)); err != nil {
		return "", nil, fmt.Errorf("placement configuration: %w", err)
	}
	base += placement
	// Capacity across replicas.
	if accepted(capacityConfig) {
		base += capacityConfig
	} else {
		logf("internal/config has no capacity.coordination: each replica reserves in its own memory")
	}
	// The retry controller (pendingShoots) and its leader election.
	pc := pendingConfig
	if onGardener() {
		// gardener-apiserver refuses any change of spec.seedName through the
		// Shoot itself: the retry controller binds through shoots/binding.
		pc = strings.Replace(pc, "bindMode: update", "bindMode: binding", 1)
	}
	if accepted(pc) {
		base += pc
	} else {
		logf("internal/config has no pendingShoots/leaderElection: the retry controller runs with its defaults, if at all")
	}
	// The autoscaler (its CRD: installAutoscalerCRD).
	if !accepted(autoscalerConfig) {
		return "", nil, fmt.Errorf("internal/config refuses the autoscaler block %q", autoscalerConfig)
	}
	base += autoscalerConfig
	// SeedDrains (their CRD: installSeedDrainCRD).
	if !accepted(seedDrainConfig) {
		return "", nil, fmt.Errorf("internal/config refuses the seedDrain block %q", seedDrainConfig)
	}
	base += seedDrainConfig
	// The placement audit (its CRD: installReportCRD).
	if !accepted(auditConfig) {
		return "", nil, fmt.Errorf("internal/config refuses the audit block %q", auditConfig)
	}
	base += auditConfig
	for _, c := range sizeLimitCandidates {
		if accepted(c) {
			logf("resource size limit configured: shoots %d bytes", shootSizeLimit)
			return base + c, &sizeLimitConfig{limit: shootSizeLimit}, nil
		}
	}
	logf("internal/config accepts none of the resource-size snippets: no size limit configured")
	return base, nil, nil
}
