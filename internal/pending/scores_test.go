package pending

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// scoreSeed is a ready aws seed in eu-west-1 holding alloc Shoots.
func scoreSeed(name string, alloc int64) *api.Seed {
	nodes := "10.3.0.0/16"
	return &api.Seed{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: api.SeedSpec{
			Provider: api.SeedProvider{Type: "aws", Region: "eu-west-1", Zones: []string{"eu-west-1a"}},
			Networks: api.SeedNetworks{Nodes: &nodes, Pods: "10.1.0.0/16", Services: "10.2.0.0/16"},
			Backup:   &api.SeedBackup{Provider: "aws"},
			DNS:      api.SeedDNS{Defaults: []api.SeedDNSProviderConfig{{Domain: "seed.example.com"}}},
		},
		Status: api.SeedStatus{
			LastOperation: &api.LastOperation{State: "Succeeded", Type: "Reconcile"},
			Conditions: []api.Condition{
				{Type: api.ConditionGardenletReady, Status: api.ConditionTrue},
				{Type: api.ConditionBackupBucketsReady, Status: api.ConditionTrue},
			},
			Allocatable: corev1.ResourceList{api.ResourceShoots: *resource.NewQuantity(alloc, resource.DecimalSI)},
		},
	}
}

// The retry controller ranks with the configured profile and its
// SchedulingSuccessful event explains the choice: the seed, then the
// breakdown. Bin-packing fills the smaller seed (1 of 4 beats 1 of 10);
// Gardener's rule (no profile) takes aws-eu1, first by name at equal usage,
// and its event says only the seed, as before.
func TestScheduledEventCarriesScores(t *testing.T) {
	for _, tc := range []struct {
		name    string
		profile *placement.Profile
		want    string
	}{
		{"profile", &placement.Profile{Scorers: []placement.WeightedScorer{{Name: placement.ScoreMostAllocated, Weight: 3}}},
			`Scheduled to seed "aws-eu2"; scores: aws-eu2 75 (MostAllocated 25x3) > aws-eu1 30 (MostAllocated 10x3); 2 seeds scored`},
		{"no profile", nil, `Scheduled to seed "aws-eu1"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, BindThroughSubresource, fullShoot("s1", nil))
			store := cache.NewStore(cache.Options{})
			store.Apply(&api.CloudProfile{ObjectMeta: metav1.ObjectMeta{Name: "aws"}, Spec: api.CloudProfileSpec{Type: "aws"}})
			ns := "garden-dev"
			store.Apply(&api.Project{ObjectMeta: metav1.ObjectMeta{Name: "dev"}, Spec: api.ProjectSpec{Namespace: &ns}})
			store.Apply(scoreSeed("aws-eu1", 10))
			store.Apply(scoreSeed("aws-eu2", 4))
			f.r.Store = store
			f.r.Options.Scoring = tc.profile
			f.reconcile(t, "s1")
			events := f.recorder.Events()
			require.Len(t, events, 1)
			assert.Equal(t, ReasonSchedulingSuccessful, events[0].reason)
			assert.Equal(t, tc.want, events[0].note)
		})
	}
}

// A breakdown longer than an event takes is cut on a rune boundary; the
// seed stays in front.
func TestScheduledMessageTruncated(t *testing.T) {
	msg := scheduledMessage("aws-eu1", strings.Repeat("é", MaxMessageBytes))
	assert.LessOrEqual(t, len(msg), MaxMessageBytes)
	assert.True(t, strings.HasPrefix(msg, `Scheduled to seed "aws-eu1"; scores: éé`), msg)
	assert.True(t, strings.HasSuffix(msg, "…"), msg)
	assert.Equal(t, `Scheduled to seed "aws-eu1"`, scheduledMessage("aws-eu1", ""))
}
