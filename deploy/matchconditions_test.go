package manifests_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	celplugin "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/webhook"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
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
	for _, w := range vwc.Webhooks {
		w.FailurePolicy = &fail
		out[w.Name] = webhook.NewValidatingWebhookAccessor(w.Name, vwc.Name, &w).GetCompiledMatcher(compiler)
	}
	return out
}

// sent reports whether the API server sends r to the webhook whose matcher
// is m; an evaluation error fails the test.
func sent(t *testing.T, m matchconditions.Matcher, r shootRequest) bool {
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
		admission.Operation(r.op), nil, false, &user.DefaultInfo{Name: "alice"})
	versioned, err := admission.NewVersionedAttributes(attr, shootGVK, nil)
	require.NoError(t, err)
	res := m.Match(context.Background(), versioned, nil, nil)
	require.NoError(t, res.Error, "matchCondition of %s", describe(r))
	return res.Matches
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
// over the fields the Shoot guards read, the binding webhook's condition
// sends every request its handler judges (in both bind modes), the capacity
// webhook's sends exactly those its handler judges, seed choices are always
// sent (they fail closed), and a request that chooses no seed reaches
// neither, so an outage cannot refuse it.
func TestShootGuardConditionsAgreeWithHandlers(t *testing.T) {
	m := conditionMatchers(t)
	bindingCond, capacityCond := m["binding.shoots.seedwarden.io"], m["capacity.shoots.seedwarden.io"]
	require.NotNil(t, bindingCond)
	require.NotNil(t, capacityCond)
	binders := []*handlers.ShootBindingValidator{
		{Landscape: emptyLandscape{}, Log: logr.Discard()},
		{Landscape: emptyLandscape{}, Log: logr.Discard(), BindThroughShoots: true},
	}
	capacity := &handlers.ShootCapacityValidator{Log: logr.Discard()}
	ctx := context.Background()

	var judged, skipped int
	for _, r := range shootRequests() {
		req := review(t, r)
		toBinding, toCapacity := sent(t, bindingCond, r), sent(t, capacityCond, r)
		for _, v := range binders {
			resp := v.Handle(ctx, req)
			if !resp.Allowed && !toBinding {
				t.Errorf("binding (bindThroughShoots %v) refuses what its condition does not send: %s: %s",
					v.BindThroughShoots, resp.Result.Message, describe(r))
			}
		}
		capResp := capacity.Handle(ctx, req)
		assert.Equal(t, !capResp.Allowed, toCapacity, "capacity condition vs. handler (%s): %s", capResp.Result.Message, describe(r))

		if choosesNoSeed(t, r) {
			assert.False(t, toBinding, "a request choosing no seed is sent to the binding webhook: %s", describe(r))
			assert.False(t, toCapacity, "a request choosing no seed is sent to the capacity webhook: %s", describe(r))
			skipped++
		}
		if r.subResource == "binding" || seedOf(t, r.obj) != seedOf(t, r.old) {
			assert.True(t, toBinding, "a seed choice is not sent to the binding webhook: %s", describe(r))
			judged++
		}
	}
	t.Logf("%d seed choices sent, %d requests choosing no seed never sent", judged, skipped)
	assert.Positive(t, judged)
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
		for _, w := range []string{"binding.shoots.seedwarden.io", "capacity.shoots.seedwarden.io"} {
			assert.False(t, sent(t, m[w], r), "%s CREATE is sent to %s", name, w)
		}
		withSeed := shootRequest{op: admissionv1.Create, obj: strings.Replace(obj, `"region"`, `"seedName":"aws-eu1","region"`, 1)}
		assert.True(t, sent(t, m["binding.shoots.seedwarden.io"], withSeed), "%s CREATE naming a seed", name)
		assert.True(t, sent(t, m["capacity.shoots.seedwarden.io"], withSeed), "%s CREATE naming a seed", name)
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

// TestMutatingConditionSendsSeedwardenAnnotationChanges: every CREATE, and
// the UPDATEs that add or change a seedwarden.io/* annotation, reach the
// mutating webhook; removing one, or changing others, does not.
func TestMutatingConditionSendsSeedwardenAnnotationChanges(t *testing.T) {
	place := conditionMatchers(t)["place.shoots.seedwarden.io"]
	require.NotNil(t, place)
	own := map[string]string{"seedwarden.io/seed": "aws-eu1", "example.com/team": "a"}
	tests := []struct {
		name     string
		old, obj map[string]string
		create   bool
		want     bool
	}{
		{name: "CREATE without annotations", obj: nil, create: true, want: true},
		{name: "CREATE with a seedwarden.io annotation", obj: own, create: true, want: true},
		{name: "UPDATE without annotations", old: nil, obj: nil},
		{name: "UPDATE changing nothing", old: own, obj: own},
		{name: "UPDATE adding another annotation", old: own, obj: map[string]string{"seedwarden.io/seed": "aws-eu1", "example.com/team": "b", "x": "y"}},
		{name: "UPDATE adding the first annotations, one seedwarden.io", old: nil, obj: map[string]string{"seedwarden.io/reservation": "garden-dev/other"}, want: true},
		{name: "UPDATE adding a seedwarden.io annotation", old: map[string]string{"a": "b"}, obj: map[string]string{"a": "b", "seedwarden.io/placement": "forged"}, want: true},
		{name: "UPDATE changing a seedwarden.io annotation", old: own, obj: map[string]string{"seedwarden.io/seed": "aws-eu2", "example.com/team": "a"}, want: true},
		{name: "UPDATE emptying a seedwarden.io annotation", old: own, obj: map[string]string{"seedwarden.io/seed": "", "example.com/team": "a"}, want: true},
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
			assert.Equal(t, tc.want, sent(t, place, r))
		})
	}
}

// maxAnnotations fills the API server's limit on annotations (keys and
// values together at most 256 KiB) with the shortest keys, so that the
// condition iterates as many as any request can carry.
func maxAnnotations(reserve int) map[string]string {
	const limit = 256 << 10
	out := map[string]string{}
	total := reserve
	for i := 0; ; i++ {
		k := strconv.FormatInt(int64(i), 36)
		if total+len(k) > limit {
			return out
		}
		out[k] = ""
		total += len(k)
	}
}

// TestMutatingConditionWithinCostBudget: a forged seedwarden.io annotation
// among as many others as the API server accepts is still sent, and an
// UPDATE of such a Shoot that adds none evaluates within the budget too. An
// expression over the API server's budget would count as an error, which
// failurePolicy Ignore turns into skipping the webhook: a way to smuggle
// the annotation past it.
func TestMutatingConditionWithinCostBudget(t *testing.T) {
	place := conditionMatchers(t)["place.shoots.seedwarden.io"]
	require.NotNil(t, place)
	const forged = "seedwarden.io/reservation"
	old := maxAnnotations(len(forged) + len("garden-dev/other"))
	obj := maxAnnotations(len(forged) + len("garden-dev/other"))
	obj[forged] = "garden-dev/other"
	t.Logf("%d annotations", len(obj))
	assert.True(t, sent(t, place, shootRequest{op: admissionv1.Update, old: annotated(old), obj: annotated(obj)}), "forged among many")

	prefixed := map[string]string{}
	for k := range maxAnnotations(0) {
		if len(prefixed)*(len("seedwarden.io/")+4) > 250<<10 {
			break
		}
		prefixed["seedwarden.io/"+k] = ""
	}
	assert.False(t, sent(t, place, shootRequest{op: admissionv1.Update, old: annotated(prefixed), obj: annotated(prefixed)}),
		"unchanged seedwarden.io annotations, as many as fit")
}
