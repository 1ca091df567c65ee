package placement

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// One unschedulable Shoot gets one count: the headline simulate prints and
// the admission warning's summary both count every seed of the landscape,
// while Message keeps Gardener's count of the seeds that reached its step.
func TestHeadlineCountsAsTheSummary(t *testing.T) {
	reasons := map[string]string{"a": "x", "b": "x", "c": "x", "d": "x", "e": "x", "f": "y"}
	tests := []struct {
		name string
		d    Decision
		want string
	}{
		{"candidates: Gardener's 0/1 is not the count", Decision{Step: StepCandidates, Total: 6, Reasons: reasons,
			Message: "0/1 seed cluster candidate(s) are eligible for scheduling"}, "0/6 seeds eligible"},
		{"a later step's message is news", Decision{Step: StepStrategy, Total: 6, Reasons: reasons,
			Message: "no matching seed candidate found"}, "0/6 seeds eligible: no matching seed candidate found"},
		{"self-hosted: no seed considered", Decision{Step: StepSelfHosted, Total: 6, Message: "shoot is self-hosted"}, "shoot is self-hosted"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.d.Headline())
			if tc.d.Step != StepSelfHosted {
				assert.True(t, strings.HasPrefix(tc.d.Summary(), tc.d.Eligible()+": "), tc.d.Summary())
			}
		})
	}
}
