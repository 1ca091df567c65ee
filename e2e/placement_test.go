package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/handlers"
)

// Placement at admission: the seed the mutating webhook gives a Shoot, the
// warning when none fits, and a seed that stops being ready.

// TestPlacement: a Shoot created without spec.seedName gets the seed
// `webhook simulate` chooses for the same landscape, Shoot after Shoot (each
// placement changes the usage the next one sees).
func TestPlacement(t *testing.T) {
	st := need(t)
	st.logOnFailure(t)
	st.cleanupShoots(t)
	st.waitSettled(t)
	ctx := context.Background()

	cases := []struct {
		name  string
		shoot *unstructured.Unstructured
		known string // the seed on the untouched example landscape (docs/commands.md), if any
	}{
		{"examples/shoot.yaml", shootFromFile(t, t.Name(), "examples/shoot.yaml"), "aws-eu2"},
		{"second eu-central-1 Shoot", newShoot(t.Name(), awsShoot("eu-central-1", "eu-central-1b")), "aws-eu2"},
		{"third eu-central-1 Shoot: usage tied, name decides", newShoot(t.Name(), awsShoot("eu-central-1", "eu-central-1c")), "aws-eu1"},
		{"gcp europe-west1 (Enforce zones)", newShoot(t.Name(), gcpShoot("europe-west1", "europe-west1-b")), "gcp-eu1"},
		{"purpose testing", newShoot(t.Name(), awsShoot("us-east-1", "us-east-1a"), withPurpose("testing")), ""},
	}
	for _, tc := range cases {
		want := st.simulate(t, tc.shoot)
		require.False(t, want.Unschedulable, "%s: simulate finds no seed: %s %v", tc.name, want.Message, want.Reasons)
		if tc.known != "" {
			assert.Equal(t, tc.known, want.Seed, "%s: simulate on the example landscape", tc.name)
		}
		require.NoError(t, st.c.Create(ctx, tc.shoot), tc.name)
		assert.Equal(t, want.Seed, admittedSeed(tc.shoot), "%s: the seed in the response (mode %s)", tc.name, placementMode)

		bound := st.placedSeed(t, tc.shoot)
		assert.Equal(t, want.Seed, bound, "%s: stored spec.seedName", tc.name)
		t.Logf("%s: %s/%s -> %s", tc.name, tc.shoot.GetNamespace(), tc.shoot.GetName(), bound)
	}
}

// TestUnschedulableWarning: a Shoot no seed fits is admitted unchanged, with
// an admission warning that says why, and stays without seed.
func TestUnschedulableWarning(t *testing.T) {
	st := need(t)
	st.logOnFailure(t)
	st.cleanupShoots(t)
	ctx := context.Background()
	c, warns := st.clientAs(t, "")

	cases := []struct {
		name  string
		shoot *unstructured.Unstructured
	}{
		{"examples/shoot-unschedulable.yaml (only a tainted seed selected)", shootFromFile(t, t.Name(), "examples/shoot-unschedulable.yaml")},
		{"us-central1 gcp: the only seed there is full", newShoot(t.Name(), gcpShoot("us-central1", "us-central1-a"))},
		{"eu-west-1: its seed is tainted, and strategy SameRegion (the default) looks no further", newShoot(t.Name(), awsShoot("eu-west-1", "eu-west-1a"))},
	}
	for _, tc := range cases {
		sim := st.simulate(t, tc.shoot)
		require.True(t, sim.Unschedulable, "%s: simulate places it on %s", tc.name, sim.Seed)

		warns.take()
		require.NoError(t, c.Create(ctx, tc.shoot), tc.name)
		got := warns.take()
		assert.Empty(t, admittedSeed(tc.shoot), tc.name)
		var ours []string
		for _, w := range got {
			if strings.HasPrefix(w, handlers.UnschedulableWarningPrefix) {
				ours = append(ours, w)
			}
		}
		require.Len(t, ours, 1, "%s: want one seedwarden warning, got %q", tc.name, got)
		for seed := range sim.Reasons {
			assert.Contains(t, ours[0], seed, "%s: the warning names every seed's reason", tc.name)
		}
		t.Logf("%s: warning %q", tc.name, ours[0])

		stored := &unstructured.Unstructured{}
		stored.SetGroupVersionKind(shootGVK)
		require.NoError(t, st.c.Get(ctx, client.ObjectKeyFromObject(tc.shoot), stored))
		assert.Empty(t, seedName(stored), "%s: stored without spec.seedName", tc.name)
	}
}

// TestSeedNotReadyStopsPlacements: once a seed's GardenletReady turns False,
// new Shoots avoid it within a second.
func TestSeedNotReadyStopsPlacements(t *testing.T) {
	st := need(t)
	st.logOnFailure(t)
	st.cleanupShoots(t)
	st.waitSettled(t)
	ctx := context.Background()

	shoot := func() *unstructured.Unstructured {
		return newShoot(t.Name(), awsShoot("eu-central-1", "eu-central-1a"))
	}
	target := st.simulate(t, shoot()).Seed
	require.NotEmpty(t, target)

	setReady := func(status string) {
		t.Helper()
		require.NoError(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
			var seed api.Seed
			if err := st.c.Get(ctx, keyOf("", target), &seed); err != nil {
				return err
			}
			now := metav1.Now()
			found := false
			for i := range seed.Status.Conditions {
				if c := &seed.Status.Conditions[i]; c.Type == "GardenletReady" {
					c.Status, c.LastTransitionTime, c.LastUpdateTime, found = status, now, now, true
				}
			}
			if !found {
				return fmt.Errorf("seed %s has no GardenletReady condition", target)
			}
			return st.c.Status().Update(ctx, &seed)
		}))
	}
	setReady("False")
	changed := time.Now()
	t.Cleanup(func() {
		setReady("True")
		// Wait until the webhook places onto the seed again, so later tests
		// see the landscape as it was.
		var want simResult
		simulated := func() *unstructured.Unstructured {
			sh := shoot()
			want = st.simulate(t, sh)
			return sh
		}
		require.NoError(t, st.dryRunUntil(context.Background(), 10*time.Second, eventuallyInterval, simulated,
			func(sh *unstructured.Unstructured) error { return onSeed(want.Seed)(sh) }))
	})

	const bound = time.Second
	var avoided time.Duration = -1
	var onTarget int
	for time.Since(changed) < bound {
		sh := shoot()
		require.NoError(t, st.c.Create(ctx, sh))
		if got := admittedSeed(sh); got != target {
			require.NotEmpty(t, got, "the Shoot was not placed at all")
			avoided = time.Since(changed)
			break
		}
		onTarget++
	}
	require.GreaterOrEqual(t, avoided, time.Duration(0), "Shoots still land on %s %s after it turned NotReady", target, bound)
	t.Logf("%s NotReady: the first Shoot avoiding it was admitted %s after the status update (%d placed on it before)",
		target, avoided.Round(time.Millisecond), onTarget)
	for i := 0; i < 5; i++ {
		sh := shoot()
		require.NoError(t, st.c.Create(ctx, sh))
		assert.NotEqual(t, target, admittedSeed(sh))
		assert.NotEmpty(t, admittedSeed(sh))
	}
}
