package operationsapi

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		spec SeedDrainSpec
		want []string // substrings of the error; none: valid
	}{
		{"minimal", SeedDrainSpec{SeedName: "aws-eu1"}, nil},
		{"full budget", SeedDrainSpec{SeedName: "aws-eu1", Budget: Budget{MaxInFlight: ptr.To[int32](50), MaxPerHour: ptr.To[int32](1000)}}, nil},
		{"no seed", SeedDrainSpec{}, []string{"spec.seedName: empty"}},
		{"bad seed", SeedDrainSpec{SeedName: "Aws_EU"}, []string{`spec.seedName="Aws_EU"`}},
		{"in flight 0", SeedDrainSpec{SeedName: "a", Budget: Budget{MaxInFlight: ptr.To[int32](0)}}, []string{"spec.budget.maxInFlight=0: want 1 to 50"}},
		{"in flight 51", SeedDrainSpec{SeedName: "a", Budget: Budget{MaxInFlight: ptr.To[int32](51)}}, []string{"spec.budget.maxInFlight=51"}},
		{"per hour 0 and no seed", SeedDrainSpec{Budget: Budget{MaxPerHour: ptr.To[int32](0)}},
			[]string{"spec.seedName: empty", "spec.budget.maxPerHour=0: want 1 to 1000"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.spec.Validate()
			if tt.want == nil {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestMaxInFlightOrDefault(t *testing.T) {
	assert.Equal(t, DefaultMaxInFlight, Budget{}.MaxInFlightOrDefault())
	assert.Equal(t, int32(3), Budget{MaxInFlight: ptr.To[int32](3)}.MaxInFlightOrDefault())
}

func TestCordons(t *testing.T) {
	tests := []struct {
		name  string
		drain *SeedDrain
		want  bool
	}{
		{"nil", nil, false},
		{"drain", &SeedDrain{Spec: SeedDrainSpec{SeedName: "a"}}, true},
		{"dry run", &SeedDrain{Spec: SeedDrainSpec{SeedName: "a", DryRun: true}}, false},
		{"no seed", &SeedDrain{}, false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.drain.Cordons(), tt.name)
	}
}

func TestOptedOut(t *testing.T) {
	assert.True(t, OptedOut(map[string]string{AnnotationNoDrain: "true"}))
	for _, v := range []string{"", "false", "True", "yes"} {
		assert.False(t, OptedOut(map[string]string{AnnotationNoDrain: v}), v)
	}
	assert.False(t, OptedOut(nil))
}

func TestMoveRoundTrip(t *testing.T) {
	at := time.Date(2026, 12, 2, 18, 0, 0, 500, time.FixedZone("x", 3600))
	m := Move{Drain: "scale-in-1", From: "a", To: "b", At: at}
	got, err := ParseMove(m.Encode())
	require.NoError(t, err)
	assert.Equal(t, "scale-in-1", got.Drain)
	assert.Equal(t, "b", got.To)
	assert.True(t, got.At.Equal(at.Truncate(time.Second)), "%v", got.At)
	assert.Equal(t, time.UTC, got.At.Location())
}

func TestParseMoveRefuses(t *testing.T) {
	tests := []struct{ value, want string }{
		{"", "EOF"},
		{"not json", "invalid character"},
		{`{"to":"b"}`, "no time (at)"},
		{`{"at":"2026-12-02T18:00:00Z"}`, "no destination seed (to)"},
		{`{"to":"b","at":"2026-12-02T18:00:00Z","extra":1}`, `unknown field "extra"`},
		{`{"to":"b","at":"2026-12-02T18:00:00Z"}{}`, "data after the object"},
		{`{"to":"b","at":"9999-12-31T23:59:59-23:59"}`, "year 10000 in UTC"},
		{`{"to":"` + strings.Repeat("b", 3000) + `"}`, "3009 bytes: at most 2048"},
	}
	for _, tt := range tests {
		_, err := ParseMove(tt.value)
		require.Error(t, err, tt.value)
		assert.Contains(t, err.Error(), AnnotationLastDrainMove)
		assert.Contains(t, err.Error(), tt.want)
	}
}

func TestMovedWithin(t *testing.T) {
	now := time.Date(2026, 12, 2, 18, 0, 0, 0, time.UTC)
	ann := func(at time.Time) map[string]string {
		return map[string]string{AnnotationLastDrainMove: Move{To: "b", At: at}.Encode()}
	}
	tests := []struct {
		name string
		ann  map[string]string
		want bool
	}{
		{"none", nil, false},
		{"an hour ago, window 2h", ann(now.Add(-time.Hour)), true},
		{"three hours ago, window 2h", ann(now.Add(-3 * time.Hour)), false},
		{"exactly the window ago", ann(now.Add(-2 * time.Hour)), false},
		{"in the future", ann(now.Add(time.Hour)), true},
		{"does not parse", map[string]string{AnnotationLastDrainMove: "x"}, false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, MovedWithin(tt.ann, now, 2*time.Hour), tt.name)
	}
}

// A SeedDrain goes through a scheme and a deep copy whole.
func TestSchemeAndDeepCopy(t *testing.T) {
	s := runtime.NewScheme()
	require.NoError(t, AddToScheme(s))
	gvks, _, err := s.ObjectKinds(&SeedDrain{})
	require.NoError(t, err)
	assert.Equal(t, KindSeedDrain, gvks[0].Kind)
	assert.Equal(t, "operations.seedwarden.io/v1alpha1", gvks[0].GroupVersion().String())

	d := &SeedDrain{Spec: SeedDrainSpec{SeedName: "a", Budget: Budget{MaxInFlight: ptr.To[int32](2)}, Deadline: &metav1.Time{Time: time.Unix(5, 0)}},
		Status: SeedDrainStatus{Shoots: []ShootStatus{{Namespace: "n", Name: "s", State: ShootMigrating, StartedAt: &metav1.Time{Time: time.Unix(1, 0)}}}}}
	c := d.DeepCopy()
	*c.Spec.Budget.MaxInFlight = 9
	c.Status.Shoots[0].StartedAt.Time = time.Unix(7, 0)
	assert.Equal(t, int32(2), *d.Spec.Budget.MaxInFlight)
	assert.Equal(t, int64(1), d.Status.Shoots[0].StartedAt.Unix())
}
