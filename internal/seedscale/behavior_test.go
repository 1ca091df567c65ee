package seedscale

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"k8s.io/utils/ptr"

	"github.com/seedwarden/seedwarden/internal/autoscalingapi"
)

var t0 = time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)

func TestBehaveDefaults(t *testing.T) {
	type step struct {
		at          time.Duration
		current     int32
		recommended int32
		want        int32
		limited     string
		scaled      bool // the controller wrote want
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"scale-up is prompt, at most max(2 seeds, 50%) per 5 minutes", []step{
			{0, 3, 9, 5, "scale-up policy: at most 2 seeds per 5m0s", true},
			{time.Minute, 5, 9, 5, "scale-up policy: at most 2 seeds per 5m0s", false},
			{5*time.Minute + time.Second, 5, 9, 8, "scale-up policy: at most 50% per 5m0s", true},
		}},
		{"50% wins over 2 seeds on a large set", []step{
			{0, 10, 30, 15, "scale-up policy: at most 50% per 5m0s", true},
		}},
		{"scale-down waits for the 30-minute window, then one seed per 10 minutes", []step{
			{0, 5, 5, 5, "", false},
			{10 * time.Minute, 5, 3, 5, "scale-down stabilization window of 30m0s", false},
			{30*time.Minute + time.Second, 5, 3, 4, "scale-down policy: at most 1 seeds per 10m0s", true},
			{35 * time.Minute, 4, 3, 4, "scale-down policy: at most 1 seeds per 10m0s", false},
			{41 * time.Minute, 4, 3, 3, "", true},
		}},
		{"a higher recommendation within the window holds a scale-down back", []step{
			{0, 5, 3, 5, "scale-down stabilization window of 30m0s", false},
			{20 * time.Minute, 5, 5, 5, "", false},
			{31 * time.Minute, 5, 3, 5, "scale-down stabilization window of 30m0s", false},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := &History{}
			for i, s := range c.steps {
				now := t0.Add(s.at)
				d := Behave(nil, h, s.current, s.recommended, now)
				assert.Equal(t, Decision{Replicas: s.want, Limited: s.limited}, d, "step %d", i)
				if s.scaled {
					h.Scales = append(h.Scales, Scale{At: now, From: s.current, To: d.Replicas})
				}
			}
		})
	}
}

func TestBehaveConfigured(t *testing.T) {
	seeds := func(n, period int32) autoscalingapi.ScalingPolicy {
		return autoscalingapi.ScalingPolicy{Type: autoscalingapi.SeedsScalingPolicy, Value: n, PeriodSeconds: period}
	}
	cases := []struct {
		name                       string
		b                          *autoscalingapi.Behavior
		current, recommended, want int32
		limited                    string
	}{
		{"scale-up disabled", &autoscalingapi.Behavior{ScaleUp: &autoscalingapi.ScalingRules{SelectPolicy: ptr.To(autoscalingapi.DisabledPolicySelect)}},
			3, 6, 3, "scale-up is disabled (selectPolicy Disabled)"},
		{"a fresh history holds a scale-down for the default window", nil, 5, 3, 5, "scale-down stabilization window of 30m0s"},
		{"Min picks the smaller step", &autoscalingapi.Behavior{ScaleUp: &autoscalingapi.ScalingRules{
			SelectPolicy: ptr.To(autoscalingapi.MinChangePolicySelect), Policies: []autoscalingapi.ScalingPolicy{seeds(1, 60), seeds(3, 60)}}},
			3, 9, 4, "scale-up policy: at most 1 seeds per 1m0s"},
		{"no scale-down window: immediate, one step", &autoscalingapi.Behavior{ScaleDown: &autoscalingapi.ScalingRules{
			StabilizationWindowSeconds: ptr.To[int32](0), Policies: []autoscalingapi.ScalingPolicy{seeds(2, 60)}}},
			6, 1, 4, "scale-down policy: at most 2 seeds per 1m0s"},
		{"Percent down rounds the step up: 50% of 5 is 3 seeds", &autoscalingapi.Behavior{ScaleDown: &autoscalingapi.ScalingRules{
			StabilizationWindowSeconds: ptr.To[int32](0), Policies: []autoscalingapi.ScalingPolicy{
				{Type: autoscalingapi.PercentScalingPolicy, Value: 50, PeriodSeconds: 60}}}},
			5, 0, 2, "scale-down policy: at most 50% per 1m0s"},
		{"Percent up allows at least one seed", &autoscalingapi.Behavior{ScaleUp: &autoscalingapi.ScalingRules{
			Policies: []autoscalingapi.ScalingPolicy{{Type: autoscalingapi.PercentScalingPolicy, Value: 10, PeriodSeconds: 60}}}},
			2, 5, 3, "scale-up policy: at most 10% per 1m0s"},
		{"unbounded enough: the recommendation", &autoscalingapi.Behavior{ScaleDown: &autoscalingapi.ScalingRules{
			StabilizationWindowSeconds: ptr.To[int32](0), Policies: []autoscalingapi.ScalingPolicy{seeds(10, 60)}}},
			6, 2, 2, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := Behave(c.b, &History{}, c.current, c.recommended, t0)
			assert.Equal(t, Decision{Replicas: c.want, Limited: c.limited}, d)
		})
	}
}

// History keeps only what a window or period still looks at.
func TestBehavePrunesHistory(t *testing.T) {
	h := &History{}
	for i := range 100 {
		Behave(nil, h, 3, 3, t0.Add(time.Duration(i)*time.Minute))
	}
	assert.Len(t, h.Recommendations, 30, "the 30-minute scale-down window, its start left out")
}

func TestWithPending(t *testing.T) {
	tests := []struct {
		name    string
		d       Decision
		current int32
		rec     Recommendation
		want    Decision
	}{
		{"pending need more than the policy allows", Decision{Replicas: 3, Limited: "policy"}, 1, Recommendation{Desired: 6, ForPending: 6}, Decision{Replicas: 6}},
		{"the metrics' rest stays limited", Decision{Replicas: 3, Limited: "policy"}, 1, Recommendation{Desired: 8, ForPending: 5}, Decision{Replicas: 5, Limited: "policy"}},
		{"behavior already allows it", Decision{Replicas: 6}, 1, Recommendation{Desired: 6, ForPending: 4}, Decision{Replicas: 6}},
		{"nothing pending beyond current", Decision{Replicas: 2, Limited: "window"}, 2, Recommendation{Desired: 4, ForPending: 2}, Decision{Replicas: 2, Limited: "window"}},
		{"a scale-down is left alone", Decision{Replicas: 4}, 5, Recommendation{Desired: 3, ForPending: 3}, Decision{Replicas: 4}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, WithPending(tc.d, tc.current, tc.rec))
		})
	}
}
