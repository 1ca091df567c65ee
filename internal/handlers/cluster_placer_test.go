package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/utils/ptr"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/metrics"
	"github.com/seedwarden/seedwarden/internal/placement"
	"github.com/seedwarden/seedwarden/internal/placementtoken"
)

// seedCluster is a ClusterReserver that finds the seeds in full full across
// replicas, fails every call with err, and records the calls.
type seedCluster struct {
	full map[string]bool
	err  error

	mu    sync.Mutex
	calls []string // "reserve|check seed key alloc"
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

func (f *seedCluster) Reserve(_ context.Context, seed, key string, alloc int64) error {
	return f.call("reserve", seed, key, alloc)
}

func (f *seedCluster) Check(_ context.Context, seed, key string, alloc int64) error {
	return f.call("check", seed, key, alloc)
}

// The mutating webhook reserves its choice across replicas before it
// answers; a seed found full there is replaced by the next best, in both
// placement modes, and a placement that fails leaves nothing reserved.
func TestShootMutatorReservesAcrossReplicas(t *testing.T) {
	generated := strings.Replace(vShoot("", nil), `"name": "crazy-botany",`, `"generateName": "crazy-",`, 1)
	const key = "garden-dev/crazy-botany"
	tests := []struct {
		name      string
		cluster   *seedCluster // nil: no cluster-wide coordination
		object    string       // default vShoot("", nil)
		reqName   string       // vReview.name
		seeds     int          // ClusterPlacer.Seeds
		dryRun    bool
		wantSeed  string // "" for unplaced
		wantCalls []string
		wantWarn  string // substring of the warning when unplaced
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
			wantWarn:  `the 3 seeds chosen in turn were full across replicas (seed "a" is full`, conflicts: 3,
		},
		{
			name: "two full: the third", cluster: &seedCluster{full: map[string]bool{"a": true, "b": true}},
			wantSeed:  "c",
			wantCalls: []string{"reserve a " + key + " 10", "reserve b " + key + " 10", "reserve c " + key + " 10"}, conflicts: 2,
		},
		{
			name: "no seed left locally after the full ones", cluster: &seedCluster{full: map[string]bool{"a": true, "b": true, "c": true}}, seeds: 5,
			wantCalls: []string{"reserve a " + key + " 10", "reserve b " + key + " 10", "reserve c " + key + " 10"},
			wantWarn:  `a: ` + placement.ExcludedReason, conflicts: 3,
		},
		{
			name: "API error: pending, fails closed", cluster: &seedCluster{err: fmt.Errorf("etcd is down")},
			wantCalls: []string{"reserve a " + key + " 10"},
			wantWarn:  `could not reserve a place on seed "a" across replicas: etcd is down`,
		},
		{
			name: "generateName: no key yet, the local view decides", cluster: &seedCluster{full: map[string]bool{"a": true}},
			object: generated, reqName: "-", wantSeed: "a",
		},
		{name: "no coordination", wantSeed: "a"},
	}
	for _, tt := range tests {
		for _, announce := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, announce=%v", tt.name, announce), func(t *testing.T) {
				store := vStore(vSeed("a", 10), vSeed("b", 10), vSeed("c", 10))
				vShootsOn(store, "b", 1)
				vShootsOn(store, "c", 2)
				reg := prometheus.NewRegistry()
				m := metrics.New(reg)
				p := &ClusterPlacer{Local: store, Seeds: tt.seeds, Metrics: m, Log: logr.Discard()}
				var cluster *seedCluster
				if tt.cluster != nil {
					cluster = &seedCluster{full: tt.cluster.full, err: tt.cluster.err}
					p.Cluster = cluster
				}
				mut := &ShootMutator{
					Placer: p, Options: placement.Options{Strategy: placement.MinimalDistance, NetworkMode: placement.Disjoint},
					SchedulerName: "default-scheduler", Announce: announce, Metrics: m, Log: logr.Discard(),
				}
				object := tt.object
				if object == "" {
					object = vShoot("", nil)
				}
				resp := vServe(t, mut, vReview{uid: "uid-1", name: tt.reqName, object: object, dryRun: tt.dryRun}.body(t))
				require.True(t, resp.Allowed, vMessage(resp))
				shoot := patched(t, object, resp.Patch)

				seed := ptr.Deref(shoot.Spec.SeedName, "")
				if announce {
					assert.Empty(t, seed, "binding mode leaves spec.seedName alone")
					seed = shoot.Annotations[placementtoken.SeedAnnotation]
				}
				assert.Equal(t, tt.wantSeed, seed)
				held, ok := store.Reservation("uid-1")
				switch {
				case tt.wantSeed == "" || tt.dryRun:
					assert.False(t, ok, "nothing may stay reserved (held on %q)", held)
					if tt.wantWarn != "" {
						require.Len(t, resp.Warnings, 1)
						assert.Contains(t, resp.Warnings[0], UnschedulableWarningPrefix)
						assert.Contains(t, resp.Warnings[0], tt.wantWarn)
					}
				default:
					assert.True(t, ok)
					assert.Equal(t, tt.wantSeed, held, "the place is held in memory on the seed chosen")
				}
				if cluster != nil {
					assert.Equal(t, tt.wantCalls, cluster.calls)
				}
				assert.InDelta(t, tt.conflicts, counterValue(t, reg, metrics.ClusterConflictsTotalName), 0)
			})
		}
	}
}

// patched applies a mutating webhook's JSON patch to object.
func patched(t *testing.T, object string, patch []byte) *api.Shoot {
	t.Helper()
	out := []byte(object)
	if len(patch) > 0 {
		p, err := jsonpatch.DecodePatch(patch)
		require.NoError(t, err)
		out, err = p.Apply(out)
		require.NoError(t, err)
	}
	var shoot api.Shoot
	require.NoError(t, json.Unmarshal(out, &shoot))
	return &shoot
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

// The fast path answers a placement that went to the next-best seed exactly
// as controller-runtime's webhook does.
func TestClusterPlacerFastPathMatchesAdmission(t *testing.T) {
	for _, announce := range []bool{false, true} {
		bodies := map[string]string{}
		for name, mk := range map[string]func(*ShootMutator) http.Handler{
			"fast":   func(m *ShootMutator) http.Handler { return NewMutatingHTTPHandler(m, 0) },
			"oracle": oracle,
		} {
			store := vStore(vSeed("a", 10), vSeed("b", 10))
			vShootsOn(store, "b", 1)
			cluster := &seedCluster{full: map[string]bool{"a": true}}
			m := &ShootMutator{
				Placer:        &ClusterPlacer{Local: store, Cluster: cluster, Log: logr.Discard()},
				Options:       placement.Options{Strategy: placement.MinimalDistance, NetworkMode: placement.Disjoint},
				SchedulerName: "default-scheduler", Announce: announce, Log: logr.Discard(),
			}
			req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/mutate-shoots",
				strings.NewReader(vReview{uid: "uid-1", object: vShoot("", nil)}.body(t)))
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			mk(m).ServeHTTP(rec, req)
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
			require.Len(t, cluster.calls, 2, name)
			bodies[name] = rec.Body.String()
		}
		assert.Contains(t, bodies["fast"], `"allowed":true`)
		assert.Equal(t, bodies["oracle"], bodies["fast"], "announce=%v", announce)
	}
}
