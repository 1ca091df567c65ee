package handlers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seedwarden/seedwarden/internal/autoscalingapi"
)

// saJSON is a SeedAutoscaler as the API server sends it: name, target set,
// replicas from 1 to maxR, and metrics (JSON array members), with the
// metadata a stored object carries.
func saJSON(name, set string, maxR int, metrics ...string) string {
	if len(metrics) == 0 {
		metrics = []string{`{"type": "Resource", "resource": {"name": "shoots", "target": {"type": "Utilization", "averageUtilization": 80}}}`}
	}
	return fmt.Sprintf(`{
  "apiVersion": "autoscaling.seedwarden.io/v1alpha1",
  "kind": "SeedAutoscaler",
  "metadata": {
    "name": %q,
    "namespace": "garden",
    "uid": "4b0c2f5e-8d7a-4e3b-a1c2-9f8e7d6c5b4a",
    "resourceVersion": "812",
    "generation": 1,
    "creationTimestamp": "2026-01-02T03:04:05Z",
    "managedFields": [{"manager": "kubectl", "operation": "Update", "apiVersion": "autoscaling.seedwarden.io/v1alpha1", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {}}}]
  },
  "spec": {
    "scaleTargetRef": {"apiVersion": "seedmanagement.gardener.cloud/v1alpha1", "kind": "ManagedSeedSet", "name": %q},
    "minReplicas": 1,
    "maxReplicas": %d,
    "metrics": [%s]
  }
}`, name, set, maxR, strings.Join(metrics, ", "))
}

// saReview is an AdmissionReview of a SeedAutoscaler write by user.
func saReview(op admissionv1.Operation, user, object, oldObject string) vReview {
	return vReview{
		kind: saGVK, resource: saGVR, operation: op, namespace: "garden", name: "sas", object: object, oldObject: oldObject,
		user: &authenticationv1.UserInfo{Username: user, Groups: []string{"system:authenticated"}},
	}
}

var (
	saGVK = metaGVK("autoscaling.seedwarden.io", "v1alpha1", "SeedAutoscaler")
	saGVR = metaGVR("autoscaling.seedwarden.io", "v1alpha1", "seedautoscalers")
)

// saLister lists the given SeedAutoscalers, or fails with err, and counts
// the calls.
type saLister struct {
	items []autoscalingapi.SeedAutoscaler
	err   error
	calls int
}

func (l *saLister) list(_ context.Context, namespace string) ([]autoscalingapi.SeedAutoscaler, error) {
	l.calls++
	if l.err != nil {
		return nil, l.err
	}
	var out []autoscalingapi.SeedAutoscaler
	for _, sa := range l.items {
		if sa.Namespace == namespace {
			out = append(out, sa)
		}
	}
	return out, nil
}

func storedSA(name, set string) autoscalingapi.SeedAutoscaler {
	return autoscalingapi.SeedAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "garden"},
		Spec:       autoscalingapi.SeedAutoscalerSpec{ScaleTargetRef: autoscalingapi.CrossVersionObjectReference{Name: set}},
	}
}

const (
	scaler = "scaler@example.com" // may update managedseedsets/scale
	editor = "editor@example.com" // may write SeedAutoscalers only
)

func TestSeedAutoscalerValidator(t *testing.T) {
	headroomInline := func(bytes int) string {
		pad := strings.Repeat("x", bytes)
		return `{"type": "Headroom", "headroom": {"minShoots": 3, "shoot": {"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot", "metadata": {"annotations": {"pad": "` + pad + `"}}}}}`
	}
	many := make([]string, autoscalingapi.MaxMetrics+1)
	for i := range many {
		many[i] = `{"type": "Headroom", "headroom": {"profile": "small", "minShoots": 3}}`
	}
	tests := []struct {
		name       string
		body       vReview
		others     []autoscalingapi.SeedAutoscaler
		listErr    error
		authErr    error
		allowed    bool
		code       int32 // 0: 403 when denied
		message    string
		asked      bool // the authorizer was asked
		listed     bool
		askedAbout []string
	}{
		{
			name: "create by a user who may scale", body: saReview(admissionv1.Create, scaler, saJSON("sas", "set-a", 3), ""),
			others:  []autoscalingapi.SeedAutoscaler{storedSA("other", "set-b")},
			allowed: true, message: `user "scaler@example.com" may scale ManagedSeedSet "set-a"`, asked: true, listed: true,
			askedAbout: []string{scaler, "garden", "set-a"},
		},
		{
			name: "create by a user who may not scale", body: saReview(admissionv1.Create, editor, saJSON("sas", "set-a", 3), ""),
			message: `user "editor@example.com" may not make SeedAutoscaler garden/sas scale ManagedSeedSet "set-a": that needs permission to update managedseedsets/scale (seedmanagement.gardener.cloud) in namespace "garden" (no RBAC rule)`,
			asked:   true,
		},
		{
			name: "authorizer unreachable: denied", body: saReview(admissionv1.Create, scaler, saJSON("sas", "set-a", 3), ""), authErr: errors.New("connection refused"),
			message: `cannot verify permission to scale ManagedSeedSet "set-a": connection refused`, asked: true,
		},
		{
			name: "a second SeedAutoscaler for a set", body: saReview(admissionv1.Create, scaler, saJSON("sas", "set-a", 3), ""),
			others:  []autoscalingapi.SeedAutoscaler{storedSA("first", "set-a")},
			message: "ManagedSeedSet garden/set-a is already scaled by SeedAutoscaler garden/first; a set takes one SeedAutoscaler",
			asked:   true, listed: true,
		},
		{
			name: "one being deleted does not count", body: saReview(admissionv1.Create, scaler, saJSON("sas", "set-a", 3), ""),
			others: func() []autoscalingapi.SeedAutoscaler {
				sa := storedSA("first", "set-a")
				sa.DeletionTimestamp = &metav1.Time{}
				return []autoscalingapi.SeedAutoscaler{sa}
			}(),
			allowed: true, asked: true, listed: true,
		},
		{
			name: "list fails: denied", body: saReview(admissionv1.Create, scaler, saJSON("sas", "set-a", 3), ""), listErr: errors.New("timeout"),
			message: `cannot check for another SeedAutoscaler of ManagedSeedSet "set-a": timeout`, asked: true, listed: true,
		},
		{
			name: "update retargeting by a user who may not scale", body: saReview(admissionv1.Update, editor, saJSON("sas", "set-b", 3), saJSON("sas", "set-a", 3)),
			message: `may not make SeedAutoscaler garden/sas scale ManagedSeedSet "set-b"`, asked: true,
		},
		{
			name: "update retargeting to a set another one scales", body: saReview(admissionv1.Update, scaler, saJSON("sas", "set-b", 3), saJSON("sas", "set-a", 3)),
			others:  []autoscalingapi.SeedAutoscaler{storedSA("sas", "set-a"), storedSA("first", "set-b")},
			message: "already scaled by SeedAutoscaler garden/first", asked: true, listed: true,
		},
		{
			name: "update of maxReplicas by a user who may not scale", body: saReview(admissionv1.Update, editor, saJSON("sas", "set-a", 30), saJSON("sas", "set-a", 3)),
			message: `may not make SeedAutoscaler garden/sas scale ManagedSeedSet "set-a"`, asked: true,
		},
		{
			name: "update of maxReplicas by a scaler: its own entry is not a second", body: saReview(admissionv1.Update, scaler, saJSON("sas", "set-a", 30), saJSON("sas", "set-a", 3)),
			others:  []autoscalingapi.SeedAutoscaler{storedSA("sas", "set-a")},
			allowed: true, asked: true,
		},
		{
			name: "update of metadata only: nothing asked", body: saReview(admissionv1.Update, editor, strings.Replace(saJSON("sas", "set-a", 3), `"generation": 1`, `"generation": 1, "labels": {"team": "a"}`, 1), saJSON("sas", "set-a", 3)),
			allowed: true, message: "unchanged",
		},
		{
			name: "too many metrics", body: saReview(admissionv1.Create, scaler, saJSON("sas", "set-a", 3, many...), ""),
			message: fmt.Sprintf("SeedAutoscaler garden/sas: spec.metrics: %d metrics: at most %d", autoscalingapi.MaxMetrics+1, autoscalingapi.MaxMetrics),
		},
		{
			name: "inline Shoot too large", body: saReview(admissionv1.Create, scaler, saJSON("sas", "set-a", 3, headroomInline(autoscalingapi.MaxInlineShootBytes)), ""),
			message: "spec.metrics[0].headroom.shoot: ",
		},
		{
			name: "update of metadata only, of one stored past the bounds", body: saReview(admissionv1.Update, editor,
				strings.Replace(saJSON("sas", "set-a", 3, many...), `"generation": 1`, `"generation": 1, "finalizers": ["example.com/keep"]`, 1), saJSON("sas", "set-a", 3, many...)),
			allowed: true, message: "unchanged",
		},
		{
			name: "inline Shoot within bounds", body: saReview(admissionv1.Create, scaler, saJSON("sas", "set-a", 3, headroomInline(1000)), ""),
			allowed: true, asked: true, listed: true,
		},
		{
			name: "delete: nothing to check", body: saReview(admissionv1.Delete, editor, "", saJSON("sas", "set-a", 3)),
			allowed: true, message: "nothing to check for operation DELETE",
		},
		{
			name: "wrong kind", body: vReview{kind: metaGVK("", "v1", "Secret"), resource: metaGVR("", "v1", "secrets"), namespace: "garden", name: "x", object: "{}"},
			code: 400, message: "expected kind autoscaling.seedwarden.io/v1alpha1 SeedAutoscaler",
		},
		{
			name: "status subresource", body: vReview{kind: saGVK, resource: saGVR,
				subResource: "status", operation: admissionv1.Update, namespace: "garden", name: "sas", object: saJSON("sas", "set-a", 3), oldObject: saJSON("sas", "set-a", 3)},
			code: 400, message: "without subresource",
		},
		{
			name: "malformed object", body: saReview(admissionv1.Create, scaler, `{"kind": "SeedAutoscaler", "spec": {"maxReplicas": "three"}}`, ""),
			code: 400, message: "cannot decode object as a SeedAutoscaler",
		},
		{
			name: "object of another kind", body: saReview(admissionv1.Create, scaler, `{"apiVersion": "v1", "kind": "ConfigMap"}`, ""),
			code: 400, message: `object has kind "ConfigMap", expected "SeedAutoscaler"`,
		},
		{
			name: "no object", body: saReview(admissionv1.Create, scaler, "null", ""),
			code: 400, message: "carries no object",
		},
		{
			name: "update without an old object", body: saReview(admissionv1.Update, scaler, saJSON("sas", "set-a", 3), "null"),
			code: 400, message: "old object: seedwarden: admission request carries no object",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			auth := &fakeAuthorizer{allowed: map[string]bool{scaler: true}, reason: "no RBAC rule", err: tc.authErr}
			if tc.allowed {
				auth.reason = ""
			}
			lister := &saLister{items: tc.others, err: tc.listErr}
			v := &SeedAutoscalerValidator{Authorizer: auth, Autoscalers: lister.list, Log: vLog(t)}
			resp := vServe(t, v, tc.body.body(t))
			assert.Equal(t, tc.allowed, resp.Allowed, vMessage(resp))
			if !tc.allowed {
				require.NotNil(t, resp.Result)
				assert.Equal(t, cmpOr(tc.code, 403), resp.Result.Code)
			}
			assert.Contains(t, vMessage(resp), tc.message)
			assert.Equal(t, tc.asked, auth.calls.Load() > 0, "authorizer asked")
			assert.Equal(t, tc.listed, lister.calls > 0, "SeedAutoscalers listed")
			if tc.askedAbout != nil {
				assert.Equal(t, tc.askedAbout, auth.last)
			}
		})
	}
}

func cmpOr(v, def int32) int32 {
	if v == 0 {
		return def
	}
	return v
}

// Which UPDATEs ask again: those that change what the SeedAutoscaler may
// do to its set, and no others.
func TestSeedAutoscalerScalesDifferently(t *testing.T) {
	base := func() *autoscalingapi.SeedAutoscaler {
		sa := storedSA("sas", "set-a")
		sa.Spec.MaxReplicas = 3
		sa.Spec.Metrics = []autoscalingapi.MetricSpec{{Type: autoscalingapi.HeadroomMetricSourceType,
			Headroom: &autoscalingapi.HeadroomMetricSource{Profile: "small", MinShoots: 3}}}
		return &sa
	}
	one := int32(1)
	for name, tc := range map[string]struct {
		change func(*autoscalingapi.SeedAutoscaler)
		want   bool
	}{
		"nothing":              {func(*autoscalingapi.SeedAutoscaler) {}, false},
		"labels":               {func(s *autoscalingapi.SeedAutoscaler) { s.Labels = map[string]string{"a": "b"} }, false},
		"behavior":             {func(s *autoscalingapi.SeedAutoscaler) { s.Spec.Behavior = &autoscalingapi.Behavior{} }, false},
		"dry run turned on":    {func(s *autoscalingapi.SeedAutoscaler) { s.Spec.DryRun = true }, false},
		"minReplicas set to 1": {func(s *autoscalingapi.SeedAutoscaler) { s.Spec.MinReplicas = &one }, false}, // the default
		"target":               {func(s *autoscalingapi.SeedAutoscaler) { s.Spec.ScaleTargetRef.Name = "set-b" }, true},
		"maxReplicas":          {func(s *autoscalingapi.SeedAutoscaler) { s.Spec.MaxReplicas = 4 }, true},
		"minReplicas":          {func(s *autoscalingapi.SeedAutoscaler) { s.Spec.MinReplicas = new(int32(3)) }, true},
		"a metric's target":    {func(s *autoscalingapi.SeedAutoscaler) { s.Spec.Metrics[0].Headroom.MinShoots = 30 }, true},
		"a metric added":       {func(s *autoscalingapi.SeedAutoscaler) { s.Spec.Metrics = append(s.Spec.Metrics, s.Spec.Metrics[0]) }, true},
		"dry run turned off":   {func(s *autoscalingapi.SeedAutoscaler) {}, true},
	} {
		t.Run(name, func(t *testing.T) {
			old, sa := base(), base()
			if name == "dry run turned off" {
				old.Spec.DryRun = true
			}
			tc.change(sa)
			assert.Equal(t, tc.want, scalesDifferently(old, sa))
		})
	}
}
