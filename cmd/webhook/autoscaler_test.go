package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seedwarden/seedwarden/internal/handlers"
)

// The controller gets the configuration's dry run, sync period, the
// webhooks' placement options and every headroom profile by name.
func TestNewAutoscalerFromConfig(t *testing.T) {
	cfg, err := loadConfig(writeFile(t, "config.yaml", configHeader+fmt.Sprintf(`
strategy: MinimalDistance
autoscaler: {enabled: true, dryRun: true, syncPeriod: 2m}
headroom: {profiles: [{name: eu, shoot: %s}, {name: us, shoot: %s}]}
`, yamlToJSON(t, "../../examples/shoot.yaml"), yamlToJSON(t, "../../examples/shoot.yaml"))))
	require.NoError(t, err)
	synced := false
	r, err := newAutoscaler(cfg, autoscalerDeps{store: newStore(cfg, nil), synced: func() bool { return synced }, staleness: handlers.StalenessGuard{}}, nil)
	require.NoError(t, err)
	assert.True(t, r.DryRun)
	assert.Equal(t, 2*time.Minute, r.SyncPeriod)
	assert.Equal(t, placementOptions(cfg), r.Options)
	require.Len(t, r.Profiles, 2)
	require.NotNil(t, r.Profiles["eu"])
	assert.Equal(t, "Shoot", r.Profiles["eu"].Kind)
	assert.Nil(t, r.Pending, "no pending Shoots without the watch's copies")
	assert.False(t, r.Ready(), "not before the informers synced")
	synced = true
	assert.True(t, r.Ready())
	assert.NotNil(t, r.Snapshot())
}
