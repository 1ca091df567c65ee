package cache

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/metrics"
)

func TestUsageIncremental(t *testing.T) {
	type op struct {
		remove bool
		obj    client.Object
	}
	apply := func(o client.Object) op { return op{obj: o} }
	remove := func(o client.Object) op { return op{remove: true, obj: o} }

	tests := []struct {
		name  string
		ops   []op
		want  map[string]int64
		perNS map[string]int
	}{
		{
			name:  "add on spec seed",
			ops:   []op{apply(shoot("p1", "s1", "a", "")), apply(shoot("p1", "s2", "a", "a")), apply(shoot("p2", "s1", "b", ""))},
			want:  map[string]int64{"a": 2, "b": 1},
			perNS: map[string]int{"p1": 2, "p2": 1, "p3": 0},
		},
		{
			name: "unscheduled shoot counts nowhere but exists",
			ops:  []op{apply(shoot("p1", "s1", "", ""))},
			want: map[string]int64{"a": 0}, perNS: map[string]int{"p1": 1},
		},
		{
			name: "migration counts on both seeds",
			ops:  []op{apply(shoot("p1", "s1", "b", "a"))},
			want: map[string]int64{"a": 1, "b": 1},
		},
		{
			name: "update that starts a migration",
			ops:  []op{apply(shoot("p1", "s1", "a", "a")), apply(shoot("p1", "s1", "b", "a"))},
			want: map[string]int64{"a": 1, "b": 1},
		},
		{
			name: "update that finishes a migration",
			ops:  []op{apply(shoot("p1", "s1", "b", "a")), apply(shoot("p1", "s1", "b", "b"))},
			want: map[string]int64{"a": 0, "b": 1}, perNS: map[string]int{"p1": 1},
		},
		{
			name: "repeated identical update is counted once",
			ops:  []op{apply(shoot("p1", "s1", "a", "")), apply(shoot("p1", "s1", "a", "")), apply(shoot("p1", "s1", "a", ""))},
			want: map[string]int64{"a": 1}, perNS: map[string]int{"p1": 1},
		},
		{
			name: "scheduling an existing shoot",
			ops:  []op{apply(shoot("p1", "s1", "", "")), apply(shoot("p1", "s1", "a", ""))},
			want: map[string]int64{"a": 1}, perNS: map[string]int{"p1": 1},
		},
		{
			name: "delete",
			ops:  []op{apply(shoot("p1", "s1", "b", "a")), apply(shoot("p1", "s2", "a", "")), remove(shoot("p1", "s1", "b", "a"))},
			want: map[string]int64{"a": 1, "b": 0}, perNS: map[string]int{"p1": 1},
		},
		{
			name: "delete undoes what was counted, not the stale final state",
			ops:  []op{apply(shoot("p1", "s1", "b", "a")), remove(shoot("p1", "s1", "", ""))},
			want: map[string]int64{"a": 0, "b": 0}, perNS: map[string]int{"p1": 0},
		},
		{
			name: "delete of an unknown shoot",
			ops:  []op{apply(shoot("p1", "s1", "a", "")), remove(shoot("p1", "nope", "a", "")), remove(shoot("p2", "s1", "a", ""))},
			want: map[string]int64{"a": 1}, perNS: map[string]int{"p1": 1, "p2": 0},
		},
		{
			name: "delete twice",
			ops:  []op{apply(shoot("p1", "s1", "a", "")), remove(shoot("p1", "s1", "a", "")), remove(shoot("p1", "s1", "a", ""))},
			want: map[string]int64{"a": 0}, perNS: map[string]int{"p1": 0},
		},
		{
			name: "same name in two namespaces are two shoots",
			ops:  []op{apply(shoot("p1", "s", "a", "")), apply(shoot("p2", "s", "a", ""))},
			want: map[string]int64{"a": 2},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := NewStore(Options{})
			for _, o := range tc.ops {
				if o.remove {
					s.Remove(o.obj)
				} else {
					s.Apply(o.obj)
				}
			}
			names := make([]string, 0, len(tc.want))
			for n := range tc.want {
				names = append(names, n)
			}
			assert.Equal(t, tc.want, usages(s, names...))
			for ns, n := range tc.perNS {
				assert.Equal(t, n, s.ShootsInNamespace(ns), "namespace %s", ns)
			}
		})
	}
}

func TestShootBeforeSeed(t *testing.T) {
	s := NewStore(Options{})
	s.Apply(shoot("p1", "s1", "a", ""))
	s.Apply(shoot("p1", "s2", "a", ""))
	assert.Equal(t, int64(2), s.Usage("a"))
	assert.Empty(t, s.Snapshot().Seeds)

	s.Apply(seed("a", 10))
	snap := s.Snapshot()
	require.Len(t, snap.Seeds, 1)
	assert.Equal(t, int64(2), snap.Usage(snap.Seeds[0]))
	assert.Equal(t, []metrics.SeedStat{{Name: "a", Provider: "aws", Region: "eu-west-1", Shoots: 2, Usage: 2, Allocatable: 10, HasAllocatable: true}}, s.SeedStats(nil))

	// Removing the Seed keeps counting its Shoots.
	s.Remove(seed("a", 10))
	assert.Equal(t, int64(2), s.Usage("a"))
	s.Apply(seed("a", 10))
	assert.Equal(t, int64(2), s.Snapshot().Usage(s.Snapshot().Seeds[0]))
}

func TestCountersAreDroppedWhenUnused(t *testing.T) {
	s := NewStore(Options{})
	s.Apply(seed("kept", -1))
	s.Apply(shoot("p", "x", "ghost", "ghost2"))
	s.Apply(shoot("p", "y", "kept", ""))
	s.Remove(shoot("p", "x", "", ""))
	s.Remove(shoot("p", "y", "", ""))
	s.mu.Lock()
	defer s.mu.Unlock()
	assert.Len(t, s.counters, 1, "only the Seed's counter survives")
	assert.Contains(t, s.counters, "kept")
}

// ShootChargedTo and ShootsOnSeed answer from the Shoots alone: a migrating
// Shoot counts on both seeds, reservations never count, and updates and
// deletes move the answer.
func TestShootsOnSeed(t *testing.T) {
	s := NewStore(Options{})
	s.Load([]client.Object{seed("a", 10), seed("b", 10)})
	s.Apply(shoot("p1", "on-a", "a", ""))
	s.Apply(shoot("p1", "moving", "b", "a")) // migrating from a to b
	pending := shoot("p2", "pending", "", "")
	pending.UID = "uid-pending"
	s.Apply(pending)
	require.NoError(t, s.Reserve("a", Claim{Key: "uid-1", Namespace: "ns"}))

	for _, tc := range []struct {
		ns, name, seed string
		want           bool
	}{
		{"p1", "on-a", "a", true},
		{"p1", "on-a", "b", false},
		{"p1", "moving", "a", true},
		{"p1", "moving", "b", true},
		{"p2", "pending", "a", false},
		{"p2", "pending", "", false},
		{"p1", "unknown", "a", false},
		{"p2", "on-a", "a", false}, // same name, other namespace
	} {
		assert.Equal(t, tc.want, s.ShootChargedTo(tc.ns, tc.name, tc.seed), "%s/%s on %q", tc.ns, tc.name, tc.seed)
	}

	keys := []ShootRef{{Key: "p1/on-a"}, {Key: "p1/moving"}, {Key: "p2/pending", ID: "uid-pending"}, {Key: "p1/nope"}, {Key: "garbage"}}
	shoots, charged := s.ShootsOnSeed("a", keys)
	assert.Equal(t, int64(2), shoots, "the reservation is not a Shoot")
	assert.Equal(t, []ShootState{ShootOnSeed, ShootOnSeed, ShootPending, ShootAbsent, ShootAbsent}, charged)
	shoots, charged = s.ShootsOnSeed("b", keys)
	assert.Equal(t, int64(1), shoots)
	assert.Equal(t, []ShootState{ShootElsewhere, ShootOnSeed, ShootPending, ShootAbsent, ShootAbsent}, charged)
	shoots, charged = s.ShootsOnSeed("unknown", nil)
	assert.Equal(t, int64(0), shoots)
	assert.Empty(t, charged)

	// The migration ends, a Shoot is deleted.
	s.Apply(shoot("p1", "moving", "b", "b"))
	s.Remove(shoot("p1", "on-a", "a", ""))
	shoots, charged = s.ShootsOnSeed("a", keys)
	assert.Equal(t, int64(0), shoots)
	assert.Equal(t, []ShootState{ShootAbsent, ShootElsewhere, ShootPending, ShootAbsent, ShootAbsent}, charged)
	assert.True(t, s.ShootChargedTo("p1", "moving", "b"))

	// Pending only for the identity the Shoot carries; deleted for that
	// identity within the confirm window.
	_, states := s.ShootsOnSeed("a", []ShootRef{{Key: "p2/pending", ID: "other"}, {Key: "p2/pending"}})
	assert.Equal(t, []ShootState{ShootElsewhere, ShootElsewhere}, states)
	s.Remove(pending)
	_, states = s.ShootsOnSeed("a", []ShootRef{{Key: "p2/pending", ID: "uid-pending"}, {Key: "p2/pending", ID: "other"}})
	assert.Equal(t, []ShootState{ShootDeleted, ShootAbsent}, states)
}

// SeedStats separates the Shoots gardener-scheduler counts (a migrating
// Shoot on both seeds) from usage, which adds reservations, and carries
// the allowlisted Seed labels.
func TestSeedStats(t *testing.T) {
	s := NewStore(Options{})
	a := seed("a", 10)
	a.Labels = map[string]string{"seedmanagement.gardener.cloud/managed-seed-set": "set-1", "environment": "prod"}
	s.Apply(a)
	b := seed("b", -1)
	b.Spec.Provider.Type, b.Spec.Provider.Region = "gcp", "us-east1"
	s.Apply(b)
	s.Apply(shoot("p", "on-a", "a", ""))
	s.Apply(shoot("p", "migrating", "b", "a")) // counts on both
	s.Apply(shoot("p", "pending", "", ""))
	require.NoError(t, s.Reserve("a", Claim{Key: "k1", Namespace: "p"}))

	keys := []string{"seedmanagement.gardener.cloud/managed-seed-set", "environment"}
	assert.Equal(t, []metrics.SeedStat{
		{Name: "a", Provider: "aws", Region: "eu-west-1", Labels: []string{"set-1", "prod"}, Shoots: 2, Usage: 3, Allocatable: 10, HasAllocatable: true},
		{Name: "b", Provider: "gcp", Region: "us-east1", Labels: []string{"", ""}, Shoots: 1, Usage: 1},
	}, s.SeedStats(keys))
}
