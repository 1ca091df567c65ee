package e2e

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/api"
)

// The shapes of a TestBindSideBySide run (issue 40): whether the bench's
// seeds carry a capacity limit, how many users send the Shoots, how many
// seedwarden replicas run, and which loads run in each. A run takes a list
// of them from BenchShapesEnv, so a shared machine can run a part.

// BenchShapesEnv lists the shapes, ";"-separated, each "keys:loads": keys
// (comma-separated) "limit" or "nolimit", "users=N" (N project members
// create the Shoots in turn; default 1, what a CI pipeline or a GitOps
// controller does), "replicas=N" (1 or 3 seedwarden processes behind one
// address; default 1); loads (comma-separated) 20, 50, burst, full20,
// full50, fullburst. Unset: defaultBenchShapes.
const BenchShapesEnv = "SEEDWARDEN_E2E_BENCH_SHAPES"

// defaultBenchShapes is the table of issue 40: seeds with a limit, one
// user, 1 and 3 replicas, every load the acceptance names; many users in
// the loads a busy user limits; seeds without a limit for the earlier
// shape.
const defaultBenchShapes = "limit:20,50,burst,full20,full50;" +
	"limit,replicas=3:20,50,burst,full20,full50;" +
	"limit,users=10:50,burst;" +
	"nolimit:20,burst"

// benchSeeds are the seeds in us-east-1, where every bench Shoot goes:
// aws-us1 of the landscape and two copies of it the test creates (the
// issue's shape has 3 ready seeds).
var benchSeeds = []string{"aws-us1", "e2e-bench-us1-b", "e2e-bench-us1-c"}

// limitedAllocatable is each bench seed's status.allocatable.shoots under
// "limit": twice what the fill puts on it (about 1,600 of the 5,000 each,
// see fillTargets), so no load fills a seed and the figures measure the
// ledger's path, not a full seed. Real seeds carry smaller limits; the path
// a placement takes does not depend on the number.
const limitedAllocatable = 4000

// maxBenchUsers bounds users=N: each is a RoleBinding and a client.
const maxBenchUsers = 100

// benchShape is one shape; comparable, so it keys the pooled figures.
type benchShape struct {
	limit    bool
	users    int
	replicas int
}

func (s benchShape) String() string {
	l := "no limit"
	if s.limit {
		l = "limit"
	}
	u := "1 user"
	if s.users > 1 {
		u = fmt.Sprintf("%d users", s.users)
	}
	r := "1 replica"
	if s.replicas > 1 {
		r = fmt.Sprintf("%d replicas", s.replicas)
	}
	return l + ", " + u + ", " + r
}

// benchPlan is what a run measures: each shape's scenarios (the shape
// stamped on each), and how many Shoots fill the garden.
type benchPlan struct {
	scenarios []scenario
	fill      int
}

// ordered is the scenarios in the order run: every empty-garden one first
// (shape by shape, as listed), then the full ones, since the garden is
// filled once.
func (p benchPlan) ordered() []scenario {
	var empty, full []scenario
	for _, sc := range p.scenarios {
		if sc.full {
			full = append(full, sc)
		} else {
			empty = append(empty, sc)
		}
	}
	return append(empty, full...)
}

// parseBenchShapes parses a BenchShapesEnv value against the loads of
// sideBySidePlan.
func parseBenchShapes(v string, loads []scenario) ([]scenario, error) {
	var out []scenario
	for _, spec := range strings.Split(v, ";") {
		spec = strings.TrimSpace(spec)
		if spec == "" {
			continue
		}
		keys, want, ok := strings.Cut(spec, ":")
		if !ok {
			return nil, fmt.Errorf("%s: shape %q: want keys:loads", BenchShapesEnv, spec)
		}
		shape, err := parseBenchShape(keys)
		if err != nil {
			return nil, fmt.Errorf("%s: shape %q: %w", BenchShapesEnv, spec, err)
		}
		picked, err := selectLoads(loads, want)
		if err != nil {
			return nil, fmt.Errorf("%s: shape %q: %w", BenchShapesEnv, spec, err)
		}
		for _, sc := range picked {
			sc.shape = shape
			if slices.Contains(out, sc) {
				return nil, fmt.Errorf("%s: shape %q: load %s listed twice", BenchShapesEnv, spec, loadKey(sc))
			}
			out = append(out, sc)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s=%q: no shape", BenchShapesEnv, v)
	}
	return out, nil
}

func parseBenchShape(keys string) (benchShape, error) {
	s := benchShape{users: 1, replicas: 1}
	limitSet := false
	for _, k := range strings.Split(keys, ",") {
		k = strings.TrimSpace(k)
		name, val, hasVal := strings.Cut(k, "=")
		switch {
		case (k == "limit" || k == "nolimit") && !limitSet:
			s.limit, limitSet = k == "limit", true
		case hasVal && name == "users":
			n, err := strconv.Atoi(val)
			if err != nil || n < 1 || n > maxBenchUsers {
				return s, fmt.Errorf("users %q: want 1 to %d", val, maxBenchUsers)
			}
			s.users = n
		case hasVal && name == "replicas":
			n, err := strconv.Atoi(val)
			if err != nil || (n != 1 && n != 3) {
				return s, fmt.Errorf("replicas %q: want 1 or 3", val)
			}
			s.replicas = n
		default:
			return s, fmt.Errorf("key %q: want one of limit, nolimit, users=N, replicas=N", k)
		}
	}
	if !limitSet {
		return s, fmt.Errorf("keys %q: want limit or nolimit", keys)
	}
	return s, nil
}

// loadKey names sc as BenchShapesEnv does.
func loadKey(sc scenario) string {
	k := "burst"
	if sc.sustained() {
		k = strconv.Itoa(sc.rate)
	}
	if sc.full {
		k = "full" + k
	}
	return k
}

// selectLoads keeps the loads v names, in the order of all.
func selectLoads(all []scenario, v string) ([]scenario, error) {
	var keys []string
	for _, sc := range all {
		keys = append(keys, loadKey(sc))
	}
	want := map[string]bool{}
	for _, k := range strings.Split(v, ",") {
		k = strings.TrimSpace(k)
		if !slices.Contains(keys, k) {
			return nil, fmt.Errorf("load %q: want one of %s", k, strings.Join(keys, ", "))
		}
		want[k] = true
	}
	var out []scenario
	for _, sc := range all {
		if want[loadKey(sc)] {
			out = append(out, sc)
		}
	}
	return out, nil
}

// benchPlanFromEnv reads BenchShapesEnv.
func benchPlanFromEnv(t *testing.T, quick bool) benchPlan {
	t.Helper()
	v := os.Getenv(BenchShapesEnv)
	if strings.TrimSpace(v) == "" {
		v = defaultBenchShapes
	}
	loads, fill := sideBySidePlan(quick)
	scenarios, err := parseBenchShapes(v, loads)
	require.NoError(t, err)
	return benchPlan{scenarios: scenarios, fill: fill}
}

// createBenchSeeds creates the copies of aws-us1 (benchSeeds), ready as it
// is; they go when t ends, after its Shoots.
func (sb *sideBySide) createBenchSeeds() {
	for _, name := range benchSeeds[1:] {
		sb.st.createSeedLike(sb.t, benchSeeds[0], name, nil, limitedAllocatable)
	}
	// Before the copies go: every Shoot of t, the filled ones too (a copy's
	// own cleanup waits only seconds for them).
	sb.t.Cleanup(func() {
		if err := sb.deleteLabelled(context.Background(), client.MatchingLabels{testLabel: labelValue(sb.t.Name())}, 5*time.Minute); err != nil {
			sb.t.Errorf("deleting the test's Shoots: %v", err)
		}
		if err := sb.setSeedLimits(false); err != nil {
			sb.t.Errorf("removing the limit of %s: %v", benchSeeds[0], err)
		}
	})
}

// applyShape makes shape the current one, with gardener-scheduler binding
// (every scenario starts with it): the bench seeds' limit set or removed,
// the users that send the Shoots, and how many seedwarden processes the
// next seedwarden phase starts.
func (sb *sideBySide) applyShape(shape benchShape) {
	t, st := sb.t, sb.st
	t.Helper()
	sb.activate(byGardener)
	require.NoError(t, sb.setSeedLimits(shape.limit))
	for i := len(sb.userPool); i < shape.users; i++ {
		if i == 0 {
			sb.userPool = append(sb.userPool, sb.dev)
			continue
		}
		user := fmt.Sprintf("e2e-bench-%d@example.com", i)
		rb := roleBinding(fmt.Sprintf("e2e-bench-%d-edit", i), "e2e-shoot-editor", user)
		require.NoError(t, st.c.Create(context.Background(), rb))
		t.Cleanup(func() { _ = st.c.Delete(context.Background(), rb) })
		c, _ := st.clientAs(t, user)
		sb.userPool = append(sb.userPool, c)
		// RBAC reaches the authorizer through its informer.
		eventually(t, 10*time.Second, func() error {
			sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
				User: user, Groups: []string{"system:authenticated"},
				ResourceAttributes: &authorizationv1.ResourceAttributes{
					Namespace: projectNamespace, Verb: "create", Group: api.GroupName, Resource: "shoots",
				},
			}}
			if err := st.c.Create(context.Background(), sar); err != nil {
				return err
			}
			if !sar.Status.Allowed {
				return fmt.Errorf("%s may not create Shoots yet", user)
			}
			return nil
		}, "the RoleBinding of %s does not take effect", user)
	}
	sb.users = sb.userPool[:shape.users]
	sb.shape = shape
	t.Logf("shape from now on: %s", shape)
}

// setSeedLimits sets status.allocatable.shoots of every bench seed to
// limitedAllocatable, or removes it.
func (sb *sideBySide) setSeedLimits(limit bool) error {
	ctx := context.Background()
	for _, name := range benchSeeds {
		sd := &unstructured.Unstructured{}
		sd.SetGroupVersionKind(seedGVK)
		if err := sb.st.c.Get(ctx, keyOf("", name), sd); client.IgnoreNotFound(err) != nil {
			return err
		} else if err != nil {
			continue // a copy already gone at the end
		}
		if limit {
			if err := unstructured.SetNestedField(sd.Object, strconv.Itoa(limitedAllocatable), "status", "allocatable", "shoots"); err != nil {
				return err
			}
		} else {
			unstructured.RemoveNestedField(sd.Object, "status", "allocatable", "shoots")
		}
		if err := sb.st.c.Status().Update(ctx, sd); err != nil {
			return fmt.Errorf("status.allocatable.shoots of seed %s (limit %t): %w", name, limit, err)
		}
	}
	return nil
}
