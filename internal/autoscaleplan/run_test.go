package autoscaleplan_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seedwarden/seedwarden/internal/autoscaleplan"
	"github.com/seedwarden/seedwarden/internal/autoscalingapi"
	"github.com/seedwarden/seedwarden/internal/placement"
	"github.com/seedwarden/seedwarden/internal/seedscale"
)

// A report is complete only when no SeedAutoscaler is short and every
// metric is met: a metric more seeds would not help is not met either.
func TestReportComplete(t *testing.T) {
	met := seedscale.MetricResult{Met: true}
	entry := func(short bool, ms ...seedscale.MetricResult) autoscaleplan.Entry {
		return autoscaleplan.Entry{Recommendation: seedscale.Recommendation{Short: short, Metrics: ms}}
	}
	tests := []struct {
		name string
		e    []autoscaleplan.Entry
		want bool
	}{
		{"none", nil, true},
		{"all met", []autoscaleplan.Entry{entry(false, met, met), entry(false, met)}, true},
		{"short", []autoscaleplan.Entry{entry(false, met), entry(true, met)}, false},
		{"would not help", []autoscaleplan.Entry{entry(false, met, seedscale.MetricResult{WouldNotHelp: "taint"})}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := autoscaleplan.Report{Autoscalers: tc.e}
			assert.Equal(t, tc.want, r.Complete())
		})
	}
}

func TestRunNamesAMissingSet(t *testing.T) {
	sa := &autoscalingapi.SeedAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "garden"}}
	sa.Spec.ScaleTargetRef.Name = "nope"
	_, err := autoscaleplan.Run(autoscaleplan.Input{Snapshot: &placement.Snapshot{}, Autoscalers: []*autoscalingapi.SeedAutoscaler{sa}})
	require.EqualError(t, err, "SeedAutoscaler garden/a: no ManagedSeedSet garden/nope")
}
