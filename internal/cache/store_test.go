package cache

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/placement"
)

func TestSnapshotReadsLiveUsage(t *testing.T) {
	s := NewStore(Options{})
	s.Apply(seed("a", 10))
	snap := s.Snapshot()
	s.Apply(shoot("p", "x", "a", ""))
	assert.Equal(t, int64(1), snap.Usage(snap.Seeds[0]), "an older snapshot still sees live counters")
}

func TestLandscape(t *testing.T) {
	s := NewStore(Options{GardenNamespace: "garden"})
	s.Load([]client.Object{
		seed("c", 1), seed("a", 1), seed("b", -1),
		cloudProfile("aws"), cloudProfile("gcp"),
		&api.NamespacedCloudProfile{
			ObjectMeta: metav1.ObjectMeta{Namespace: "garden-dev", Name: "custom"},
			Spec:       api.NamespacedCloudProfileSpec{Parent: api.CloudProfileReference{Kind: api.KindCloudProfile, Name: "aws"}},
			Status: api.NamespacedCloudProfileStatus{CloudProfileSpec: api.CloudProfileSpec{
				SeedSelector: &api.SeedSelector{ProviderTypes: []string{"aws", "gcp"}},
			}},
		},
		project("dev", "garden-dev"), project("no-ns", ""),
		regionConfig("garden", "rc-b", true), regionConfig("garden", "rc-a", true),
		regionConfig("garden", "plain", false), regionConfig("other", "rc-c", true),
	})
	before := s.Snapshot()

	names := func(snap *placement.Snapshot) (seeds, rcs []string) {
		for _, sd := range snap.Seeds {
			seeds = append(seeds, sd.Name)
		}
		for _, rc := range snap.RegionConfigs {
			rcs = append(rcs, rc.Name)
		}
		return seeds, rcs
	}
	seeds, rcs := names(before)
	assert.Equal(t, []string{"a", "b", "c"}, seeds)
	assert.Equal(t, []string{"rc-a", "rc-b"}, rcs)
	assert.Len(t, before.CloudProfiles, 2)
	require.Contains(t, before.NamespacedCloudProfiles, "garden-dev/custom")
	assert.Equal(t, []string{"aws", "gcp"}, before.NamespacedCloudProfiles["garden-dev/custom"].ProviderTypes())
	assert.Equal(t, map[string]*placement.Project{"garden-dev": {Name: "dev"}}, before.Projects)
	sd, ok := s.Seed("b")
	require.True(t, ok)
	_, has := sd.Allocatable()
	assert.False(t, has)

	// Changes build a new snapshot and leave the old one as it was.
	del := project("dev", "garden-dev")
	del.DeletionTimestamp = &metav1.Time{}
	s.Apply(del)
	s.Remove(seed("b", 0))
	s.Apply(seed("a0", 0))
	s.Remove(cloudProfile("gcp"))
	s.Remove(&api.NamespacedCloudProfile{ObjectMeta: metav1.ObjectMeta{Namespace: "garden-dev", Name: "custom"}})
	s.Apply(regionConfig("garden", "rc-a", false)) // label removed: no longer a region config
	s.Remove(regionConfig("garden", "rc-b", true))
	s.Apply(regionConfig("garden", "rc-0", true))

	after := s.Snapshot()
	seeds, rcs = names(after)
	assert.Equal(t, []string{"a", "a0", "c"}, seeds)
	assert.Equal(t, []string{"rc-0"}, rcs)
	assert.Equal(t, map[string]*placement.Project{"garden-dev": {Name: "dev", Deleting: true}}, after.Projects)
	assert.Len(t, after.CloudProfiles, 1)
	assert.Empty(t, after.NamespacedCloudProfiles)
	_, ok = s.Seed("b")
	assert.False(t, ok)

	seeds, rcs = names(before)
	assert.Equal(t, []string{"a", "b", "c"}, seeds, "old snapshot unchanged")
	assert.Equal(t, []string{"rc-a", "rc-b"}, rcs, "old snapshot unchanged")
	assert.False(t, before.Projects["garden-dev"].Deleting, "old snapshot unchanged")

	s.Remove(project("dev", ""))
	assert.Empty(t, s.Snapshot().Projects)
}

func TestResyncDoesNotRebuild(t *testing.T) {
	s := NewStore(Options{})
	sd := seed("a", 1)
	sd.ResourceVersion = "7"
	s.Apply(sd)
	snap := s.Snapshot()
	s.Apply(sd.DeepCopy())
	assert.Same(t, snap, s.Snapshot(), "same resourceVersion: nothing to digest")
	sd.ResourceVersion = "8"
	s.Apply(sd)
	assert.NotSame(t, snap, s.Snapshot())
}

func TestApplyCopiesLandscapeObjects(t *testing.T) {
	s := NewStore(Options{})
	sd := seed("a", 1)
	s.Apply(sd)
	sd.Spec.Provider.Type = "mutated"
	got, _ := s.Seed("a")
	assert.Equal(t, "aws", got.Object.Spec.Provider.Type)
}

func TestIgnoresUnsupportedAndNil(t *testing.T) {
	s := NewStore(Options{})
	snap := s.Snapshot()
	assert.NotPanics(t, func() {
		s.Apply(nil)
		s.Remove(nil)
		s.Apply((*api.Shoot)(nil))
		s.Remove((*api.Seed)(nil))
		s.Apply(&metav1.PartialObjectMetadata{})
	})
	assert.Same(t, snap, s.Snapshot())
}

func TestSnapshotDoesNotAllocate(t *testing.T) {
	s := NewStore(Options{})
	s.Apply(seed("a", -1))
	for i := range 10000 {
		s.Apply(shoot("p", fmt.Sprint(i), "a", ""))
	}
	allocs := testing.AllocsPerRun(100, func() { _ = s.Snapshot() })
	assert.Zero(t, allocs, "Snapshot must not copy per-Shoot data")
}
