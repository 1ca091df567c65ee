package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/landscape"
)

// liveLabel selects the seeds of TestLiveExplainMatchesDump.
const liveLabel = "e2e.seedwarden.io/live-test"

// TestLiveExplainMatchesDump: a small landscape in the real
// kube-apiserver — three seeds with room for 1, 2 and 3 Shoots, a
// CloudProfile and a Project of the test's own, the seeds filled by Shoots —
// and a Shoot that only those seeds could take, pending. `webhook simulate
// --kubeconfig --shoot` (as the webhook's ServiceAccount, so the shipped
// RBAC is proven enough to read the landscape) names each seed full with its
// usage; the landscape dumped by landscape.List and Encode, decided with
// `simulate --landscape`, gives the identical line, in both output formats;
// and `webhook plan --kubeconfig` reports exactly what the same plan on the
// dumped file does.
func TestLiveExplainMatchesDump(t *testing.T) {
	st := need(t)
	st.logOnFailure(t)
	st.cleanupShoots(t)
	st.waitSettled(t)
	ctx := context.Background()

	sizes := map[string]int64{"e2e-live-small": 1, "e2e-live-medium": 2, "e2e-live-large": 3}
	st.createSeedsLike(t, "aws-eu2", liveLabel, sizes)
	profile := st.createCloudProfileLike(t, "aws", "e2e-live-aws")
	st.createProject(t, "e2e-live", "garden-e2e-live")
	eventually(t, 15*time.Second, func() error { return knowsSeeds(st.metricsURL(), sizes) })

	liveShoot := func(name string, opts ...shootOpt) *unstructured.Unstructured {
		opts = append([]shootOpt{withName(name), withCloudProfile(profile), withSeedSelector(liveLabel)}, opts...)
		return newShoot(t.Name(), opts...)
	}
	for seed, n := range sizes {
		for i := range n {
			require.NoError(t, st.c.Create(ctx, liveShoot(fmt.Sprintf("%s-%d", seed, i), withSeed(seed))))
		}
	}
	pending := liveShoot("e2e-live-pending")
	require.NoError(t, st.c.Create(ctx, pending))
	key := projectNamespace + "/e2e-live-pending"

	// (a) Live explain.
	r := st.simulateLive(t, key, "json")
	require.True(t, r.Unschedulable, "%+v", r)
	assert.Equal(t, "Candidates", r.Step)
	for seed, n := range sizes {
		assert.Equal(t, fmt.Sprintf("seed does not have available capacity for shoots (usage %d, allocatable %d)", n, n), r.Reasons[seed], seed)
	}
	assert.Equal(t, "labels do not match the Shoot's seed selector", r.Reasons["aws-eu1"])

	// (b) The dumped landscape decides the same.
	dump := st.dumpLandscape(t)
	dumped, err := landscape.ReadFile(dump, nil)
	require.NoError(t, err)
	assert.Subset(t, objectNames(dumped), []string{"CloudProfile e2e-live-aws", "Project e2e-live", "Seed e2e-live-large",
		"Shoot garden-dev/e2e-live-pending", "Shoot garden-dev/e2e-live-large-2", "ConfigMap garden/region-distances"})
	shootFile := st.shootFile(t, key)
	for _, format := range []string{"json", "text"} {
		live := st.runWebhook(t, "simulate", "--config", st.configPath, "--kubeconfig", st.kubeconfig, "--shoot", key, "-o", format)
		file := st.runWebhook(t, "simulate", "--config", st.configPath, "--landscape", dump, "--shoot", shootFile, "-o", format)
		assert.Equal(t, file, live, "-o %s", format)
	}
	// (c) plan: the same operations on the cluster and on its dump. The
	// large seed's Shoots have nowhere to go (the other seeds of theirs are
	// full); the new ones go to the example landscape's eu-central-1 seeds.
	like := writeObject(t, newShoot(t.Name(), withName("e2e-live-template")))
	ops := []string{"--config", st.configPath, "--drain", "e2e-live-large", "--add-shoots", "5", "--like", like, "-o", "json"}
	liveCode, livePlan := st.runWebhookCode(t, append([]string{"plan", "--kubeconfig", st.kubeconfig}, ops...)...)
	fileCode, filePlan := st.runWebhookCode(t, append([]string{"plan", "--landscape", dump}, ops...)...)
	assert.Equal(t, 3, liveCode, "some Shoot found no seed: %s", livePlan)
	assert.Equal(t, fileCode, liveCode)
	assert.JSONEq(t, filePlan, livePlan)
	var report struct {
		Placed   []struct{ Shoot, To string }
		Unplaced []struct{ Shoot, From string }
	}
	require.NoError(t, json.Unmarshal([]byte(livePlan), &report))
	assert.Len(t, report.Placed, 5, livePlan)
	assert.Len(t, report.Unplaced, 3, livePlan)
	for _, u := range report.Unplaced {
		assert.Equal(t, "e2e-live-large", u.From, u.Shoot)
	}

	text := st.runWebhook(t, "simulate", "--config", st.configPath, "--kubeconfig", st.kubeconfig, "--shoot", key, "-o", "text")
	assert.Contains(t, text, "e2e-live-pending: unschedulable at step Candidates: ")
	assert.Contains(t, text, "\n  e2e-live-small: seed does not have available capacity for shoots (usage 1, allocatable 1)\n")
}

// simulateLive runs live explain of the Shoot key and decodes its line.
func (st *suite) simulateLive(t *testing.T, key, format string) simResult {
	t.Helper()
	out := st.runWebhook(t, "simulate", "--config", st.configPath, "--kubeconfig", st.kubeconfig, "--shoot", key, "-o", format)
	var r simResult
	require.NoError(t, json.Unmarshal([]byte(out), &r), out)
	return r
}

// runWebhook runs the webhook binary, requires exit code 0, and returns
// its standard output.
func (st *suite) runWebhook(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(st.bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "webhook %s\nstdout: %s\nstderr: %s", strings.Join(args, " "), stdout.String(), stderr.String())
	return stdout.String()
}

// runWebhookCode runs the webhook binary and returns its exit code and
// standard output; an error other than an exit code fails t.
func (st *suite) runWebhookCode(t *testing.T, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(st.bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		require.NoError(t, err)
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 && code != 3 {
		t.Fatalf("webhook %s: exit code %d\nstderr: %s", strings.Join(args, " "), code, stderr.String())
	}
	return cmd.ProcessState.ExitCode(), stdout.String()
}

// writeObject writes u as JSON to a file and returns its path.
func writeObject(t *testing.T, u *unstructured.Unstructured) string {
	t.Helper()
	data, err := json.Marshal(u.Object)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), u.GetName()+".json")
	require.NoError(t, os.WriteFile(path, data, 0o644))
	return path
}

// dumpLandscape writes the landscape the API server holds now, as
// landscape.List reads it, to a file and returns its path.
func (st *suite) dumpLandscape(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	objs, err := landscape.List(ctx, st.c, gardenNamespace)
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, landscape.Encode(&buf, objs))
	path := filepath.Join(t.TempDir(), "landscape.yaml")
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
	return path
}

// shootFile writes the Shoot key ("namespace/name") as the API server has
// it to a file and returns its path.
func (st *suite) shootFile(t *testing.T, key string) string {
	t.Helper()
	ns, name, _ := strings.Cut(key, "/")
	var sh api.Shoot
	require.NoError(t, st.c.Get(context.Background(), keyOf(ns, name), &sh))
	var buf bytes.Buffer
	require.NoError(t, landscape.Encode(&buf, []client.Object{&sh}))
	path := filepath.Join(t.TempDir(), "shoot.yaml")
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
	return path
}

// createCloudProfileLike creates a copy of CloudProfile template named name;
// t's cleanup deletes it.
func (st *suite) createCloudProfileLike(t *testing.T, template, name string) string {
	t.Helper()
	ctx := context.Background()
	var tmpl api.CloudProfile
	require.NoError(t, st.c.Get(ctx, keyOf("", template), &tmpl))
	cp := &api.CloudProfile{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{testLabel: labelValue(t.Name())}},
		Spec:       *tmpl.Spec.DeepCopy(),
	}
	require.NoError(t, st.c.Create(ctx, cp))
	t.Cleanup(func() {
		if err := st.c.Delete(context.Background(), cp); client.IgnoreNotFound(err) != nil {
			t.Errorf("deleting cloud profile %s: %v", name, err)
		}
	})
	return name
}

// createProject creates Project name for namespace (which need not exist);
// t's cleanup deletes it (confirmed for deletion from the start, as
// gardener-apiserver wants).
func (st *suite) createProject(t *testing.T, name, namespace string) {
	t.Helper()
	p := &api.Project{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{testLabel: labelValue(t.Name())},
			Annotations: map[string]string{"confirmation.gardener.cloud/deletion": "true"}},
		Spec: api.ProjectSpec{Namespace: &namespace},
	}
	require.NoError(t, st.c.Create(context.Background(), p))
	t.Cleanup(func() {
		if err := st.c.Delete(context.Background(), p); client.IgnoreNotFound(err) != nil {
			t.Errorf("deleting project %s: %v", name, err)
		}
	})
}

func withCloudProfile(name string) shootOpt {
	return func(u *unstructured.Unstructured) {
		must(unstructured.SetNestedMap(u.Object, map[string]any{"kind": "CloudProfile", "name": name}, "spec", "cloudProfile"))
	}
}

func withSeedSelector(label string) shootOpt {
	return func(u *unstructured.Unstructured) {
		must(unstructured.SetNestedStringMap(u.Object, map[string]string{label: "true"}, "spec", "seedSelector", "matchLabels"))
	}
}

// objectNames are "Kind namespace/name" (or "Kind name") of objs.
func objectNames(objs []client.Object) []string {
	out := make([]string, len(objs))
	for i, o := range objs {
		name := o.GetName()
		if o.GetNamespace() != "" {
			name = o.GetNamespace() + "/" + name
		}
		out[i] = o.GetObjectKind().GroupVersionKind().Kind + " " + name
	}
	return out
}
