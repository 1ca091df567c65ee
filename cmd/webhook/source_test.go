package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/landscape"
	"github.com/seedwarden/seedwarden/internal/testenv"
)

// unreachableKubeconfig points at 127.0.0.1:1, where nothing listens.
func unreachableKubeconfig(t *testing.T) string {
	t.Helper()
	return writeFile(t, "kubeconfig", `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
users: [{name: u, user: {token: t}}]
current-context: c
`)
}

func TestLiveLandscapeUnreachable(t *testing.T) {
	kc := unreachableKubeconfig(t)
	start := time.Now()
	_, err := liveLandscape(context.Background(), kc, "garden")
	require.Error(t, err)
	assert.Contains(t, err.Error(), fmt.Sprintf("--kubeconfig %q: cannot list seeds from https://127.0.0.1:1: ", kc))
	assert.Contains(t, err.Error(), "connection refused")
	assert.Less(t, time.Since(start), liveListTimeout)

	missing := filepath.Join(t.TempDir(), "missing")
	_, err = liveLandscape(context.Background(), missing, "garden")
	require.Error(t, err)
	assert.Contains(t, err.Error(), fmt.Sprintf("--kubeconfig %q: ", missing))
}

// Live explain's usage errors: exit 2 and a message naming the flags or
// the value, before any request.
func TestSimulateLiveUsage(t *testing.T) {
	kc := unreachableKubeconfig(t)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"with -f", []string{"--kubeconfig", kc, "--shoot", "a/b", "-f", "testdata/scenarios"}, "webhook simulate: --kubeconfig is mutually exclusive with -f and --landscape"},
		{"with --landscape", []string{"--kubeconfig", kc, "--shoot", "a/b", "--landscape", "../../examples/landscape.yaml"}, "webhook simulate: --kubeconfig is mutually exclusive with -f and --landscape"},
		{"no --shoot", []string{"--kubeconfig", kc}, "--kubeconfig needs --shoot NAMESPACE/NAME"},
		{"--shoot a file", []string{"--kubeconfig", kc, "--shoot", "shoot.yaml"}, `--shoot "shoot.yaml": with --kubeconfig, want NAMESPACE/NAME of an existing Shoot`},
		{"--shoot three parts", []string{"--kubeconfig", kc, "--shoot", "a/b/c"}, `--shoot "a/b/c": with --kubeconfig`},
		{"--shoot no namespace", []string{"--kubeconfig", kc, "--shoot", "/b"}, `--shoot "/b": with --kubeconfig`},
		{"bad -o", []string{"--kubeconfig", kc, "--shoot", "a/b", "-o", "yaml"}, `-o: unsupported value "yaml"`},
		{"unreachable", []string{"--kubeconfig", kc, "--shoot", "a/b"}, fmt.Sprintf("--kubeconfig %q: cannot list seeds from https://127.0.0.1:1: ", kc)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCmd(t, append([]string{"simulate"}, tc.args...)...)
			assert.Equal(t, exitUsage, code)
			assert.Empty(t, out)
			assert.Contains(t, errOut, tc.want)
		})
	}
}

// plan's sources: exactly one of --landscape and --kubeconfig; an
// unreachable cluster is exit 2 naming the flag and its value.
func TestPlanLiveUsage(t *testing.T) {
	kc := unreachableKubeconfig(t)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"both", []string{"--kubeconfig", kc, "--landscape", planLandscape}, "webhook plan: --landscape and --kubeconfig are mutually exclusive: give one of them\n"},
		{"neither", []string{"--drain", "a"}, "webhook plan: no landscape: give --landscape FILE or --kubeconfig PATH\n"},
		{"unreachable", []string{"--kubeconfig", kc, "--drain", "a"}, fmt.Sprintf("webhook plan: --kubeconfig %q: cannot list seeds from https://127.0.0.1:1: ", kc)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCmd(t, append([]string{"plan"}, tc.args...)...)
			assert.Equal(t, exitUsage, code)
			assert.Empty(t, out)
			assert.Contains(t, errOut, tc.want)
		})
	}
}

// TestLiveExplainAgainstAPIServer: live explain on a real kube-apiserver
// decides as simulate does on the dumped landscape (and plan plans the
// same on both), leaves the Shoot out of
// its own seed's count, and names a Shoot that does not exist.
func TestLiveExplainAgainstAPIServer(t *testing.T) {
	env, restCfg := testenv.Start(t, "../../e2e/crds")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := client.New(restCfg, client.Options{Scheme: cache.NewScheme()})
	require.NoError(t, err)
	createLandscape(ctx, t, c, "garden", "garden-dev")
	kc := adminKubeconfig(t, env)

	// webshop is on aws-eu2, which has room for it and the two Shoots it
	// already carries, no more: counting webshop itself would make it full.
	webshop := readShootFile(t, "../../examples/shoot.yaml")
	webshop.Spec.SeedName = ptrTo("aws-eu2")
	require.NoError(t, c.Create(ctx, webshop))
	var eu2 api.Seed
	require.NoError(t, c.Get(ctx, client.ObjectKey{Name: "aws-eu2"}, &eu2))
	eu2.Status.Allocatable = corev1.ResourceList{api.ResourceShoots: resource.MustParse("3")}
	require.NoError(t, c.Status().Update(ctx, &eu2))
	ledger := readShootFile(t, "../../examples/shoot-unschedulable.yaml")
	require.NoError(t, c.Create(ctx, ledger))

	objs, err := liveLandscape(ctx, kc, "garden")
	require.NoError(t, err)
	var dump bytes.Buffer
	require.NoError(t, landscape.Encode(&dump, objs))
	dumpPath := writeFile(t, "landscape.yaml", dump.String())

	code, out, errOut := runCmd(t, "simulate", "--kubeconfig", kc, "--shoot", "garden-dev/webshop")
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, `{"name":"webshop","seed":"aws-eu2"}`+"\n", out, "webshop does not count against its own seed")

	for _, format := range []string{"json", "text"} {
		code, live, errOut := runCmd(t, "simulate", "--kubeconfig", kc, "--shoot", "garden-dev/ledger", "-o", format)
		require.Equal(t, exitOK, code, errOut)
		code, file, errOut := runCmd(t, "simulate", "--landscape", dumpPath, "--shoot", "../../examples/shoot-unschedulable.yaml", "-o", format)
		require.Equal(t, exitOK, code, errOut)
		assert.Equal(t, file, live, format)
		if format == "text" {
			assert.Contains(t, live, "ledger: unschedulable at step ")
			assert.Contains(t, live, "  aws-eu1: ")
		}
	}

	// plan: the same operations on the cluster and on its dump.
	ops := []string{"--drain", "aws-eu1", "--add-shoots", "5", "--like", "../../examples/shoot.yaml", "-o", "json"}
	liveCode, live, errOut := runCmd(t, append([]string{"plan", "--kubeconfig", kc}, ops...)...)
	require.Contains(t, []int{exitOK, exitIncomplete}, liveCode, errOut)
	fileCode, file, errOut := runCmd(t, append([]string{"plan", "--landscape", dumpPath}, ops...)...)
	assert.Equal(t, fileCode, liveCode, errOut)
	assert.JSONEq(t, file, live)
	assert.Contains(t, live, `"from": "aws-eu1"`, "the drain was planned")

	// plan --autoscale: the same recommendation on the cluster and on its
	// dump; a ManagedSeedSet the file does not carry is read from the
	// cluster, which here does not serve the kind.
	const autoscaling = "../../examples/autoscaling.yaml"
	liveCode, live, errOut = runCmd(t, "plan", "--kubeconfig", kc, "--autoscale", autoscaling, "-o", "json")
	require.Equal(t, exitOK, liveCode, errOut)
	fileCode, file, errOut = runCmd(t, "plan", "--landscape", dumpPath, "--autoscale", autoscaling, "-o", "json")
	require.Equal(t, exitOK, fileCode, errOut)
	assert.JSONEq(t, file, live)
	assert.Contains(t, live, `"desired": 4`, "aws-eu2 is full here: 96 free, two more replicas for 250")
	data, err := os.ReadFile(autoscaling)
	require.NoError(t, err)
	_, onlyAutoscaler, _ := strings.Cut(string(data), "kind: SeedAutoscaler")
	saOnly := writeFile(t, "sa.yaml", "apiVersion: autoscaling.seedwarden.io/v1alpha1\nkind: SeedAutoscaler"+onlyAutoscaler)
	code, out, errOut = runCmd(t, "plan", "--kubeconfig", kc, "--autoscale", saOnly)
	assert.Equal(t, exitUsage, code)
	assert.Empty(t, out)
	assert.Contains(t, errOut, fmt.Sprintf("webhook plan: --kubeconfig %q: cannot get ManagedSeedSet garden/aws-eu from ", kc))

	// test: a suite decides the same on the cluster (--kubeconfig) as on
	// its dump.
	examples, err := filepath.Abs("../../examples")
	require.NoError(t, err)
	suite := writeFile(t, "suite.yaml", fmt.Sprintf(`landscape: %s
autoscalers: %s/autoscaling.yaml
cases:
- {name: webshop stays, shoot: %s/shoot.yaml, expect: {seed: aws-eu2}}
- {name: ledger, shoot: %s/shoot-unschedulable.yaml, expect: {unschedulable: [ShootSelectorMismatch, TaintNotTolerated]}}
- {name: billing to aws-eu2, seedChange: {shoot: garden-dev/billing, seed: aws-eu2}, expect: {capacity: denied}}
- {name: aws-eu, seedAutoscaler: garden/aws-eu, expect: {replicas: 4}}
`, dumpPath, examples, examples, examples))
	fileCode, file, errOut = runCmd(t, "test", suite)
	require.Equal(t, exitOK, fileCode, "%s%s", file, errOut)
	liveCode, live, errOut = runCmd(t, "test", suite, "--kubeconfig", kc)
	require.Equal(t, exitOK, liveCode, "%s%s", live, errOut)
	assert.Equal(t, file, live)

	code, out, errOut = runCmd(t, "simulate", "--kubeconfig", kc, "--shoot", "garden-dev/missing")
	assert.Equal(t, exitUsage, code)
	assert.Empty(t, out)
	assert.Equal(t, "webhook simulate: --shoot \"garden-dev/missing\": not found\n", errOut)
}

func readShootFile(t *testing.T, path string) *api.Shoot {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	sh, err := landscape.DecodeShoot(data)
	require.NoError(t, err)
	return sh
}
