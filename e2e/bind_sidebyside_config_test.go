package e2e

import (
	"os"
	"path/filepath"
	"strings"
)

// The configuration seedwarden runs with in TestBindSideBySide's phases:
// the suite's (same key, ports, certificates, Lease, capacity through the
// API server), with what the suite sets for its own tests put back to what
// deploy/manifests/config.yaml ships, since the issue compares with the
// shipped configuration.

// benchConfigChanges are {suite's, shipped} pieces of the configuration:
// the reservation TTL and the retry controller's backoff as shipped, the
// leader-only controllers the shipped file leaves off (autoscaler,
// SeedDrains, audit: each would add its own API load to seedwarden's
// phases), and no resource-size limit (the bench registers no size
// webhook).
func benchConfigChanges() [][2]string {
	off := func(block string) [2]string {
		return [2]string{block, strings.Replace(block, "enabled: true", "enabled: false", 1)}
	}
	changes := [][2]string{
		{"\nreservationTTL: 5s\n", "\nreservationTTL: 30s\n"},
		{"  backoffBase: 30s\n", "  backoffBase: 1s\n"},
		off(autoscalerConfig), off(seedDrainConfig), off(auditConfig),
	}
	for _, c := range sizeLimitCandidates {
		changes = append(changes, [2]string{c, ""})
	}
	return changes
}

// writeBenchConfig writes the suite's configuration with the changes it
// holds applied, and returns its path and those changes (for the extra
// replicas' configurations).
func (st *suite) writeBenchConfig() (string, [][2]string, error) {
	raw, err := os.ReadFile(st.configPath)
	if err != nil {
		return "", nil, err
	}
	cfg := string(raw)
	var applied [][2]string
	for _, c := range benchConfigChanges() {
		if strings.Contains(cfg, c[0]) {
			cfg = strings.Replace(cfg, c[0], c[1], 1)
			applied = append(applied, c)
		}
	}
	path := filepath.Join(st.work, "config-bench.yaml")
	return path, applied, os.WriteFile(path, []byte(cfg), 0o644)
}

// startWebhookWith starts the suite's webhook process with another
// configuration file (startWebhook, which restarts it, goes back to the
// suite's).
func (st *suite) startWebhookWith(configPath string) error {
	p, err := st.startProcess(configPath, st.logPath)
	if err != nil {
		return err
	}
	st.procMu.Lock()
	st.proc = p
	st.procMu.Unlock()
	return nil
}
