package seedreserve

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Client-side rate limits of NewClient. A reservation costs two requests
// (a dry run one); a burst for one seed on one replica shares them, so these
// only matter for sustained rates across many seeds.
const (
	ClientQPS   = 50
	ClientBurst = 100
)

// NewClient returns a client for New that talks to the API server directly
// (no informer cache) and knows ConfigMaps only. cfg is copied; its rate
// limits are raised to ClientQPS/ClientBurst when lower (a negative QPS,
// no client-side limit, stays), so that reservations do not queue behind
// the defaults of client-go (5/10) or controller-runtime (20/30).
func NewClient(cfg *rest.Config) (client.Client, error) {
	cfg = rest.CopyConfig(cfg)
	if cfg.RateLimiter == nil && cfg.QPS >= 0 && cfg.QPS < ClientQPS {
		cfg.QPS = ClientQPS
		cfg.Burst = max(cfg.Burst, ClientBurst)
	}
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("reservation client: %w", err)
	}
	return c, nil
}
