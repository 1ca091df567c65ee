package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/handlers"
)

// enforcedReplica is the configuration of a replica whose resource-size
// limit for Shoots (the suite's 8Ki) and capacity guard have enforcement
// action; the suite's own webhook denies with both.
func enforcedReplica(action string) replicaOptions {
	return replicaOptions{replace: [][2]string{
		{"    size: 8Ki\n", "    size: 8Ki\n    enforcement: " + action + "\n"},
		{"  reservationNamespace: seedwarden\n", "  reservationNamespace: seedwarden\n  enforcement: " + action + "\n"},
	}}
}

// TestEnforcementWarnAndDeny: the suite's Shoot size limit, given
// enforcement warn, admits an oversized Shoot with a warning and a
// WouldBeDenied event, counts it, and the Shoot is stored; in deny (the
// suite's webhook) the same Shoot is refused. A placement on a full seed is
// admitted by a capacity guard in warn (with a warning) and in dryrun
// (silently), and neither leaves a reservation for it, in the seed's
// reservation ConfigMap nor in the replica's memory; deny refuses it.
func TestEnforcementWarnAndDeny(t *testing.T) {
	st := need(t)
	st.requireWebhook(t, webhookShootSize, webhookSeed)
	if st.sizeLimit == nil {
		t.Fatal("no resource-size configuration (see sizeLimitCandidates in e2e/webhook_config_test.go)")
	}
	st.logOnFailure(t)
	ctx := context.Background()
	const (
		label    = "e2e.seedwarden.io/enforcement-test"
		fullSeed = "e2e-enforce-full"
	)
	// A seed that takes no Shoot at all: every placement on it is one the
	// capacity guard refuses. Its Shoots are deleted before it (cleanups
	// run last first).
	st.createSeedsLike(t, "aws-eu2", label, map[string]int64{fullSeed: 0})
	st.cleanupShoots(t)
	st.waitSettled(t)

	// us-east-1 goes to aws-us1, which has no capacity limit.
	oversized := func(name string) *unstructured.Unstructured {
		return newShoot(t.Name(), awsShoot("us-east-1", "us-east-1a"), withName(name),
			withAnnotation("e2e.seedwarden.io/padding", strings.Repeat("x", int(2*st.sizeLimit.limit))))
	}
	onFullSeed := func(name string) *unstructured.Unstructured {
		return newShoot(t.Name(), awsShoot("eu-central-1", "eu-central-1a"), withName(name), withSeed(fullSeed))
	}
	noReservation := func() {
		t.Helper()
		var cm corev1.ConfigMap
		err := st.c.Get(ctx, keyOf(seedwardenNamespace, "seedwarden-capacity-"+fullSeed), &cm)
		if !apierrors.IsNotFound(err) {
			require.NoError(t, err)
			assert.Empty(t, cm.Data, "reservation entries on %s", fullSeed)
		}
	}
	c, warned := st.clientAs(t, "")

	// deny: the suite's webhook refuses both.
	err := c.Create(ctx, oversized("e2e-enforce-big"))
	requireDenied(t, err, webhookShootSize)
	t.Logf("deny, oversized: %.200s", err)
	err = c.Create(ctx, onFullSeed("e2e-enforce-onto-full"))
	requireDenied(t, err, webhookSeed)
	t.Logf("deny, full seed: %.200s", err)
	noReservation()
	warned.take()

	ca, err := newReplicaCA()
	require.NoError(t, err)
	for _, action := range []string{handlers.EnforceWarn, handlers.EnforceDryRun} {
		r := st.startReplicaWith(t, "enforce-"+action, ca, enforcedReplica(action))
		require.NoError(t, waitReplicaReady(r, 60*time.Second))
		eventually(t, 10*time.Second, func() error { return knowsSeeds(r.metricsURL(), map[string]int64{fullSeed: 0}) })
		restore := st.routeWebhooks(t, r.webhookAddr(), append(append([]byte(nil), st.caBundle...), ca.CertPEM...), nil)
		warned.take()

		// The same Shoots as above (warn: the same names; they were refused
		// there).
		big, full := oversized("e2e-enforce-big"), onFullSeed("e2e-enforce-onto-full")
		if action == handlers.EnforceDryRun {
			big, full = oversized("e2e-enforce-big-dryrun"), onFullSeed("e2e-enforce-onto-full-dryrun")
		}
		require.NoError(t, c.Create(ctx, big), "%s admits the oversized Shoot", action)
		sizeWarnings := enforcementWarnings(warned.take())
		require.NoError(t, c.Create(ctx, full), "%s admits the placement on the full seed", action)
		capacityWarnings := enforcementWarnings(warned.take())
		switch action {
		case handlers.EnforceWarn:
			require.Len(t, sizeWarnings, 1)
			assert.Contains(t, sizeWarnings[0], fmt.Sprintf("exceeds the limit of 8Ki (%d bytes)", st.sizeLimit.limit))
			assert.Contains(t, sizeWarnings[0], "resource-size enforcement is warn; deny would refuse this request")
			require.Len(t, capacityWarnings, 1)
			assert.Contains(t, capacityWarnings[0], fmt.Sprintf("seed %q is full", fullSeed))
			assert.Contains(t, capacityWarnings[0], "capacity enforcement is warn")
			t.Logf("warnings: %s | %s", sizeWarnings[0], capacityWarnings[0])
		default:
			assert.Empty(t, sizeWarnings, "dryrun admits silently")
			assert.Empty(t, capacityWarnings, "dryrun admits silently")
		}

		// Stored as sent.
		var stored api.Shoot
		require.NoError(t, st.c.Get(ctx, client.ObjectKeyFromObject(big), &stored))
		assert.Len(t, stored.Annotations["e2e.seedwarden.io/padding"], int(2*st.sizeLimit.limit))
		require.NoError(t, st.c.Get(ctx, client.ObjectKeyFromObject(full), &stored))
		assert.Equal(t, fullSeed, ptr.Deref(stored.Spec.SeedName, ""))

		// Counted.
		samples, err := scrape(r.metricsURL())
		require.NoError(t, err)
		refusals := func(guard string) float64 {
			return counterSum(samples, "seedwarden_guard_refusals_total", func(l map[string]string) bool {
				return l["guard"] == guard && l["action"] == action
			})
		}
		assert.Equal(t, 1.0, refusals(handlers.WebhookResourceSize), "resource-size refusals under %s", action)
		assert.Equal(t, 1.0, refusals(handlers.WebhookCapacity), "capacity refusals under %s", action)

		// No place was taken for the refused placement: no entry in the
		// seed's ConfigMap, and once the Shoot is in the replica's cache
		// it counts as a Shoot and nothing more.
		noReservation()
		eventually(t, 10*time.Second, func() error {
			samples, err := scrape(r.metricsURL())
			if err != nil {
				return err
			}
			onSeed := func(l map[string]string) bool { return l["seed"] == fullSeed }
			shoots := counterSum(samples, "seedwarden_seed_shoots", onSeed)
			charged := counterSum(samples, "seedwarden_seed_charged_shoots", onSeed)
			want := 1.0
			if action == handlers.EnforceDryRun {
				want = 2
			}
			if shoots != want || charged != shoots {
				return fmt.Errorf("seed %s: %v Shoots, %v charged; want %v and no reservation", fullSeed, shoots, charged, want)
			}
			return nil
		})

		if action == handlers.EnforceWarn {
			for _, sh := range []*unstructured.Unstructured{big, full} {
				note := st.wouldBeDeniedEvent(t, sh.GetName())
				t.Logf("event on %s: %s", sh.GetName(), note)
			}
		}
		restore()
		_, _, err = r.proc.Stop(15 * time.Second)
		require.NoError(t, err)
	}
	// dryrun recorded nothing.
	for _, name := range []string{"e2e-enforce-big-dryrun", "e2e-enforce-onto-full-dryrun"} {
		assert.Empty(t, st.eventsAbout(t, name), "events about %s", name)
	}
	noReservation()
}

// enforcementWarnings are those of warnings that a guard's enforcement gave.
func enforcementWarnings(warnings []string) []string {
	var out []string
	for _, w := range warnings {
		if strings.Contains(w, "deny would refuse this request") {
			out = append(out, w)
		}
	}
	return out
}

// wouldBeDeniedEvent waits for the one WouldBeDenied event about the Shoot
// name in the project namespace and returns its note.
func (st *suite) wouldBeDeniedEvent(t *testing.T, name string) string {
	t.Helper()
	var notes []string
	eventually(t, 15*time.Second, func() error {
		notes = st.eventsAbout(t, name)
		if len(notes) == 0 {
			return fmt.Errorf("no %s event about Shoot %s", handlers.ReasonWouldBeDenied, name)
		}
		return nil
	})
	require.Len(t, notes, 1)
	return notes[0]
}

// eventsAbout lists the notes of the WouldBeDenied events about the Shoot
// name in the project namespace.
func (st *suite) eventsAbout(t *testing.T, name string) []string {
	t.Helper()
	var list eventsv1.EventList
	require.NoError(t, st.c.List(context.Background(), &list, client.InNamespace(projectNamespace)))
	var notes []string
	for _, e := range list.Items {
		if e.Regarding.Kind == "Shoot" && e.Regarding.Name == name && e.Reason == handlers.ReasonWouldBeDenied {
			assert.Equal(t, "Warning", e.Type)
			assert.Equal(t, handlers.EventRecorderName, e.ReportingController)
			notes = append(notes, e.Note)
		}
	}
	return notes
}
