package seedscale_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/placement"
	"github.com/seedwarden/seedwarden/internal/seedmanagement"
	"github.com/seedwarden/seedwarden/internal/seedscale"
)

func seed(name string, labels map[string]string, allocatable string) *api.Seed {
	s := &api.Seed{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	s.Spec.Provider.Type, s.Spec.Provider.Region = "aws", "eu-west-1"
	if allocatable != "" {
		s.Status.Allocatable = corev1.ResourceList{api.ResourceShoots: resource.MustParse(allocatable)}
	}
	return s
}

func snapshot(seeds ...*api.Seed) *placement.Snapshot {
	snap := &placement.Snapshot{}
	for _, s := range seeds {
		snap.Seeds = append(snap.Seeds, placement.NewSeed(s))
	}
	return snap
}

// set is a ManagedSeedSet "aws" in garden selecting set=aws, with the
// gardenlet configuration config (nil: none).
func set(replicas *int32, next int32, config map[string]any) *seedmanagement.ManagedSeedSet {
	m := &seedmanagement.ManagedSeedSet{ObjectMeta: metav1.ObjectMeta{Name: "aws", Namespace: "garden"}}
	m.Spec.Replicas = replicas
	m.Spec.Selector.MatchLabels = map[string]string{"set": "aws"}
	m.Status.NextReplicaNumber = next
	if config != nil {
		raw, _ := json.Marshal(config)
		m.Spec.Template.Spec.Gardenlet = &seedmanagement.Gardenlet{Config: runtime.RawExtension{Raw: raw}}
	}
	return m
}

var inSet = map[string]string{"set": "aws"}

func TestNewSetFromTemplate(t *testing.T) {
	config := map[string]any{
		"seedConfig": map[string]any{"spec": map[string]any{"provider": map[string]any{"type": "aws", "region": "eu-west-1"}}},
		"resources":  map[string]any{"capacity": map[string]any{"shoots": "50"}, "reserved": map[string]any{"shoots": "5"}},
	}
	snap := snapshot(seed("aws-0", inSet, "30"), seed("aws-2", inSet, "30"), seed("other", nil, "30"))
	s, err := seedscale.NewSet(set(new(int32(3)), 2, config), snap, map[string]bool{"aws-2": true, "other": true})
	require.NoError(t, err)
	assert.Equal(t, "garden/aws", s.Name)
	assert.Equal(t, "aws", s.Prefix)
	assert.Equal(t, int32(3), s.Replicas)
	assert.Equal(t, []string{"aws-0", "aws-2"}, s.Seeds, "the selector's seeds only")
	assert.Equal(t, int32(3), s.NextOrdinal, "one past the highest ordinal seen, above a stale status")
	assert.Equal(t, map[string]bool{"aws-0": false, "aws-2": true}, s.Protected)
	alloc := s.Model.Status.Allocatable[api.ResourceShoots]
	assert.Equal(t, int64(45), alloc.Value(), "capacity minus reserved, as the gardenlet sets it")
	assert.Equal(t, "the ManagedSeedSet's template (spec.template.spec.gardenlet.config.seedConfig)", s.ModelSource)
}

func TestNewSetModel(t *testing.T) {
	noCapacity := map[string]any{"seedConfig": map[string]any{"spec": map[string]any{"provider": map[string]any{"type": "aws"}}}}
	noSeedConfig := map[string]any{"resources": map[string]any{"capacity": map[string]any{"shoots": "50"}}}
	tests := []struct {
		name        string
		config      map[string]any
		seeds       []*api.Seed
		wantSource  string
		wantAlloc   int64 // -1: none
		wantNoModel bool
	}{
		{"template without capacity takes an existing seed's allocatable", noCapacity,
			[]*api.Seed{seed("aws-1", inSet, "40"), seed("aws-7", inSet, "70")},
			"the ManagedSeedSet's template (spec.template.spec.gardenlet.config.seedConfig), with the allocatable of existing seed aws-7", 70, false},
		{"template without capacity: the newest seed with an allocatable", noCapacity,
			[]*api.Seed{seed("aws-1", inSet, "40"), seed("aws-7", inSet, "")},
			"the ManagedSeedSet's template (spec.template.spec.gardenlet.config.seedConfig), with the allocatable of existing seed aws-1", 40, false},
		{"template without capacity and no seed", noCapacity, nil,
			"the ManagedSeedSet's template (spec.template.spec.gardenlet.config.seedConfig)", -1, false},
		{"no seedConfig: the seed of the highest ordinal", noSeedConfig,
			[]*api.Seed{seed("aws-10", inSet, "100"), seed("aws-9", inSet, "90")},
			"existing seed aws-10 (the template has no seedConfig)", 100, false},
		{"no gardenlet at all", nil, []*api.Seed{seed("aws-3", inSet, "30")},
			"existing seed aws-3 (the template has no seedConfig)", 30, false},
		{"neither: no model", noSeedConfig, nil, "", 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := seedscale.NewSet(set(nil, 0, tc.config), snapshot(tc.seeds...), nil)
			require.NoError(t, err)
			assert.Equal(t, int32(1), s.Replicas, "Gardener's default")
			if tc.wantNoModel {
				assert.Nil(t, s.Model)
				assert.Equal(t, "none: the template has no seedConfig and the set has no seed yet", s.ModelSource)
				return
			}
			require.NotNil(t, s.Model)
			assert.Equal(t, tc.wantSource, s.ModelSource)
			alloc, ok := s.Model.Status.Allocatable[api.ResourceShoots]
			if tc.wantAlloc < 0 {
				assert.False(t, ok)
			} else {
				assert.Equal(t, tc.wantAlloc, alloc.Value())
			}
		})
	}
}

func TestNewSetRefusesBadInput(t *testing.T) {
	bad := set(nil, 0, nil)
	bad.Spec.Selector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Near"}}
	_, err := seedscale.NewSet(bad, snapshot(), nil)
	require.ErrorContains(t, err, "ManagedSeedSet garden/aws: spec.selector")

	bad = set(nil, 0, nil)
	bad.Spec.Template.Spec.Gardenlet = &seedmanagement.Gardenlet{Config: runtime.RawExtension{Raw: []byte(`{"seedConfig": 3}`)}}
	_, err = seedscale.NewSet(bad, snapshot(), nil)
	require.ErrorContains(t, err, "ManagedSeedSet garden/aws: spec.template.spec.gardenlet.config")
}

func TestProtected(t *testing.T) {
	shoot := func(ns, name, value string) *api.Shoot {
		s := &api.Shoot{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		if value != "" {
			s.Annotations = map[string]string{seedmanagement.AnnotationProtectFromDeletion: value}
		}
		return s
	}
	got := seedscale.Protected("garden", []*api.Shoot{
		shoot("garden", "aws-0", "true"), shoot("garden", "aws-1", "false"), shoot("garden", "aws-2", ""),
		shoot("garden-dev", "aws-3", "true"),
	})
	assert.Equal(t, map[string]bool{"aws-0": true}, got)
}

func TestPendingOldestFirst(t *testing.T) {
	at := func(min int) metav1.Time { return metav1.NewTime(time.Date(2026, 1, 1, 0, min, 0, 0, time.UTC)) }
	shoot := func(ns, name string, created metav1.Time, scheduler, seedName string) *api.Shoot {
		s := &api.Shoot{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, CreationTimestamp: created}}
		s.Spec.SchedulerName = &scheduler
		if seedName != "" {
			s.Spec.SeedName = &seedName
		}
		return s
	}
	got := seedscale.Pending([]*api.Shoot{
		shoot("b", "late", at(9), "seedwarden", ""),
		shoot("b", "placed", at(0), "seedwarden", "seed-a"),
		shoot("b", "theirs", at(0), "default-scheduler", ""),
		shoot("b", "x", at(1), "seedwarden", ""),
		shoot("a", "y", at(1), "seedwarden", ""),
		shoot("a", "first", at(0), "seedwarden", ""),
	}, "seedwarden")
	var names []string
	for _, s := range got {
		names = append(names, s.Namespace+"/"+s.Name)
	}
	assert.Equal(t, []string{"a/first", "a/y", "b/x", "b/late"}, names)
}

// A ManagedSeedSet whose pending replica fails is a set backed off.
func TestNewSetFailing(t *testing.T) {
	m := set(nil, 0, nil)
	m.Status.PendingReplica = &seedmanagement.PendingReplica{Name: "aws-1", Reason: seedmanagement.PendingReasonShootReconcileFailed}
	s, err := seedscale.NewSet(m, snapshot(seed("aws-0", inSet, "30")), nil)
	require.NoError(t, err)
	assert.Equal(t, "aws-1: ShootReconcileFailed", s.Failing)
}
