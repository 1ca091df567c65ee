package config

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Capacity reporting: per-seed gauges labelled with Seed labels the operator
// allowlists (metrics.seedLabels), and headroom profiles, each a template
// Shoot whose free slots are counted in the background.

// Defaults and limits of the headroom block.
const (
	DefaultHeadroomInterval = 60 * time.Second
	MinHeadroomInterval     = time.Second
	MaxHeadroomInterval     = 24 * time.Hour
	DefaultHeadroomLimit    = 1000
	// MaxHeadroomLimit bounds a profile's limit: counting stops there, and
	// a seed without allocatable takes up to limit copies in one step.
	MaxHeadroomLimit = 1_000_000
)

// SeedLabelPrefix starts the Prometheus label of an allowlisted Seed label,
// as kube-state-metrics names its label_ labels.
const SeedLabelPrefix = "label_"

// SeedLabelName is the Prometheus label name of a Seed label key:
// SeedLabelPrefix and the key with every character outside [a-zA-Z0-9_]
// replaced by "_" (kube-state-metrics' rule), so
// seedmanagement.gardener.cloud/managed-seed-set becomes
// label_seedmanagement_gardener_cloud_managed_seed_set.
func SeedLabelName(key string) string {
	var b strings.Builder
	b.Grow(len(SeedLabelPrefix) + len(key))
	b.WriteString(SeedLabelPrefix)
	for _, r := range key {
		if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// SeedLabelNames are the Prometheus label names of metrics.seedLabels, in
// the same order.
func (c *Config) SeedLabelNames() []string {
	out := make([]string, len(c.Metrics.SeedLabels))
	for i, k := range c.Metrics.SeedLabels {
		out[i] = SeedLabelName(k)
	}
	return out
}

// Headroom configures the headroom gauges: how many more Shoots like each
// profile's template fit on the landscape right now.
type Headroom struct {
	// Interval is the least time between two computations (the webhook may
	// wait longer to stay within its CPU budget). Default: 60s; 1s to 24h.
	Interval Duration `json:"interval,omitempty"`
	// Profiles are the templates counted: at least one.
	Profiles []HeadroomProfile `json:"profiles"`
}

// HeadroomProfile is one template Shoot whose headroom is exported.
type HeadroomProfile struct {
	// Name is the value of the profile label: a DNS label, unique.
	Name string `json:"name"`
	// Limit is where counting stops (seeds without allocatable take any
	// number). Default: 1000; at most 1,000,000.
	Limit int `json:"limit,omitempty"`
	// AlertBelow, when set, is exported as
	// seedwarden_headroom_alert_threshold_shoots, which the shipped alert
	// compares the headroom with. Not negative, at most Limit.
	AlertBelow *int `json:"alertBelow,omitempty"`
	// Shoot is an inline core.gardener.cloud/v1beta1 Shoot manifest. It is
	// kept raw here (this package knows no Shoot); cmd/webhook decodes and
	// checks it.
	Shoot json.RawMessage `json:"shoot,omitempty"`
}

func (c *Config) applyHeadroomDefaults() {
	h := c.Headroom
	if h == nil {
		return
	}
	if !h.Interval.set {
		h.Interval = NewDuration(DefaultHeadroomInterval)
	}
	for i := range h.Profiles {
		setDefault(&h.Profiles[i].Limit, DefaultHeadroomLimit)
	}
}

// validateSeedLabels: every key non-empty and no two with the same
// Prometheus label name.
func (c *Config) validateSeedLabels(p *problems) {
	seen := map[string]int{}
	for i, k := range c.Metrics.SeedLabels {
		path := "metrics.seedLabels[" + strconv.Itoa(i) + "]"
		if strings.TrimSpace(k) == "" {
			p.add(path, "empty (want a Seed label key such as environment)")
			continue
		}
		name := SeedLabelName(k)
		if j, dup := seen[name]; dup {
			p.add(path, "%q is exported as %s like metrics.seedLabels[%d] %q", k, name, j, c.Metrics.SeedLabels[j])
			continue
		}
		seen[name] = i
	}
}

// validateHeadroom checks what needs no knowledge of Shoots; the template
// itself is cmd/webhook's check.
func (c *Config) validateHeadroom(p *problems) {
	h := c.Headroom
	if h == nil {
		return
	}
	validateDurationRange(p, "headroom.interval", h.Interval, MinHeadroomInterval, MaxHeadroomInterval)
	if len(h.Profiles) == 0 {
		p.add("headroom.profiles", "empty (name at least one profile, or leave headroom out)")
	}
	seen := map[string]int{}
	for i, pr := range h.Profiles {
		path := "headroom.profiles[" + strconv.Itoa(i) + "]"
		if errs := validation.IsDNS1123Label(pr.Name); len(errs) > 0 {
			p.add(path+".name", "invalid value %q: %s", pr.Name, strings.Join(errs, "; "))
		} else if j, dup := seen[pr.Name]; dup {
			p.add(path+".name", "duplicate profile %q (already headroom.profiles[%d])", pr.Name, j)
		} else {
			seen[pr.Name] = i
		}
		if pr.Limit < 1 || pr.Limit > MaxHeadroomLimit {
			p.add(path+".limit", "%d out of range 1-%d", pr.Limit, MaxHeadroomLimit)
		}
		if a := pr.AlertBelow; a != nil && (*a < 0 || *a > pr.Limit) {
			p.add(path+".alertBelow", "%d out of range 0-%d (the profile's limit)", *a, pr.Limit)
		}
		if s := bytes.TrimSpace(pr.Shoot); len(s) == 0 || string(s) == "null" {
			p.add(path+".shoot", "missing (want an inline core.gardener.cloud/v1beta1 Shoot manifest)")
		}
	}
}
