package config

import (
	"strings"
	"time"
)

// Limits of placement.tokenTTL.
const (
	DefaultTokenTTL = 2 * time.Minute
	MinTokenTTL     = 10 * time.Second
	MaxTokenTTL     = time.Hour
)

// Placement configures the token with which the mutating webhook marks its
// own placements (annotation seedwarden.io/placement), so the validating
// webhooks recognise them on every replica.
type Placement struct {
	// KeyFile holds the HMAC key shared by all replicas, e.g. key "key" of
	// the Secret seedwarden-placement-key mounted as a file. Its content is
	// base64 (standard alphabet, padding optional, surrounding whitespace
	// ignored) when it decodes as such, otherwise taken as raw bytes; either
	// way it must give at least 32 bytes. Several base64 keys, one per line:
	// the first signs, all verify (placementtoken.ReadKeyFile reads them).
	// Required when serving a cluster with the binding webhook enabled;
	// without it, --landscape mode uses a random in-memory key (fine for one
	// replica only).
	KeyFile string `json:"keyFile,omitempty"`
	// TokenTTL is how long a token verifies. It only has to outlive one
	// admission (mutating, then validating webhooks) plus clock skew between
	// replicas, and in mode binding the retry controller's bind. Default:
	// 2m; 10s to 1h.
	TokenTTL Duration `json:"tokenTTL,omitempty"`
	// Mode is who writes spec.seedName. "binding": the mutating webhook
	// decides, reserves and announces the seed (annotations and a warning),
	// and the retry controller binds it at once through shoots/binding with
	// its own ServiceAccount; this works with gardener-apiserver, whose
	// ShootValidator refuses a CREATE that sets spec.seedName unless its
	// user may bind. "patch": the mutating webhook sets spec.seedName
	// itself (Shoots served from a CRD, or clusters whose Shoot creators
	// may bind). Default: binding.
	Mode string `json:"mode,omitempty"`
}

// Values of placement.mode: who writes spec.seedName.
const (
	// PlacementViaBinding: the retry controller, through shoots/binding,
	// after the mutating webhook announced the seed.
	PlacementViaBinding = "binding"
	// PlacementViaPatch: the mutating webhook, in its patch.
	PlacementViaPatch = "patch"
)

// Announce reports whether the mutating webhook leaves spec.seedName to the
// retry controller (placement.mode binding).
func (c *Config) Announce() bool { return c.Placement.Mode == PlacementViaBinding }

func (c *Config) applyPlacementDefaults() {
	if !c.Placement.TokenTTL.set {
		c.Placement.TokenTTL = NewDuration(DefaultTokenTTL)
	}
	setDefault(&c.Placement.Mode, PlacementViaBinding)
}

func (c *Config) validatePlacement(p *problems) {
	if c.Placement.KeyFile != "" && strings.TrimSpace(c.Placement.KeyFile) == "" {
		p.add("placement.keyFile", "invalid value %q (want a file path)", c.Placement.KeyFile)
	}
	validateDurationRange(p, "placement.tokenTTL", c.Placement.TokenTTL, MinTokenTTL, MaxTokenTTL)
	switch c.Placement.Mode {
	case PlacementViaBinding, PlacementViaPatch:
	default:
		p.add("placement.mode", "unsupported value %q (want %s or %s)", c.Placement.Mode, PlacementViaBinding, PlacementViaPatch)
	}
}
