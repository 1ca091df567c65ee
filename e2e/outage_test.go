package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/pending"
)

// TestOutageAdmitsShootsThatChooseNoSeed: with every seedwarden replica
// stopped, what chooses no seed passes and every seed choice is refused,
// with the failurePolicies and matchConditions of deploy/manifests:
//   - a CREATE without a seed is admitted, unplaced and unclaimed (the
//     mutating webhook fails open; no fail-closed webhook is sent it);
//   - UPDATEs that touch no seed field pass, for a Shoot without a seed and
//     for one with a seed;
//   - a CREATE naming a seed, setting the seed of the Shoot created during
//     the outage, and changing the seedSelector of a Shoot with a seed are
//     refused because seed.shoots.seedwarden.io cannot be called.
//
// Once seedwarden is back the Shoot created during the outage is placed by
// the scheduler that owns it, having never been claimed: gardener-scheduler
// on the gardener target; on the CRD target, which runs no
// gardener-scheduler, seedwarden with schedulerName default-scheduler (as a
// garden without gardener-scheduler is configured), while with the shipped
// schedulerName seedwarden leaves it alone.
func TestOutageAdmitsShootsThatChooseNoSeed(t *testing.T) {
	st := need(t)
	st.startTest(t, webhookPlace, webhookSeed)
	ctx := context.Background()

	// Before the outage: a Shoot with a seed (aws-us1 has no capacity limit).
	seeded := newShoot(t.Name(), awsShoot("us-east-1", "us-east-1a"))
	require.NoError(t, st.c.Create(ctx, seeded))
	seed := st.placedSeed(t, seeded)
	seededKey := client.ObjectKeyFromObject(seeded)
	apiBefore := st.outageSeries(ctx, t)

	st.stopWebhook(t)
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			if err := st.restartWebhook(); err != nil {
				t.Errorf("restarting the webhook: %v", err)
			}
		}
	})

	created := newShoot(t.Name(), awsShoot("us-east-1", "us-east-1b"))
	require.NoError(t, st.c.Create(ctx, created), "a CREATE that chooses no seed, every replica stopped")
	assert.Empty(t, seedName(created))
	assert.Empty(t, admittedSeed(created), "placed although the mutating webhook is down")
	assert.Contains(t, []string{"", api.DefaultSchedulerName}, specSchedulerName(created), "claimed although the mutating webhook is down")
	createdKey := client.ObjectKeyFromObject(created)
	t.Logf("outage: %s created without a seed, spec.schedulerName %q", createdKey, specSchedulerName(created))

	label := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"e2e.seedwarden.io/touched":"true"}}}`))
	require.NoError(t, st.c.Patch(ctx, shootRef(createdKey), label), "a label UPDATE of the Shoot without a seed")
	require.NoError(t, st.c.Patch(ctx, shootRef(seededKey), label), "a label UPDATE of the Shoot on %s", seed)

	withSeed := newShoot(t.Name(), awsShoot("us-east-1", "us-east-1a"), withSeed(seed))
	err := st.c.Create(ctx, withSeed)
	requireFailedClosed(t, err, "a CREATE naming seed %s", seed)

	err = st.setSeed(ctx, createdKey, seed)
	requireFailedClosed(t, err, "setting the seed of %s", createdKey)
	assert.Empty(t, seedNameOf(t, createdKey))

	selector := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"seedSelector":{"matchLabels":{"seed.gardener.cloud/provider":"aws"}}}}`))
	err = st.c.Patch(ctx, shootRef(seededKey), selector)
	requireFailedClosed(t, err, "a seedSelector change of a Shoot on %s", seed)
	st.outageCounted(ctx, t, apiBefore)

	require.NoError(t, st.restartWebhook())
	restarted = true
	if onGardener() {
		st.gardenerSchedulerPlaces(t, createdKey)
		return
	}
	st.unclaimedLeftAlone(t, createdKey)
	st.onlySchedulerPlaces(t, createdKey)
}

// outageSeries is the API server's own metrics, where the suite can read
// them: kube-apiserver's on the CRD target. On the gardener target
// gardener-apiserver calls the Shoot webhooks and its metrics are out of
// reach (the garden serves no /metrics of it): nil.
func (st *suite) outageSeries(ctx context.Context, t *testing.T) []sample {
	t.Helper()
	if onGardener() {
		return nil
	}
	samples, err := st.apiserverMetrics(ctx)
	require.NoError(t, err)
	return samples
}

// outageCounted: the outage shows in the series the alerts of the group
// seedwarden.apiserver (deploy/manifests/prometheusrule.yaml) read, with the
// names and label values they select: a fail-open of the placing webhook
// (SeedwardenWebhookFailingOpen) and refusals for a failed call of a
// fail-closed guard, error_type other than no_error
// (SeedwardenWebhookCallsFailing).
func (st *suite) outageCounted(ctx context.Context, t *testing.T, before []sample) {
	t.Helper()
	after := st.outageSeries(ctx, t)
	if after == nil {
		return
	}
	rose := func(name string, match func(map[string]string) bool) float64 {
		return counterSum(after, name, match) - counterSum(before, name, match)
	}
	failOpen := rose("apiserver_admission_webhook_fail_open_count", func(l map[string]string) bool { return l["name"] == webhookPlace })
	assert.Positive(t, failOpen, "apiserver_admission_webhook_fail_open_count{name=%q} did not rise during the outage", webhookPlace)
	failedCalls := rose("apiserver_admission_webhook_rejection_count", func(l map[string]string) bool {
		return l["name"] == webhookSeed && l["error_type"] != "no_error" && l["error_type"] != ""
	})
	assert.Positive(t, failedCalls, "apiserver_admission_webhook_rejection_count of a fail-closed guard with error_type other than no_error did not rise")
	t.Logf("outage at the API server: %.0f fail-opens of %s, %.0f refusals for failed calls", failOpen, webhookPlace, failedCalls)
}

// requireFailedClosed: err is a refusal because a fail-closed Shoot guard
// could not be called.
func requireFailedClosed(t *testing.T, err error, what string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(what, args...)
	require.Error(t, err, "%s while seedwarden is down", msg)
	assert.True(t, failedCalling(err, webhookSeed),
		"%s: refused, but not for want of a fail-closed Shoot guard: %v", msg, err)
	t.Logf("outage: %s refused: %.200v", msg, err)
}

// stopWebhook stops the suite's webhook process (SIGTERM, exit 0) and waits
// until a dry-run CREATE is admitted unplaced: the API server no longer
// reaches it.
func (st *suite) stopWebhook(t *testing.T) {
	t.Helper()
	code, took, err := st.process().Stop(15 * time.Second)
	require.NoError(t, err)
	require.Equal(t, 0, code, "webhook exit code")
	t.Logf("webhook stopped in %s", took.Round(time.Millisecond))
	probe := func() *unstructured.Unstructured {
		return newShoot("outage-probe", awsShoot("us-east-1", "us-east-1a"))
	}
	require.NoError(t, st.dryRunUntil(context.Background(), 30*time.Second, 100*time.Millisecond, probe, func(sh *unstructured.Unstructured) error {
		if admittedSeed(sh) != "" {
			return fmt.Errorf("dry run still placed")
		}
		return nil
	}), "a dry-run CREATE while the webhook is down")
}

// setSeed sets spec.seedName of a stored Shoot as a user with binding
// permission would: through shoots/binding on the gardener target, through
// the Shoot itself on the CRD target, which has no binding subresource.
func (st *suite) setSeed(ctx context.Context, key types.NamespacedName, seed string) error {
	if onGardener() {
		return st.bind(ctx, key, seed)
	}
	return st.c.Patch(ctx, shootRef(key), client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"spec":{"seedName":%q}}`, seed)))
}

// shootRef is a Shoot to patch by key.
func shootRef(key types.NamespacedName) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(shootGVK)
	u.SetNamespace(key.Namespace)
	u.SetName(key.Name)
	return u
}

// unclaimedLeftAlone: with the shipped schedulerName (seedwarden), the retry
// controller binds a Shoot created after the outage but leaves the unclaimed
// one to gardener-scheduler.
func (st *suite) unclaimedLeftAlone(t *testing.T, key types.NamespacedName) {
	t.Helper()
	after := newShoot(t.Name(), awsShoot("us-east-1", "us-east-1a"))
	require.NoError(t, st.c.Create(context.Background(), after))
	bound := st.placedSeed(t, after)
	assert.Empty(t, seedNameOf(t, key), "schedulerName seedwarden: the unclaimed Shoot is gardener-scheduler's")
	t.Logf("back: %s bound to %s; the unclaimed %s left to gardener-scheduler", client.ObjectKeyFromObject(after), bound, key)
}

// onlySchedulerPlaces: seedwarden as the only scheduler (schedulerName
// default-scheduler) binds the unclaimed Shoot; then the suite's own
// configuration is restored.
func (st *suite) onlySchedulerPlaces(t *testing.T, key types.NamespacedName) {
	t.Helper()
	st.stopWebhook(t)
	cfg, _, err := webhookConfig(st.ports, st.certDir, st.work)
	require.NoError(t, err)
	path := filepath.Join(st.work, "config-only-scheduler.yaml")
	require.NoError(t, os.WriteFile(path, []byte(cfg+"schedulerName: "+api.DefaultSchedulerName+"\n"), 0o644))
	p, err := st.startProcess(path, st.logPath)
	require.NoError(t, err)
	st.procMu.Lock()
	st.proc = p
	st.procMu.Unlock()
	t.Cleanup(func() {
		if _, _, err := st.process().Stop(15 * time.Second); err != nil {
			t.Errorf("stopping the webhook with schedulerName %s: %v", api.DefaultSchedulerName, err)
		}
		if err := st.restartWebhook(); err != nil {
			t.Errorf("restarting the webhook with the suite's configuration: %v", err)
		}
	})
	require.NoError(t, st.waitReady(context.Background(), time.Minute))
	var bound string
	eventually(t, 30*time.Second, func() error {
		if bound = seedNameOf(t, key); bound == "" {
			return fmt.Errorf("Shoot %s not bound yet", key)
		}
		return nil
	}, "seedwarden with schedulerName %s does not bind the Shoot created during the outage", api.DefaultSchedulerName)
	evs := st.eventuallySchedulingEvents(t, key)
	require.Len(t, evs, 1, "SchedulingSuccessful events: %+v", evs)
	assert.Equal(t, pending.EventRecorderName, reporter(evs[0]))
	t.Logf("back with schedulerName %s: %s bound to %s by seedwarden", api.DefaultSchedulerName, key, bound)
}

// gardenerSchedulerPlaces: gardener-scheduler, which gardener-operator
// always runs, binds the Shoot seedwarden never claimed; seedwarden does not.
func (st *suite) gardenerSchedulerPlaces(t *testing.T, key types.NamespacedName) {
	t.Helper()
	gs := st.startGardenerScheduler(t, gardenerSchedulerSyncs)
	var bound string
	eventually(t, 30*time.Second, func() error {
		if bound = seedNameOf(t, key); bound == "" {
			return fmt.Errorf("Shoot %s not bound yet", key)
		}
		return nil
	}, "gardener-scheduler does not bind the Shoot created during the outage (its log: %s)", gs.out)
	evs := st.eventuallySchedulingEvents(t, key)
	require.Len(t, evs, 1, "SchedulingSuccessful events: %+v", evs)
	assert.NotEqual(t, pending.EventRecorderName, reporter(evs[0]), "bound by gardener-scheduler, not seedwarden")
	t.Logf("back: %s bound to %s by %s", key, bound, reporter(evs[0]))
}
