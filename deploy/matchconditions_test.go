package manifests_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	celplugin "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/webhook"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/predicates/rules"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/cel/environment"
	ctrladmission "sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/seedwarden/seedwarden/internal/handlers"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// The matchConditions of deploy/manifests, evaluated by the API server's own
// matcher (k8s.io/apiserver), against what the handlers behind them judge.
// A condition that leaves out a request its handler would refuse opens a
// hole; one that sends a request its handler admits unchecked makes a
// seedwarden outage refuse it for nothing.

var (
	shootGVK = schema.GroupVersionKind{Group: gardenerGroup, Version: gardenerVersion, Kind: "Shoot"}
	shootGVR = schema.GroupVersionResource{Group: gardenerGroup, Version: gardenerVersion, Resource: "shoots"}
)

// shootRequest is a Shoot CREATE or UPDATE, as JSON objects.
type shootRequest struct {
	op          admissionv1.Operation
	subResource string
	old, obj    string // old is "" on CREATE
	user        string // "": alice
}

// conditionMatchers compiles the matchConditions of every webhook of
// deploy/manifests that has some, as the API server compiles them. The
// failure policy is Fail whatever the manifest says, so that an expression
// that errors (or runs over its cost budget) fails the test instead of
// silently skipping the webhook.
func conditionMatchers(t *testing.T) map[string]matchconditions.Matcher {
	t.Helper()
	docs := manifests(t)
	mwc := find[*admissionregistrationv1.MutatingWebhookConfiguration](t, docs, mutatingConfiguration, "", "seedwarden")
	vwc := find[*admissionregistrationv1.ValidatingWebhookConfiguration](t, docs, validatingConfiguration, "", "seedwarden")
	compiler := celplugin.NewConditionCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	fail := admissionregistrationv1.Fail
	out := map[string]matchconditions.Matcher{}
	for _, w := range mwc.Webhooks {
		w.FailurePolicy = &fail
		out[w.Name] = webhook.NewMutatingWebhookAccessor(w.Name, mwc.Name, &w).GetCompiledMatcher(compiler)
	}
	for _, w := range append(vwc.Webhooks, resourceSizeConfiguration(t).Webhooks...) {
		w.FailurePolicy = &fail
		out[w.Name] = webhook.NewValidatingWebhookAccessor(w.Name, vwc.Name, &w).GetCompiledMatcher(compiler)
	}
	return out
}

// sent reports whether the API server sends r to the webhook whose matcher
// is m; an evaluation error fails the test.
func sent(t *testing.T, m matchconditions.Matcher, r shootRequest) bool {
	t.Helper()
	res := m.Match(context.Background(), versioned(t, r), nil, nil)
	require.NoError(t, res.Error, "matchCondition of %s", describe(r))
	return res.Matches
}

// versioned is r as the attributes the API server evaluates conditions on.
func versioned(t *testing.T, r shootRequest) *admission.VersionedAttributes {
	t.Helper()
	obj := &unstructured.Unstructured{}
	require.NoError(t, obj.UnmarshalJSON([]byte(r.obj)))
	var old runtime.Object
	if r.old != "" {
		u := &unstructured.Unstructured{}
		require.NoError(t, u.UnmarshalJSON([]byte(r.old)))
		old = u
	}
	attr := admission.NewAttributesRecord(obj, old, shootGVK, obj.GetNamespace(), obj.GetName(), shootGVR, r.subResource,
		admission.Operation(r.op), nil, false, &user.DefaultInfo{Name: cmp.Or(r.user, "alice")})
	v, err := admission.NewVersionedAttributes(attr, shootGVK, nil)
	require.NoError(t, err)
	return v
}

// conditionCost is the runtime cost the API server charges for evaluating
// expression on r, compiled as webhook matchConditions are.
func conditionCost(t *testing.T, expression string, r shootRequest) int64 {
	t.Helper()
	compiler := celplugin.NewConditionCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	cond := compiler.CompileCondition([]celplugin.ExpressionAccessor{&matchconditions.MatchCondition{Name: "c", Expression: expression}},
		celplugin.OptionalVariableDeclarations{HasAuthorizer: true}, environment.StoredExpressions)
	require.Empty(t, cond.CompilationErrors())
	v := versioned(t, r)
	req := celplugin.CreateAdmissionRequest(v.Attributes, metav1.GroupVersionResource(shootGVR), metav1.GroupVersionKind(shootGVK))
	const budget = celconfig.RuntimeCELCostBudgetMatchConditions
	results, left, err := cond.ForInput(context.Background(), v, req, celplugin.OptionalVariableBindings{}, nil, budget)
	require.NoError(t, err)
	require.Len(t, results, 1)
	require.NoError(t, results[0].Error)
	return budget - left
}

// review is r as the AdmissionReview JSON the API server sends.
func review(t *testing.T, r shootRequest) ctrladmission.Request {
	t.Helper()
	old := "null"
	if r.old != "" {
		old = r.old
	}
	body := fmt.Sprintf(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{
		"uid":"0b4d6e1c-8f2a-4c1e-9a57-3d2f6a9e1b10",
		"kind":{"group":%[1]q,"version":%[2]q,"kind":"Shoot"},
		"resource":{"group":%[1]q,"version":%[2]q,"resource":"shoots"},
		"subResource":%[3]q,"namespace":"garden-dev","name":"crud","operation":%[4]q,
		"userInfo":{"username":"alice","groups":["system:authenticated"]},
		"object":%[5]s,"oldObject":%[6]s}}`, gardenerGroup, gardenerVersion, r.subResource, r.op, r.obj, old)
	var rv admissionv1.AdmissionReview
	require.NoError(t, json.Unmarshal([]byte(body), &rv))
	return ctrladmission.Request{AdmissionRequest: *rv.Request}
}

// shootVariant is one combination of the fields the Shoot guards read.
type shootVariant struct {
	seed, selector, zones, region string
}

// shootJSON is the Shoot with v's fields; "" leaves a field out.
func (v shootVariant) json() string {
	spec := map[string]any{
		"cloudProfile": map[string]any{"kind": "CloudProfile", "name": "aws"},
		"region":       v.region,
		"provider":     map[string]any{"type": "aws", "workers": []any{map[string]any{"name": "w", "minimum": 1, "maximum": 2}}},
	}
	if v.seed != "" {
		spec["seedName"] = v.seed
	}
	if v.selector != "" {
		spec["seedSelector"] = map[string]any{"matchLabels": map[string]any{"tier": v.selector}}
	}
	if v.zones != "" {
		spec["controlPlane"] = map[string]any{"zones": strings.Split(v.zones, ",")}
	}
	b, err := json.Marshal(map[string]any{
		"apiVersion": gardenerGroup + "/" + gardenerVersion, "kind": "Shoot",
		"metadata": map[string]any{"name": "crud", "namespace": "garden-dev"},
		"spec":     spec,
	})
	if err != nil {
		panic(err)
	}
	return string(b)
}

// shootVariants are all combinations: no seed or one of two, no selector or
// one of two, no zones or one of two sets, one of two regions.
func shootVariants() []shootVariant {
	var out []shootVariant
	for _, seed := range []string{"", "aws-eu1", "aws-eu2"} {
		for _, sel := range []string{"", "gold", "silver"} {
			for _, zones := range []string{"", "eu-central-1a", "eu-central-1a,eu-central-1b"} {
				for _, region := range []string{"eu-central-1", "eu-west-1"} {
					out = append(out, shootVariant{seed, sel, zones, region})
				}
			}
		}
	}
	return out
}

// shootRequests are every CREATE of a variant, and every UPDATE from one
// variant to another through shoots and through shoots/binding.
func shootRequests() []shootRequest {
	vs := shootVariants()
	var out []shootRequest
	for _, v := range vs {
		out = append(out, shootRequest{op: admissionv1.Create, obj: v.json()})
	}
	for _, o := range vs {
		for _, n := range vs {
			for _, sub := range []string{"", "binding"} {
				out = append(out, shootRequest{op: admissionv1.Update, subResource: sub, old: o.json(), obj: n.json()})
			}
		}
	}
	return out
}

func describe(r shootRequest) string {
	s := string(r.op)
	if r.subResource != "" {
		s += " " + r.subResource
	}
	if r.old != "" {
		s += " from " + r.old
	}
	return s + " to " + r.obj
}

// emptyLandscape has no seeds: whatever the binding handler checks against
// a seed, it refuses. With no authorizer either, every request it judges is
// refused, and every request it admits, it admitted unchecked.
type emptyLandscape struct{}

func (emptyLandscape) Snapshot() *placement.Snapshot { return &placement.Snapshot{} }

// choosesNoSeed: a request through shoots that keeps the seed (none, or the
// same one) and, if there is one, leaves what it must offer alone. These must
// pass while seedwarden is down.
func choosesNoSeed(t *testing.T, r shootRequest) bool {
	t.Helper()
	if r.subResource != "" {
		return false
	}
	var n, o shootFields
	require.NoError(t, json.Unmarshal([]byte(r.obj), &n))
	if r.old == "" {
		return n.Spec.SeedName == ""
	}
	require.NoError(t, json.Unmarshal([]byte(r.old), &o))
	if n.Spec.SeedName != o.Spec.SeedName {
		return false
	}
	return o.Spec.SeedName == "" || (fmt.Sprint(n.Spec.SeedSelector) == fmt.Sprint(o.Spec.SeedSelector) &&
		fmt.Sprint(n.Spec.ControlPlane) == fmt.Sprint(o.Spec.ControlPlane) && n.Spec.Region == o.Spec.Region)
}

type shootFields struct {
	Spec struct {
		SeedName     string         `json:"seedName"`
		SeedSelector map[string]any `json:"seedSelector"`
		ControlPlane map[string]any `json:"controlPlane"`
		Region       string         `json:"region"`
	} `json:"spec"`
}

// TestShootGuardConditionsAgreeWithHandlers: for every CREATE and UPDATE
// over the fields the Shoot guards read, the seed webhook's condition sends
// every request its binding check judges (in both bind modes) and every
// request its capacity check judges, seed choices are always sent (they fail
// closed), and a request that chooses no seed is not sent, so an outage
// cannot refuse it.
func TestShootGuardConditionsAgreeWithHandlers(t *testing.T) {
	cond := conditionMatchers(t)[seedWebhook]
	require.NotNil(t, cond)
	binders := []*handlers.ShootBindingValidator{
		{Landscape: emptyLandscape{}, Log: logr.Discard()},
		{Landscape: emptyLandscape{}, Log: logr.Discard(), BindThroughShoots: true},
	}
	// Without a Store every request it judges is refused.
	capacity := &handlers.ShootCapacityValidator{Log: logr.Discard()}
	ctx := context.Background()

	var judged, skipped, capacityJudged int
	for _, r := range shootRequests() {
		req := review(t, r)
		sentToSeed := sent(t, cond, r)
		for _, v := range binders {
			resp := (&handlers.ShootSeedValidator{Binding: v, Capacity: capacity}).Handle(ctx, req)
			if !resp.Allowed && !sentToSeed {
				t.Errorf("the seed checks (bindThroughShoots %v) refuse what the condition does not send: %s: %s",
					v.BindThroughShoots, resp.Result.Message, describe(r))
			}
		}
		if resp := capacity.Handle(ctx, req); !resp.Allowed {
			assert.True(t, sentToSeed, "capacity judges what the condition does not send (%s): %s", resp.Result.Message, describe(r))
			capacityJudged++
		}
		if choosesNoSeed(t, r) {
			assert.False(t, sentToSeed, "a request choosing no seed is sent to the seed webhook: %s", describe(r))
			skipped++
		}
		if r.subResource == "binding" || seedOf(t, r.obj) != seedOf(t, r.old) {
			assert.True(t, sentToSeed, "a seed choice is not sent to the seed webhook: %s", describe(r))
			judged++
		}
	}
	t.Logf("%d seed choices sent (%d judged by capacity), %d requests choosing no seed never sent", judged, capacityJudged, skipped)
	assert.Positive(t, judged)
	assert.Positive(t, capacityJudged)
	assert.Positive(t, skipped)
}

func seedOf(t *testing.T, obj string) string {
	t.Helper()
	if obj == "" {
		return ""
	}
	var f shootFields
	require.NoError(t, json.Unmarshal([]byte(obj), &f))
	return f.Spec.SeedName
}

// The outage finding exactly: a plain CREATE without a seed, and the same
// Shoot as placement mode binding leaves it (the seed only announced in
// annotations), reach no fail-closed Shoot guard.
func TestSeedlessCreateReachesNoFailClosedWebhook(t *testing.T) {
	m := conditionMatchers(t)
	plain := shootVariant{region: "eu-central-1"}.json()
	announced := strings.Replace(plain, `"name":"crud"`,
		`"name":"crud","annotations":{"seedwarden.io/seed":"aws-eu1","seedwarden.io/reservation":"garden-dev/crud"}`, 1)
	for name, obj := range map[string]string{"plain": plain, "announced": announced} {
		r := shootRequest{op: admissionv1.Create, obj: obj}
		assert.False(t, sent(t, m[seedWebhook], r), "%s CREATE is sent to %s", name, seedWebhook)
		withSeed := shootRequest{op: admissionv1.Create, obj: strings.Replace(obj, `"region"`, `"seedName":"aws-eu1","region"`, 1)}
		assert.True(t, sent(t, m[seedWebhook], withSeed), "%s CREATE naming a seed", name)
	}
}

// annotated is a Shoot with these annotations (nil: none at all).
func annotated(annotations map[string]string) string {
	meta := map[string]any{"name": "crud", "namespace": "garden-dev"}
	if annotations != nil {
		meta["annotations"] = annotations
	}
	b, err := json.Marshal(map[string]any{"apiVersion": gardenerGroup + "/" + gardenerVersion, "kind": "Shoot", "metadata": meta,
		"spec": map[string]any{"region": "eu-central-1"}})
	if err != nil {
		panic(err)
	}
	return string(b)
}

// mutatingRouting returns what names the mutating webhooks the API server
// calls for a request: those with a rule for its operation on shoots whose
// conditions match. The manifests are read and compiled once.
func mutatingRouting(t *testing.T) func(t *testing.T, r shootRequest) []string {
	t.Helper()
	mwc := find[*admissionregistrationv1.MutatingWebhookConfiguration](t, manifests(t), mutatingConfiguration, "", "seedwarden")
	matchers := conditionMatchers(t)
	return func(t *testing.T, r shootRequest) []string {
		t.Helper()
		attr := versioned(t, r).Attributes
		var out []string
		for _, w := range mwc.Webhooks {
			ruled := slices.ContainsFunc(w.Rules, func(rule admissionregistrationv1.RuleWithOperations) bool {
				return (&rules.Matcher{Rule: rule, Attr: attr}).Matches()
			})
			// As the API server: conditions are evaluated only where there are some.
			if ruled && (len(w.MatchConditions) == 0 || sent(t, matchers[w.Name], r)) {
				out = append(out, w.Name)
			}
		}
		return out
	}
}

// TestMutatingWebhooksSendSeedwardenAnnotationChanges: every CREATE reaches
// the placing webhook, and the UPDATEs that add or change a seedwarden.io/*
// annotation the reverting one; removing one, or changing others, reaches
// neither.
func TestMutatingWebhooksSendSeedwardenAnnotationChanges(t *testing.T) {
	const place, revert = "place.shoots.seedwarden.io", "annotations.shoots.seedwarden.io"
	mutatingSent := mutatingRouting(t)
	own := map[string]string{"seedwarden.io/seed": "aws-eu1", "example.com/team": "a"}
	tests := []struct {
		name     string
		old, obj map[string]string
		create   bool
		want     []string
	}{
		{name: "CREATE without annotations", obj: nil, create: true, want: []string{place}},
		{name: "CREATE with a seedwarden.io annotation", obj: own, create: true, want: []string{place}},
		{name: "UPDATE without annotations", old: nil, obj: nil},
		{name: "UPDATE changing nothing", old: own, obj: own},
		{name: "UPDATE adding another annotation", old: own, obj: map[string]string{"seedwarden.io/seed": "aws-eu1", "example.com/team": "b", "x": "y"}},
		{name: "UPDATE adding the first annotations, one seedwarden.io", old: nil, obj: map[string]string{"seedwarden.io/reservation": "garden-dev/other"}, want: []string{revert}},
		{name: "UPDATE adding a seedwarden.io annotation", old: map[string]string{"a": "b"}, obj: map[string]string{"a": "b", "seedwarden.io/placement": "forged"}, want: []string{revert}},
		{name: "UPDATE changing a seedwarden.io annotation", old: own, obj: map[string]string{"seedwarden.io/seed": "aws-eu2", "example.com/team": "a"}, want: []string{revert}},
		{name: "UPDATE emptying a seedwarden.io annotation", old: own, obj: map[string]string{"seedwarden.io/seed": "", "example.com/team": "a"}, want: []string{revert}},
		{name: "UPDATE removing a seedwarden.io annotation", old: own, obj: map[string]string{"example.com/team": "a"}},
		{name: "UPDATE removing all annotations", old: own, obj: nil},
		{name: "UPDATE adding a key that only contains seedwarden.io/", old: nil, obj: map[string]string{"example.com/seedwarden.io": "x", "team.seedwarden.io/x": "y"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := shootRequest{op: admissionv1.Update, old: annotated(tc.old), obj: annotated(tc.obj)}
			if tc.create {
				r = shootRequest{op: admissionv1.Create, obj: annotated(tc.obj)}
			}
			assert.Equal(t, tc.want, mutatingSent(t, r))
		})
	}
}

// annotationLimit is the API server's limit on a object's annotations:
// keys and values together at most 256 KiB.
const annotationLimit = 256 << 10

// annotationsOf is n annotations with keys prefix + a counter, empty values.
func annotationsOf(prefix string, n int) map[string]string {
	out := make(map[string]string, n)
	for i := range n {
		out[prefix+strconv.FormatInt(int64(i), 36)] = ""
	}
	return out
}

// maxCount is how many keys prefix + counter fit into the annotation limit.
func maxCount(prefix string) int {
	n, total := 0, 0
	for ; ; n++ {
		k := len(prefix) + len(strconv.FormatInt(int64(n), 36))
		if total+k > annotationLimit {
			return n
		}
		total += k
	}
}

// TestMutatingConditionWithinCostBudget: the mutating webhook's condition
// costs, on the largest annotations the API server accepts, less than the
// API server's budget for matchConditions. An expression over budget counts
// as an error, which failurePolicy Ignore turns into skipping the webhook:
// a way to smuggle a forged annotation past it. The cost grows linearly with
// the annotations (checked on 1,000, 2,000 and 4,000 of them), so the test
// extrapolates to the most that fit rather than evaluating them all; both
// extremes: the shortest keys (the most entries), and keys that all start
// with seedwarden.io/ (each also compared with the old object's).
func TestMutatingConditionWithinCostBudget(t *testing.T) {
	for _, prefix := range []string{"", "seedwarden.io/"} {
		t.Run("keys "+prefix+"*", func(t *testing.T) {
			cost := func(n int) int64 {
				a := annotationsOf(prefix, n)
				return conditionCost(t, annotationChangeCondition, shootRequest{op: admissionv1.Update, old: annotated(a), obj: annotated(a)})
			}
			c1, c2, c4 := cost(1000), cost(2000), cost(4000)
			perThousand := c2 - c1
			assert.InDelta(t, 2*perThousand, c4-c2, float64(perThousand)/100, "cost not linear: %d, %d, %d", c1, c2, c4)
			most := maxCount(prefix)
			worst := c1 + perThousand*int64(most-1000)/1000
			t.Logf("%d annotations (the most that fit): cost about %d of %d", most, worst, celconfig.RuntimeCELCostBudgetMatchConditions)
			assert.Less(t, worst, int64(celconfig.RuntimeCELCostBudgetMatchConditions)/2, "within half the budget")
		})
	}

	// And a forged annotation among many is still sent.
	old := annotationsOf("", 5000)
	obj := annotationsOf("", 5000)
	obj["seedwarden.io/reservation"] = "garden-dev/other"
	assert.Equal(t, []string{"annotations.shoots.seedwarden.io"},
		mutatingRouting(t)(t, shootRequest{op: admissionv1.Update, old: annotated(old), obj: annotated(obj)}), "forged among many")
}
