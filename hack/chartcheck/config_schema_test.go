package chartcheck

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/strvals"
	"sigs.k8s.io/yaml"
)

// A bad config value is refused when the chart is rendered (helm template,
// helm install), naming the field, instead of rendering a ConfigMap the
// pods then exit 2 on. The values are given as `helm --set` parses them.
func TestChartRefusesBadConfig(t *testing.T) {
	tests := []struct {
		name, set string
		want      []string
	}{
		{"unknown field", "config.bogus=1", []string{"'/config'", "'bogus' not allowed"}},
		{"strategy outside its enum", "config.strategy=Nearest", []string{"'/config/strategy'", "'SameRegion', 'MinimalDistance'"}},
		{"both, as reported", "config.strategy=Nearest,config.bogus=1", []string{"'/config/strategy'", "'bogus' not allowed"}},
		{"unknown nested field", "config.server.prot=9443", []string{"'/config/server'", "'prot' not allowed"}},
		{"unknown field in a list entry", "config.capacity.unrestrictedSubjects[0].kind=User,config.capacity.unrestrictedSubjects[0].nam=x", []string{"'/config/capacity/unrestrictedSubjects/0'", "'nam' not allowed"}},
		{"subject kind", "config.binding.landscapeAllowedSubjects[0].kind=Robot", []string{"'/config/binding/landscapeAllowedSubjects/0/kind'", "'User', 'Group', 'ServiceAccount'"}},
		{"network overlap", "config.networkOverlap=Overlap", []string{"'/config/networkOverlap'", "'Disjoint', 'AllowIPv4'"}},
		{"coordination", "config.capacity.coordination=etcd", []string{"'/config/capacity/coordination'", "'local', 'apiserver'"}},
		{"pending bind mode", "config.pendingShoots.bindMode=patch", []string{"'/config/pendingShoots/bindMode'", "'binding', 'update'"}},
		{"operation mode", "config.resourceSize.operationMode=warn", []string{"'/config/resourceSize/operationMode'", "'block', 'log'"}},
		{"duration", "config.reservationTTL=30 seconds", []string{"'/config/reservationTTL'", "'30 seconds'"}},
		{"number where a string is", "config.log.level=3", []string{"'/config/log/level'", "want string"}},
		{"bound", "config.reservations.maxTotal=2000000", []string{"'/config/reservations/maxTotal'", "maximum"}},
		{"kind", "config.kind=SchedulerConfiguration", []string{"'/config/kind'", "'WebhookConfiguration'"}},
	}
	ch, err := LoadChart(filepath.Join(root(t), ChartDir))
	require.NoError(t, err)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			values := map[string]any{}
			require.NoError(t, strvals.ParseInto(tt.set, values))
			_, err := RenderChart(ch, values)
			require.Error(t, err, "--set %s", tt.set)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

// The chart's own config values render, and so does every example
// configuration given as the chart's config: the schema refuses nothing
// the webhook accepts there.
func TestChartRendersExampleConfigs(t *testing.T) {
	ch, err := LoadChart(filepath.Join(root(t), ChartDir))
	require.NoError(t, err)
	_, err = RenderChart(ch, nil)
	require.NoError(t, err, "default values")

	files, err := filepath.Glob(filepath.Join(root(t), "examples", "config*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			require.NoError(t, err)
			var cfg map[string]any
			require.NoError(t, yaml.Unmarshal(data, &cfg))
			// One replica: the examples keep the local capacity coordination,
			// which the chart refuses with more.
			_, err = RenderChart(ch, map[string]any{"config": cfg, "replicas": 1})
			require.NoError(t, err)
		})
	}
}
