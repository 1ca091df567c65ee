package api

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSelfHostedPool(t *testing.T) {
	tests := []struct {
		name, workers string
		pool          string
		ok            bool
	}{
		{"no workers", `[]`, "", false},
		{"no control plane", `[{"name":"a"},{"name":"b","zones":["z1"]}]`, "", false},
		{"null control plane", `[{"name":"a","controlPlane":null}]`, "", false},
		{"empty control plane", `[{"name":"a"},{"name":"cp","controlPlane":{}}]`, "cp", true},
		{"control plane with settings", `[{"name":"cp","controlPlane":{"backup":{"provider":"aws"},"exposure":{"dns":{}}}},{"name":"b","controlPlane":{}}]`, "cp", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s Shoot
			require.NoError(t, json.Unmarshal([]byte(`{"spec":{"provider":{"type":"aws","workers":`+tt.workers+`}}}`), &s))
			pool, ok := SelfHostedPool(&s)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.pool, pool)
			assert.Equal(t, s, *s.DeepCopy(), "deepcopy keeps controlPlane")
		})
	}
}
