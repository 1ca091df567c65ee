package seedreserve

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/metrics"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// seedCluster is a ClusterReserver that finds the seeds in full full across
// replicas, fails every call with err, and records the calls.
type seedCluster struct {
	full map[string]bool
	err  error

	mu    sync.Mutex
	calls []string // "reserve|check seed key alloc"
	// holders are those of the reserve calls, in order.
	holders []cache.Holder
}

func (f *seedCluster) call(op, seed, key string, alloc int64) error {
	f.mu.Lock()
	f.calls = append(f.calls, fmt.Sprintf("%s %s %s %d", op, seed, key, alloc))
	f.mu.Unlock()
	switch {
	case f.err != nil:
		return f.err
	case f.full[seed]:
		return &cache.CapacityError{Seed: seed, Shoots: alloc, Allocatable: alloc}
	}
	return nil
}

func (f *seedCluster) ReserveFor(_ context.Context, seed string, h cache.Holder, alloc int64) error {
	f.mu.Lock()
	f.holders = append(f.holders, h)
	f.mu.Unlock()
	return f.call("reserve", seed, h.Key, alloc)
}

func (f *seedCluster) Check(_ context.Context, seed, key string, alloc int64) error {
	return f.call("check", seed, key, alloc)
}

// placerSeed is a ready aws seed in eu-west-1 with alloc allocatable shoots,
// which takes placerShoot.
func placerSeed(name string, alloc int64) *api.Seed {
	nodes := "10.3.0.0/16"
	return &api.Seed{
		TypeMeta:   metav1.TypeMeta{APIVersion: "core.gardener.cloud/v1beta1", Kind: "Seed"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: api.SeedSpec{
			Provider: api.SeedProvider{Type: "aws", Region: "eu-west-1", Zones: []string{"eu-west-1a", "eu-west-1b", "eu-west-1c"}},
			Networks: api.SeedNetworks{Nodes: &nodes, Pods: "10.1.0.0/16", Services: "10.2.0.0/16"},
		},
		Status: api.SeedStatus{
			LastOperation: &api.LastOperation{State: "Succeeded", Type: "Reconcile"},
			Conditions:    []api.Condition{{Type: api.ConditionGardenletReady, Status: api.ConditionTrue}},
			Allocatable:   corev1.ResourceList{api.ResourceShoots: *resource.NewQuantity(alloc, resource.DecimalSI)},
		},
	}
}

// placerShoot is the Shoot garden-dev/name (name "": only generateName) on
// aws in eu-west-1.
func placerShoot(name string) *api.Shoot {
	s := &api.Shoot{
		TypeMeta:   metav1.TypeMeta{APIVersion: "core.gardener.cloud/v1beta1", Kind: "Shoot"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "garden-dev", Name: name},
		Spec: api.ShootSpec{
			CloudProfile: &api.CloudProfileReference{Kind: api.KindCloudProfile, Name: "aws"},
			Region:       "eu-west-1",
			Provider:     api.ShootProvider{Type: "aws", Workers: []api.Worker{{Name: "w", Zones: []string{"eu-west-1a"}}}},
		},
	}
	if name == "" {
		s.GenerateName = "crazy-"
	}
	return s
}

// placerStore is a replica's cache: the aws CloudProfile, project dev for
// garden-dev, and seeds a, b and c of 10 places, on which 0, 1 and 2 Shoots
// run, so that the local view ranks them a, b, c.
func placerStore() *cache.Store {
	s := cache.NewStore(cache.Options{})
	s.Apply(&api.CloudProfile{
		TypeMeta:   metav1.TypeMeta{APIVersion: "core.gardener.cloud/v1beta1", Kind: "CloudProfile"},
		ObjectMeta: metav1.ObjectMeta{Name: "aws"},
		Spec:       api.CloudProfileSpec{Type: "aws"},
	})
	ns := "garden-dev"
	s.Apply(&api.Project{ObjectMeta: metav1.ObjectMeta{Name: "dev"}, Spec: api.ProjectSpec{Namespace: &ns}})
	for i, name := range []string{"a", "b", "c"} {
		s.Apply(placerSeed(name, 10))
		for j := range i {
			s.Apply(shootObj("garden-other", fmt.Sprintf("%s-%d", name, j), name))
		}
	}
	return s
}

var placerOptions = placement.Options{Strategy: placement.MinimalDistance, NetworkMode: placement.Disjoint}

// The choice is reserved across replicas before the webhook answers; a seed
// found full there is replaced by the next best, and a placement that fails
// leaves nothing reserved.
func TestClusterPlacerReservesAcrossReplicas(t *testing.T) {
	const key = "garden-dev/crazy-botany"
	tests := []struct {
		name      string
		cluster   *seedCluster // nil: no cluster-wide coordination
		shoot     string       // the Shoot's name; "" for generateName
		seeds     int          // ClusterPlacer.Seeds
		dryRun    bool
		wantSeed  string // "" for unplaced
		wantCalls []string
		wantWhy   string // substring of the summary when unplaced
		conflicts float64
	}{
		{
			name: "first choice has room", cluster: &seedCluster{},
			wantSeed: "a", wantCalls: []string{"reserve a " + key + " 10"},
		},
		{
			name: "first choice full across replicas: the next best", cluster: &seedCluster{full: map[string]bool{"a": true}},
			wantSeed: "b", wantCalls: []string{"reserve a " + key + " 10", "reserve b " + key + " 10"}, conflicts: 1,
		},
		{
			name: "dry run checks", cluster: &seedCluster{full: map[string]bool{"a": true}}, dryRun: true,
			wantSeed: "b", wantCalls: []string{"check a " + key + " 10", "check b " + key + " 10"}, conflicts: 1,
		},
		{
			name: "every seed tried is full: pending", cluster: &seedCluster{full: map[string]bool{"a": true, "b": true, "c": true}},
			wantCalls: []string{"reserve a " + key + " 10", "reserve b " + key + " 10", "reserve c " + key + " 10"},
			wantWhy:   `the 3 seeds chosen in turn were full across replicas (seed "a" is full`, conflicts: 3,
		},
		{
			name: "two full: the third", cluster: &seedCluster{full: map[string]bool{"a": true, "b": true}},
			wantSeed:  "c",
			wantCalls: []string{"reserve a " + key + " 10", "reserve b " + key + " 10", "reserve c " + key + " 10"}, conflicts: 2,
		},
		{
			name: "no seed left locally after the full ones", cluster: &seedCluster{full: map[string]bool{"a": true, "b": true, "c": true}}, seeds: 5,
			wantCalls: []string{"reserve a " + key + " 10", "reserve b " + key + " 10", "reserve c " + key + " 10"},
			wantWhy:   `a: ` + placement.ExcludedReason, conflicts: 3,
		},
		{
			name: "API error: pending, fails closed", cluster: &seedCluster{err: fmt.Errorf("etcd is down")},
			wantCalls: []string{"reserve a " + key + " 10"},
			wantWhy:   `could not reserve a place on seed "a" across replicas: etcd is down`,
		},
		{
			name: "generateName: no key yet, the local view decides", cluster: &seedCluster{full: map[string]bool{"a": true}},
			shoot: "-", wantSeed: "a",
		},
		{
			name: "a name the cache holds: refused later (AlreadyExists), reserved nowhere else", cluster: &seedCluster{full: map[string]bool{"a": true}},
			shoot: "existing", wantSeed: "a",
		},
		{name: "no coordination", wantSeed: "a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := placerStore()
			reg := prometheus.NewRegistry()
			p := &ClusterPlacer{Local: store, Seeds: tt.seeds, Metrics: metrics.New(reg), Log: logr.Discard()}
			var cluster *seedCluster
			if tt.cluster != nil {
				cluster = &seedCluster{full: tt.cluster.full, err: tt.cluster.err}
				p.Cluster = cluster
			}
			name := "crazy-botany"
			switch tt.shoot {
			case "-":
				name = ""
			case "existing":
				pending := placerShoot(name)
				pending.UID = "uid-older"
				store.Apply(pending)
			}
			reservationKey := "uid-1"
			if tt.dryRun {
				reservationKey = ""
			}

			d, unreserved := p.Place(t.Context(), placerShoot(name), placerOptions, reservationKey, "")
			require.NoError(t, unreserved)
			assert.Equal(t, tt.wantSeed, d.Seed)
			held, ok := store.Reservation("uid-1")
			switch {
			case tt.wantSeed == "" || tt.dryRun:
				assert.False(t, ok, "nothing may stay reserved (held on %q)", held)
				if tt.wantWhy != "" {
					assert.False(t, d.Schedulable())
					assert.Contains(t, d.Summary(), tt.wantWhy)
				}
			default:
				assert.True(t, ok)
				assert.Equal(t, tt.wantSeed, held, "the place is held in memory on the seed chosen")
			}
			if cluster != nil {
				assert.Equal(t, tt.wantCalls, cluster.calls)
				for _, h := range cluster.holders {
					assert.Equal(t, cache.Holder{ShootRef: cache.ShootRef{Key: key, ID: "uid-1"}}, h, "the entry is the request's")
				}
			}
			assert.InDelta(t, tt.conflicts, counterValue(t, reg, metrics.ClusterConflictsTotalName), 0)
		})
	}
}

// counterValue is the value of the unlabelled counter name in reg (0 when
// absent).
func counterValue(t *testing.T, reg prometheus.Gatherer, name string) float64 {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() == name && len(f.GetMetric()) == 1 {
			return f.GetMetric()[0].GetCounter().GetValue()
		}
	}
	return 0
}

// limitedCluster refuses every Reserve at a limit and records the calls.
type limitedCluster struct{ seedCluster }

func (f *limitedCluster) ReserveFor(_ context.Context, seed string, h cache.Holder, alloc int64) error {
	_ = f.call("reserve", seed, h.Key, alloc)
	return &cache.LimitError{Namespace: "garden-dev", Reason: metrics.RefusedReasonTotal, Limit: 1}
}

// When the cluster-wide reservations refuse at their limit, the decision
// stands without a reservation (the mutating webhook then admits the Shoot
// without a seed, for the retry controller), and nothing is held in memory
// either.
func TestClusterPlacerAtClusterLimit(t *testing.T) {
	store := placerStore()
	cluster := &limitedCluster{}
	p := &ClusterPlacer{Local: store, Cluster: cluster}
	d, unreserved := p.Place(t.Context(), placerShoot("crazy-botany"), placerOptions, "uid-1", "")
	var limit *cache.LimitError
	require.ErrorAs(t, unreserved, &limit)
	assert.Equal(t, "a", d.Seed)
	assert.Equal(t, []string{"reserve a garden-dev/crazy-botany 10"}, cluster.calls)
	assert.Zero(t, store.Usage("a"))
	_, held := store.Reservation("uid-1")
	assert.False(t, held)
}
