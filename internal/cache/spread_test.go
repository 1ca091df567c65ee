package cache

import (
	"fmt"
	"maps"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// projectShootsOf reads Snapshot.ProjectShoots for several namespaces; a
// namespace without Shoots on any seed maps to nil.
func projectShootsOf(s *Store, namespaces ...string) map[string]map[string]int64 {
	snap := s.Snapshot()
	out := map[string]map[string]int64{}
	for _, ns := range namespaces {
		out[ns] = snap.ProjectShoots(ns)
	}
	return out
}

func TestProjectShoots(t *testing.T) {
	type op struct {
		remove bool
		obj    client.Object
	}
	apply := func(o client.Object) op { return op{obj: o} }
	remove := func(o client.Object) op { return op{remove: true, obj: o} }

	tests := []struct {
		name string
		ops  []op
		want map[string]map[string]int64 // namespace -> seed -> Shoots; nil: no entry
	}{
		{
			name: "adds count per namespace and seed",
			ops: []op{
				apply(shoot("p1", "s1", "a", "")), apply(shoot("p1", "s2", "a", "")), apply(shoot("p1", "s3", "b", "")),
				apply(shoot("p2", "s1", "b", "")),
			},
			want: map[string]map[string]int64{"p1": {"a": 2, "b": 1}, "p2": {"b": 1}, "p3": nil},
		},
		{
			name: "unscheduled shoot counts nowhere",
			ops:  []op{apply(shoot("p1", "s1", "", ""))},
			want: map[string]map[string]int64{"p1": nil},
		},
		{
			name: "update moving the shoot to another seed",
			ops:  []op{apply(shoot("p1", "s1", "a", "a")), apply(shoot("p1", "s2", "a", "")), apply(shoot("p1", "s1", "b", "b"))},
			want: map[string]map[string]int64{"p1": {"a": 1, "b": 1}},
		},
		{
			name: "update moving the only shoot off a seed drops that seed",
			ops:  []op{apply(shoot("p1", "s1", "a", "")), apply(shoot("p1", "s1", "b", "b"))},
			want: map[string]map[string]int64{"p1": {"b": 1}},
		},
		{
			name: "migration counts on both seeds",
			ops:  []op{apply(shoot("p1", "s1", "a", "a")), apply(shoot("p1", "s1", "b", "a"))},
			want: map[string]map[string]int64{"p1": {"a": 1, "b": 1}},
		},
		{
			name: "finished migration leaves the old seed",
			ops:  []op{apply(shoot("p1", "s1", "b", "a")), apply(shoot("p1", "s1", "b", "b"))},
			want: map[string]map[string]int64{"p1": {"b": 1}},
		},
		{
			name: "repeated identical update is counted once",
			ops:  []op{apply(shoot("p1", "s1", "a", "")), apply(shoot("p1", "s1", "a", "")), apply(shoot("p1", "s1", "a", "a"))},
			want: map[string]map[string]int64{"p1": {"a": 1}},
		},
		{
			name: "delete undoes what was counted, not the stale final state",
			ops:  []op{apply(shoot("p1", "s1", "b", "a")), apply(shoot("p1", "s2", "a", "")), remove(shoot("p1", "s1", "", ""))},
			want: map[string]map[string]int64{"p1": {"a": 1}},
		},
		{
			name: "namespace going to zero has no entry",
			ops: []op{
				apply(shoot("p1", "s1", "b", "a")), apply(shoot("p2", "s1", "a", "")),
				remove(shoot("p1", "s1", "b", "a")), remove(shoot("p1", "s1", "b", "a")),
			},
			want: map[string]map[string]int64{"p1": nil, "p2": {"a": 1}},
		},
		{
			name: "unscheduling the last shoot empties the namespace",
			ops:  []op{apply(shoot("p1", "s1", "a", "")), apply(shoot("p1", "s1", "", ""))},
			want: map[string]map[string]int64{"p1": nil},
		},
		{
			name: "delete of an unknown shoot changes nothing",
			ops:  []op{apply(shoot("p1", "s1", "a", "")), remove(shoot("p1", "nope", "a", "")), remove(shoot("p2", "s1", "a", ""))},
			want: map[string]map[string]int64{"p1": {"a": 1}, "p2": nil},
		},
		{
			name: "seeds without a Seed object are counted too",
			ops:  []op{apply(seed("a", 10)), apply(shoot("p1", "s1", "ghost", ""))},
			want: map[string]map[string]int64{"p1": {"ghost": 1}},
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
			assert.Equal(t, tc.want, projectShootsOf(s, slicesOfKeys(tc.want)...))
			for ns, m := range tc.want {
				if _, stored := s.spread.Load(ns); m == nil {
					assert.False(t, stored, "namespace %s keeps no entry", ns)
				}
			}
		})
	}
}

func slicesOfKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// The cluster path: Shoots reduced by the informer's transform and fed
// through the event handler, a delete arriving wrapped after a watch gap.
func TestProjectShootsThroughInformerHandler(t *testing.T) {
	s := NewStore(Options{})
	h := s.EventHandler()
	reduced := func(o *api.Shoot) any {
		out, err := TransformShoot(o)
		require.NoError(t, err)
		return out
	}
	h.OnAdd(reduced(shoot("p1", "s1", "a", "")), true)
	h.OnAdd(reduced(shoot("p1", "s2", "a", "")), true)
	assert.Equal(t, map[string]int64{"a": 2}, s.Snapshot().ProjectShoots("p1"))

	h.OnUpdate(reduced(shoot("p1", "s1", "a", "")), reduced(shoot("p1", "s1", "b", "a")))
	assert.Equal(t, map[string]int64{"a": 2, "b": 1}, s.Snapshot().ProjectShoots("p1"), "migrating: both seeds")

	h.OnDelete(toolscache.DeletedFinalStateUnknown{Key: "p1/s1", Obj: reduced(shoot("p1", "s1", "a", ""))})
	h.OnDelete(reduced(shoot("p1", "s2", "a", "")))
	assert.Nil(t, s.Snapshot().ProjectShoots("p1"))
}

// Reservations are admissions, not Shoots: ProjectSpread counts what exists,
// like Gardener's view of the project.
func TestProjectShootsExcludeReservations(t *testing.T) {
	s := NewStore(Options{})
	s.Apply(seed("a", 10))
	s.Apply(shoot("p1", "s1", "a", ""))
	require.NoError(t, s.Reserve("a", Claim{Key: "uid-1", Namespace: "p1"}))
	assert.Equal(t, map[string]int64{"a": 1}, s.Snapshot().ProjectShoots("p1"))
	assert.Equal(t, int64(2), s.Usage("a"), "the reservation does count as usage")
}

// A map handed out is never written again: every change publishes a new one.
func TestProjectShootsHandedOutMapIsImmutable(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Store)
		after  map[string]int64 // what a read after the change sees
	}{
		{"add", func(s *Store) { s.Apply(shoot("p1", "new", "a", "")) }, map[string]int64{"a": 2, "b": 1}},
		{"move", func(s *Store) { s.Apply(shoot("p1", "s1", "b", "b")) }, map[string]int64{"b": 2}},
		{"migrate", func(s *Store) { s.Apply(shoot("p1", "s1", "c", "a")) }, map[string]int64{"a": 1, "b": 1, "c": 1}},
		{"delete", func(s *Store) { s.Remove(shoot("p1", "s1", "a", "")) }, map[string]int64{"b": 1}},
		{"delete all", func(s *Store) {
			s.Remove(shoot("p1", "s1", "a", ""))
			s.Remove(shoot("p1", "s2", "b", ""))
		}, nil},
		{"other namespace", func(s *Store) { s.Apply(shoot("p2", "s1", "a", "")) }, map[string]int64{"a": 1, "b": 1}},
		{"landscape change", func(s *Store) { s.Apply(seed("c", 10)) }, map[string]int64{"a": 1, "b": 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := NewStore(Options{})
			s.Load([]client.Object{seed("a", 10), seed("b", 10), shoot("p1", "s1", "a", ""), shoot("p1", "s2", "b", "")})
			held := s.Snapshot().ProjectShoots("p1")
			before := maps.Clone(held)
			require.Equal(t, map[string]int64{"a": 1, "b": 1}, before)
			tc.change(s)
			assert.Equal(t, before, held, "the handed-out map changed")
			assert.Equal(t, tc.after, s.Snapshot().ProjectShoots("p1"), "a read after the change")
		})
	}
}

// Readers iterate the maps while Shoots move: -race fails if a published
// map is ever written.
func TestProjectShootsConcurrent(t *testing.T) {
	s := NewStore(Options{})
	s.Load([]client.Object{seed("a", 1000), seed("b", 1000)})
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				var sum int64
				for _, n := range s.Snapshot().ProjectShoots("p") {
					sum += n
				}
				assert.LessOrEqual(t, sum, int64(2*50), "at most every Shoot migrating")
			}
		})
	}
	for i := range 500 {
		name := fmt.Sprint("s", i%50)
		switch i % 3 {
		case 0:
			s.Apply(shoot("p", name, "a", ""))
		case 1:
			s.Apply(shoot("p", name, "b", "a"))
		default:
			s.Remove(shoot("p", name, "", ""))
		}
	}
	close(stop)
	wg.Wait()
}

// End to end through Store.Place and placement.Decide: LeastShoots alone
// picks the seed with fewer Shoots overall; ProjectSpread picks the seed with
// fewer Shoots of the Shoot's namespace. Without the cache feeding
// ProjectShoots every seed would rate alike and LeastShoots would decide.
func TestPlaceWithProjectSpread(t *testing.T) {
	s := NewStore(Options{})
	s.Load([]client.Object{cloudProfile("aws"), project("p", "p"), project("q", "q"), seed("a", 100), seed("b", 100)})
	for i := range 2 {
		s.Apply(shoot("p", fmt.Sprint("p-", i), "a", "")) // a: 2 Shoots, both of p
	}
	for i := range 5 {
		s.Apply(shoot("q", fmt.Sprint("q-", i), "b", "")) // b: 5 Shoots, none of p
	}
	profile := func(ws ...placement.WeightedScorer) placement.Options {
		o := placementOpts
		o.Scoring = &placement.Profile{Scorers: ws}
		return o
	}
	tests := []struct {
		name string
		ns   string
		opts placement.Options
		want string
	}{
		{"no profile: least used", "p", placementOpts, "a"},
		{"LeastShoots alone", "p", profile(placement.WeightedScorer{Name: placement.ScoreLeastShoots, Weight: 1}), "a"},
		{"ProjectSpread outweighs LeastShoots", "p", profile(
			placement.WeightedScorer{Name: placement.ScoreLeastShoots, Weight: 1},
			placement.WeightedScorer{Name: placement.ScoreProjectSpread, Weight: 2},
		), "b"},
		{"ProjectSpread for the other project", "q", profile(
			placement.WeightedScorer{Name: placement.ScoreProjectSpread, Weight: 1},
		), "a"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := s.Place(shoot(tc.ns, "new", "", ""), tc.opts, "")
			require.True(t, d.Schedulable(), "%s: %s", d.Step, d.Message)
			assert.Equal(t, tc.want, d.Seed)
		})
	}

	// The Shoot placed on b arrives: p now has a Shoot on b, and the next
	// one of p goes back to a only once b holds as many of p's as a.
	spread := profile(placement.WeightedScorer{Name: placement.ScoreProjectSpread, Weight: 1})
	s.Apply(shoot("p", "p-2", "b", ""))
	assert.Equal(t, "b", s.Place(shoot("p", "new", "", ""), spread, "").Seed, "a 2, b 1 of p")
	s.Apply(shoot("p", "p-3", "b", ""))
	s.Apply(shoot("p", "p-4", "b", ""))
	assert.Equal(t, "a", s.Place(shoot("p", "new", "", ""), spread, "").Seed, "a 2, b 3 of p")
}
