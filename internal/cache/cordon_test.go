package cache

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/operationsapi"
	"github.com/seedwarden/seedwarden/internal/placement"
)

func seedDrain(name, seed string, dryRun bool, rv string) *operationsapi.SeedDrain {
	return &operationsapi.SeedDrain{
		ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: rv},
		Spec:       operationsapi.SeedDrainSpec{SeedName: seed, DryRun: dryRun},
	}
}

func cordons(s *Store, names ...string) map[string]string {
	out := map[string]string{}
	for _, n := range names {
		out[n] = s.Cordoned(n)
	}
	return out
}

// A SeedDrain cordons its seed whether it arrives before or after the
// Seed, a dry run does not, the reason names every drain of the seed, and
// the cordon ends with the last of them.
func TestSeedDrainCordons(t *testing.T) {
	s := NewStore(Options{})
	s.Apply(seedDrain("early", "a", false, "1"))
	s.Apply(seed("a", 10))
	s.Apply(seed("b", 10))
	s.Apply(seedDrain("dry", "b", true, "1"))
	assert.Equal(t, map[string]string{"a": CordonReason([]string{"early"}), "b": ""}, cordons(s, "a", "b"))

	s.Apply(seedDrain("late", "a", false, "1"))
	assert.Equal(t, "seed is being drained (SeedDrain early, late)", s.Cordoned("a"))

	// A Seed update keeps the cordon.
	updated := seed("a", 20)
	updated.ResourceVersion = "2"
	s.Apply(updated)
	assert.Equal(t, "seed is being drained (SeedDrain early, late)", s.Cordoned("a"))

	// A dry run turned into a drain cordons; back, it stops.
	s.Apply(seedDrain("dry", "b", false, "2"))
	assert.Equal(t, CordonReason([]string{"dry"}), s.Cordoned("b"))
	s.Apply(seedDrain("dry", "b", true, "3"))
	assert.Empty(t, s.Cordoned("b"))

	s.Remove(seedDrain("early", "a", false, ""))
	assert.Equal(t, CordonReason([]string{"late"}), s.Cordoned("a"))
	s.Remove(seedDrain("late", "a", false, ""))
	assert.Empty(t, s.Cordoned("a"))
	s.Remove(seedDrain("never-seen", "a", false, ""))
	assert.Empty(t, s.Cordoned("a"))
}

// The webhook's placement (Store.Place with placement.Decide) leaves a
// cordoned seed out with the cordon as its reason, and takes it again once
// the drain is gone.
func TestPlaceAvoidsCordonedSeed(t *testing.T) {
	s := NewStore(Options{})
	s.Load(landscapeObjects())
	s.Apply(seedDrain("d", "a", false, "1"))
	d := s.Place(shoot("p", "s1", "", ""), placement.Options{}, "")
	require.True(t, d.Schedulable(), d.Message)
	assert.Equal(t, "b", d.Seed)

	s.Apply(seedDrain("d2", "b", false, "1"))
	d = s.Place(shoot("p", "s2", "", ""), placement.Options{}, "")
	assert.False(t, d.Schedulable())
	assert.Equal(t, placement.StepUsable, d.Step)
	assert.Contains(t, d.Reasons["a"], "SeedDrain d")

	s.Remove(seedDrain("d", "a", false, ""))
	s.Remove(seedDrain("d2", "b", false, ""))
	d = s.Place(shoot("p", "s3", "", ""), placement.Options{}, "")
	assert.True(t, d.Schedulable())
}

// With no SeedDrain, or only dry runs and drains of unknown seeds, the
// published seeds are the ones NewSeed digested: the landscape Gardener's
// scheduler sees, pointer for pointer.
func TestNoCordonChangesNothing(t *testing.T) {
	s := NewStore(Options{})
	s.Load(landscapeObjects())
	before := s.Snapshot().Seeds
	s.Apply(seedDrain("dry", "a", true, "1"))
	s.Apply(seedDrain("elsewhere", "zz", false, "1"))
	after := s.Snapshot().Seeds
	require.Len(t, after, len(before))
	for i := range before {
		assert.Same(t, before[i], after[i])
		assert.Empty(t, after[i].Cordoned())
	}
}

// landscapeObjects are two seeds that take shoot()'s Shoots, a and b.
func landscapeObjects() []client.Object {
	return []client.Object{cloudProfile("aws"), project("p", "p"), seed("a", 10), seed("b", 10)}
}
