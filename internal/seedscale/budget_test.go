package seedscale

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/autoscalingapi"
)

var errBudget = errors.New("budget spent")

// stopAfter is an Input.Stop that lets n steps through, then stops, and
// counts the calls.
func stopAfter(n int, calls *int) func() error {
	return func() error {
		*calls++
		if *calls > n {
			return errBudget
		}
		return nil
	}
}

// A recommendation stops at the first step its Stop refuses, whatever is
// left to do, and returns no result: the steps are counted, not timed.
func TestRecommendStopsWhenStopSays(t *testing.T) {
	w := &world{model: seed("model", "eu-west-1", 2, true)}
	w.seeds = []*api.Seed{seed("set-0", "eu-west-1", 2, true)}
	w.pending = shoots("pending", "eu-west-1", "", 40)
	in := w.input(spec(1, 1000, utilization(50), averageValue(1)))

	var unbounded int
	in.Stop = stopAfter(1<<30, &unbounded)
	full, err := Recommend(in)
	require.NoError(t, err)
	require.Greater(t, full.Desired, int32(1))
	require.Greater(t, unbounded, 4, "the full recommendation takes several steps")

	for _, budget := range []int{0, 1, 3, unbounded - 1} {
		t.Run(fmt.Sprint(budget), func(t *testing.T) {
			var calls int
			in.Stop = stopAfter(budget, &calls)
			rec, err := Recommend(in)
			var stopped *StoppedError
			require.ErrorAs(t, err, &stopped)
			assert.ErrorIs(t, err, errBudget)
			assert.Equal(t, budget, stopped.Steps)
			assert.Equal(t, budget+1, calls, "no step after the refused one")
			assert.Zero(t, rec.Desired, "no half-decision")
			assert.Contains(t, err.Error(), fmt.Sprintf("stopped after %d simulations and metric readings", budget))
		})
	}
}

// A spec past the bounds is refused before anything is computed, naming
// the field and its value.
func TestRecommendRefusesSpecPastBounds(t *testing.T) {
	w := &world{model: seed("model", "eu-west-1", 2, true), seeds: []*api.Seed{seed("set-0", "eu-west-1", 2, true)}}
	many := make([]autoscalingapi.MetricSpec, autoscalingapi.MaxMetrics+1)
	for i := range many {
		many[i] = utilization(50)
	}
	big, err := json.Marshal(map[string]any{"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
		"metadata": map[string]any{"annotations": map[string]string{"pad": string(make([]byte, autoscalingapi.MaxInlineShootBytes))}}})
	require.NoError(t, err)
	inline := autoscalingapi.MetricSpec{Type: autoscalingapi.HeadroomMetricSourceType, Headroom: &autoscalingapi.HeadroomMetricSource{
		Shoot: &runtime.RawExtension{Raw: big}, MinShoots: 1,
	}}
	for name, tc := range map[string]struct {
		spec *autoscalingapi.SeedAutoscalerSpec
		want string
	}{
		"metrics":      {spec(1, 3, many...), fmt.Sprintf("spec.metrics: %d metrics: at most %d", autoscalingapi.MaxMetrics+1, autoscalingapi.MaxMetrics)},
		"inline shoot": {spec(1, 3, utilization(50), inline), fmt.Sprintf("spec.metrics[1].headroom.shoot: %d bytes of JSON: at most %d", len(big), autoscalingapi.MaxInlineShootBytes)},
	} {
		t.Run(name, func(t *testing.T) {
			in := w.input(tc.spec)
			var calls int
			in.Stop = stopAfter(1<<30, &calls)
			_, err := Recommend(in)
			require.Error(t, err)
			assert.Equal(t, tc.want, err.Error())
			assert.Zero(t, calls, "nothing computed")
		})
	}
}
