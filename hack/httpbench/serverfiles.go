package main

// The files the server under test starts from: its landscape and its
// configuration.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/seedwarden/seedwarden/internal/landscapegen"
)

// writeLandscape writes landscapegen.Landscape(seeds, shoots) as one List.
// JSON is YAML, and the webhook's landscape reader skips the YAML parser for
// it, so a large landscape loads in a fraction of the time.
func writeLandscape(path string, seeds, shoots int) error {
	objs := landscapegen.Landscape(seeds, shoots)
	items := make([]json.RawMessage, len(objs))
	for i, o := range objs {
		b, err := json.Marshal(o)
		if err != nil {
			return err
		}
		items[i] = b
	}
	data, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// ports of the real server.
type ports struct {
	webhook, metrics, health int
}

// configYAML is the configuration of the real server: defaults (those of a
// production deployment), but the ports, certDir and reservationTTL of the
// run, info-level JSON logs and reservation limits the run's placements
// never reach (every placement takes its reservation, as in a garden that
// is not under attack). With sizeLimit, a resourceSize limit for
// ConfigMaps is added, so that the resource-size webhook measures them.
func configYAML(p ports, certDir string, reservationTTL time.Duration, sizeLimit, placementMode string) string {
	s := fmt.Sprintf(`apiVersion: config.seedwarden.io/v1alpha1
kind: WebhookConfiguration
reservationTTL: %s
reservations:
  maxPerNamespace: 1000000
  maxTotal: 1000000
placement:
  mode: %s
server:
  port: %d
  certDir: %q
metrics:
  bindAddress: "127.0.0.1:%d"
health:
  bindAddress: "127.0.0.1:%d"
log:
  level: info
  format: json
`, reservationTTL, placementMode, p.webhook, certDir, p.metrics, p.health)
	if sizeLimit != "" {
		s += fmt.Sprintf(`resourceSize:
  limits:
  - apiGroups: [""]
    apiVersions: ["v1"]
    resources: ["configmaps"]
    size: %s
`, sizeLimit)
	}
	return s
}

func writeFile(dir, name, content string) (string, error) {
	path := filepath.Join(dir, name)
	return path, os.WriteFile(path, []byte(content), 0o644)
}
