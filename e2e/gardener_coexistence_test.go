package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/e2e/proc"
	"github.com/seedwarden/seedwarden/internal/config"
	"github.com/seedwarden/seedwarden/internal/pending"
	"github.com/seedwarden/seedwarden/internal/placementtoken"
)

// restartWebhook starts the webhook process again and waits until it
// places a dry-run CREATE.
func (st *suite) restartWebhook() error {
	if err := st.startWebhook(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := st.waitReady(ctx, time.Minute); err != nil {
		return err
	}
	probe := func() *unstructured.Unstructured {
		return newShoot("restart-probe", awsShoot("eu-central-1", "eu-central-1a"))
	}
	return st.dryRunUntil(ctx, 30*time.Second, 100*time.Millisecond, probe, onAnySeed)
}

// gardenerScheduler is a running gardener-scheduler process.
type gardenerScheduler struct {
	proc    *proc.Process
	out     string
	metrics string // its /metrics URL
}

// GardenerSchedulerBinEnv overrides the gardener-scheduler binary (default
// .cache/gardener/bin/gardener-scheduler).
const GardenerSchedulerBinEnv = "SEEDWARDEN_E2E_GARDENER_SCHEDULER_BIN"

// gardenerSchedulerConfig is its configuration: its ServiceAccount's
// kubeconfig (gardenerSchedulerKubeconfig), no leader election, probes and
// metrics on loopback.
// Arguments: kubeconfig, health port, metrics port, concurrentSyncs.
const gardenerSchedulerConfig = `apiVersion: scheduler.config.gardener.cloud/v1alpha1
kind: SchedulerConfiguration
clientConnection:
  kubeconfig: %s
leaderElection:
  leaderElect: false
logLevel: info
logFormat: json
server:
  healthProbes:
    bindAddress: 127.0.0.1
    port: %d
  metrics:
    bindAddress: 127.0.0.1
    port: %d
schedulers:
  shoot:
    concurrentSyncs: %d
    candidateDeterminationStrategy: SameRegion
`

// gardenerSchedulerSyncs is gardener-scheduler's concurrentSyncs in the
// tests that have it bind a Shoot or two.
const gardenerSchedulerSyncs = 2

// startGardenerScheduler starts gardener-scheduler against the garden with
// concurrentSyncs workers and waits until it is ready; it is stopped when t
// ends, if not before.
func (st *suite) startGardenerScheduler(t *testing.T, concurrentSyncs int) *gardenerScheduler {
	t.Helper()
	bin := os.Getenv(GardenerSchedulerBinEnv)
	if bin == "" {
		bin = filepath.Join(st.root, ".cache", "gardener", "bin", "gardener-scheduler")
	}
	_, err := os.Stat(bin)
	require.NoError(t, err, "gardener-scheduler (bash hack/gardener-bins.sh builds it)")
	health, err := freePort()
	require.NoError(t, err)
	metrics, err := freePort()
	require.NoError(t, err)
	kubeconfig, err := st.gardenerSchedulerKubeconfig(context.Background())
	require.NoError(t, err)
	cfgPath := filepath.Join(st.work, "gardener-scheduler.yaml")
	require.NoError(t, os.WriteFile(cfgPath, fmt.Appendf(nil, gardenerSchedulerConfig, kubeconfig, health, metrics, concurrentSyncs), 0o600))
	// Not *.log: the RBAC check of the suite reads those as seedwarden's.
	// Appended: a benchmark starts it once per phase.
	g := &gardenerScheduler{out: filepath.Join(st.work, "gardener-scheduler.out"),
		metrics: fmt.Sprintf("http://127.0.0.1:%d/metrics", metrics)}
	g.proc, err = proc.Start(proc.Options{Name: "gardener-scheduler", Path: bin, Args: []string{"--config", cfgPath}, Log: g.out,
		Env: []string{"KUBECONFIG=" + kubeconfig}})
	require.NoError(t, err)
	t.Cleanup(func() { g.stop(t) })
	started := time.Now()
	require.NoError(t, g.proc.WaitFor(context.Background(), time.Minute, 100*time.Millisecond, func() error {
		resp, err := probeClient.Get(fmt.Sprintf("http://127.0.0.1:%d/readyz", health))
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("readyz: %s", resp.Status)
		}
		return nil
	}), "gardener-scheduler not ready")
	t.Logf("gardener-scheduler ready in %s", time.Since(started).Round(time.Millisecond))
	return g
}

// stop ends gardener-scheduler (SIGTERM, after 20s SIGKILL); once stopped,
// it does nothing.
func (g *gardenerScheduler) stop(t *testing.T) {
	t.Helper()
	if _, _, err := g.proc.Stop(20 * time.Second); err != nil {
		t.Errorf("gardener-scheduler: %v", err)
	}
}

// gardenKubeconfig is the garden's admin kubeconfig.
func (st *suite) gardenKubeconfig() string { return filepath.Join(st.work, "garden-admin.kubeconfig") }

// withSchedulerName sets spec.schedulerName.
func withSchedulerName(name string) shootOpt {
	return func(u *unstructured.Unstructured) {
		must(unstructured.SetNestedField(u.Object, name, "spec", "schedulerName"))
	}
}

// schedulingEvents are the SchedulingSuccessful events of a Shoot.
func (st *suite) schedulingEvents(t *testing.T, key types.NamespacedName) []eventsv1.Event {
	t.Helper()
	evs, err := st.shootEvents(context.Background(), key, corev1.EventTypeNormal, pending.ReasonSchedulingSuccessful)
	require.NoError(t, err)
	return evs
}

// reporter names who recorded an event (events.k8s.io or core/v1 style).
func reporter(e eventsv1.Event) string {
	if e.ReportingController != "" {
		return e.ReportingController
	}
	return e.DeprecatedSource.Component
}

// TestGardenerSchedulerCoexistence (placement mode binding): seedwarden and
// Gardener's own gardener-scheduler run side by side. A Shoot seedwarden's
// webhook admits is claimed (spec.schedulerName seedwarden) and bound by
// seedwarden alone; Shoots created while the mutating webhook is not
// registered keep default-scheduler and gardener-scheduler binds them,
// seedwarden's retry controller leaving them alone; a Shoot naming a
// scheduler neither runs stays unbound. Every Shoot is bound at most once:
// one SchedulingSuccessful event, and spec.seedName never changes.
func TestGardenerSchedulerCoexistence(t *testing.T) {
	st := needGardener(t)
	if !bindingMode() {
		t.Skipf("placement mode %q: the coexistence test runs in mode binding (the mode-independent tests run there)", placementMode)
	}
	st.startTest(t, webhookPlace)
	ctx := context.Background()
	gs := st.startGardenerScheduler(t, gardenerSchedulerSyncs)

	// Bound seeds, sampled while the test runs: a second bind would show
	// as a change.
	seen := map[types.NamespacedName]string{}
	watch := func(keys ...types.NamespacedName) {
		for _, k := range keys {
			got := seedNameOf(t, k)
			if prev := seen[k]; prev != "" && got != prev {
				t.Errorf("Shoot %s rebound from %s to %s", k, prev, got)
			}
			if got != "" {
				seen[k] = got
			}
		}
	}

	claimed := newShoot(t.Name(), awsShoot("eu-central-1", "eu-central-1a"))
	require.NoError(t, st.c.Create(ctx, claimed))
	require.Equal(t, config.DefaultSchedulerName, specSchedulerName(claimed), "seedwarden claims the Shoot it admits")
	claimedKey := client.ObjectKeyFromObject(claimed)

	var gardenersKey types.NamespacedName
	nobody := newShoot(t.Name(), awsShoot("eu-central-1", "eu-central-1b"), withSchedulerName("e2e-nobody"))
	st.withoutMutatingWebhook(t, func() {
		unclaimed := newShoot(t.Name(), awsShoot("eu-central-1", "eu-central-1b"))
		require.NoError(t, st.c.Create(ctx, unclaimed))
		require.Equal(t, "default-scheduler", specSchedulerName(unclaimed), "gardener-apiserver's default, unclaimed")
		require.Empty(t, unclaimed.GetAnnotations()[placementtoken.SeedAnnotation], "nothing announced")
		gardenersKey = client.ObjectKeyFromObject(unclaimed)
	})
	require.NoError(t, st.c.Create(ctx, nobody))
	require.Equal(t, "e2e-nobody", specSchedulerName(nobody), "a Shoot of another scheduler is not claimed")
	nobodyKey := client.ObjectKeyFromObject(nobody)

	eventually(t, 30*time.Second, func() error {
		watch(claimedKey, gardenersKey, nobodyKey)
		for _, k := range []types.NamespacedName{claimedKey, gardenersKey} {
			if seen[k] == "" {
				return fmt.Errorf("Shoot %s not bound yet", k)
			}
		}
		return nil
	}, "both schedulers bind their Shoots (gardener-scheduler's log: %s)", gs.out)
	// A while longer: a late second bind, or a bind of the other
	// scheduler's Shoot, would show now.
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		watch(claimedKey, gardenersKey, nobodyKey)
		time.Sleep(200 * time.Millisecond)
	}
	assert.Empty(t, seen[nobodyKey], "a Shoot of scheduler e2e-nobody was bound")

	byClaimed, byGardener := st.schedulingEvents(t, claimedKey), st.schedulingEvents(t, gardenersKey)
	require.Len(t, byClaimed, 1, "SchedulingSuccessful events of seedwarden's Shoot: %+v", byClaimed)
	require.Len(t, byGardener, 1, "SchedulingSuccessful events of gardener-scheduler's Shoot: %+v", byGardener)
	assert.Equal(t, pending.EventRecorderName, reporter(byClaimed[0]), "seedwarden bound its Shoot")
	assert.NotEqual(t, pending.EventRecorderName, reporter(byGardener[0]), "gardener-scheduler bound the unclaimed Shoot")
	assert.Empty(t, st.schedulingEvents(t, nobodyKey), "events for the Shoot of scheduler e2e-nobody")
	t.Logf("seedwarden's Shoot %s -> %s (event by %s); unclaimed %s -> %s (event by %s); e2e-nobody's %s unbound",
		claimedKey, seen[claimedKey], reporter(byClaimed[0]), gardenersKey, seen[gardenersKey], reporter(byGardener[0]), nobodyKey)
}

func specSchedulerName(u *unstructured.Unstructured) string {
	v, _, _ := unstructured.NestedString(u.Object, "spec", "schedulerName")
	return v
}

// withoutMutatingWebhook runs f with seedwarden's MutatingWebhookConfiguration
// removed (as while it is not yet installed), and registers it again after.
func (st *suite) withoutMutatingWebhook(t *testing.T, f func()) {
	t.Helper()
	ctx := context.Background()
	var mwc admissionregistrationv1.MutatingWebhookConfiguration
	require.NoError(t, st.c.Get(ctx, keyOf("", "seedwarden"), &mwc))
	saved := mwc.DeepCopy()
	saved.ObjectMeta = metav1.ObjectMeta{Name: mwc.Name, Labels: mwc.Labels, Annotations: mwc.Annotations}
	require.NoError(t, st.c.Delete(ctx, &mwc))
	restore := func() {
		if err := st.c.Create(ctx, saved.DeepCopy()); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Errorf("registering the mutating webhook again: %v", err)
		}
	}
	defer restore()
	probe := func(test string) func() *unstructured.Unstructured {
		return func() *unstructured.Unstructured { return newShoot(test, awsShoot("eu-central-1", "eu-central-1a")) }
	}
	err := st.dryRunUntil(ctx, 30*time.Second, eventuallyInterval, probe("unregistered-probe"), func(sh *unstructured.Unstructured) error {
		if s := specSchedulerName(sh); s != "default-scheduler" {
			return fmt.Errorf("dry run still claimed (schedulerName %q)", s)
		}
		return nil
	})
	require.NoError(t, err, "gardener-apiserver still calls the removed mutating webhook")
	f()
	restore()
	err = st.dryRunUntil(ctx, 30*time.Second, eventuallyInterval, probe("registered-probe"), func(sh *unstructured.Unstructured) error {
		if specSchedulerName(sh) != config.DefaultSchedulerName {
			return fmt.Errorf("dry run not claimed yet")
		}
		return nil
	})
	require.NoError(t, err, "gardener-apiserver does not call the mutating webhook again")
}

// eventuallySchedulingEvents waits for the SchedulingSuccessful events of
// key: a scheduler records its event after the bind, asynchronously.
func (st *suite) eventuallySchedulingEvents(t *testing.T, key types.NamespacedName) []eventsv1.Event {
	t.Helper()
	var evs []eventsv1.Event
	eventually(t, 10*time.Second, func() error {
		if evs = st.schedulingEvents(t, key); len(evs) == 0 {
			return fmt.Errorf("no SchedulingSuccessful event for %s yet", key)
		}
		return nil
	})
	return evs
}
