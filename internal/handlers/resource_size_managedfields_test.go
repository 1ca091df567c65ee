package handlers

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"

	"github.com/seedwarden/seedwarden/internal/metrics"
	"github.com/seedwarden/seedwarden/internal/objsize"
)

// shootLimit8Ki is the e2e suite's Shoot limit with the managedFields limit
// the configuration derives from it (config.DefaultManagedFieldsSize: twice
// the size, at least 16Ki; cmd/webhook's tests check the derivation).
func shootLimit8Ki() SizeLimit {
	return SizeLimit{
		ResourceRule: ResourceRule{APIGroups: []string{"core.gardener.cloud"}, APIVersions: []string{"*"}, Resources: []string{"shoots"}},
		Size:         "8Ki", Bytes: 8 << 10,
		ManagedFieldsSize: "16Ki", ManagedFieldsBytes: 16 << 10,
	}
}

func managedFieldsValidator(t *testing.T, mode string, reg prometheus.Registerer) *ResourceSizeValidator {
	return &ResourceSizeValidator{
		Enforce:              modeEnforcer(mode),
		Limits:               []SizeLimit{shootLimit8Ki()},
		UnrestrictedSubjects: Subjects{{Kind: SubjectUser, Name: "admin@example.com"}},
		Metrics:              metrics.New(reg),
		Log:                  vLog(t),
	}
}

// The attack, as the API server sent it: a tenant's CREATE of a Shoot whose
// metadata.managedFields carry a 120 KB entry of made-up field paths (the
// API server keeps an entry a client supplies and only adds its own for the
// request, here "kubectl-create"). Without managedFields the Shoot is far
// below the 8 KiB limit, which is why it used to be stored.
func TestShootWith120KBManagedFieldsEntryRefused(t *testing.T) {
	var paths strings.Builder
	for i := range 8000 {
		if i > 0 {
			paths.WriteByte(',')
		}
		fmt.Fprintf(&paths, `"f:k%06d":{}`, i) // 15 bytes with the comma: 120 KB in all
	}
	managedFields := `[{"manager":"hoard","operation":"Update","apiVersion":"core.gardener.cloud/v1beta1","time":"2026-11-26T10:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:annotations":{` + paths.String() + `}}}},` +
		`{"manager":"kubectl-create","operation":"Update","apiVersion":"core.gardener.cloud/v1beta1","time":"2026-11-26T10:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{".":{},"f:cloudProfile":{".":{},"f:kind":{},"f:name":{}},"f:credentialsBindingName":{},"f:kubernetes":{".":{},"f:version":{}},"f:networking":{".":{},"f:type":{}},"f:provider":{".":{},"f:type":{},"f:workers":{}},"f:region":{}}}}]`
	review := `{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{` +
		`"uid":"2b1c6f0e-7d3a-4c59-9e2f-5a8d1b3c4e6f",` +
		`"kind":{"group":"core.gardener.cloud","version":"v1beta1","kind":"Shoot"},` +
		`"resource":{"group":"core.gardener.cloud","version":"v1beta1","resource":"shoots"},` +
		`"requestKind":{"group":"core.gardener.cloud","version":"v1beta1","kind":"Shoot"},` +
		`"requestResource":{"group":"core.gardener.cloud","version":"v1beta1","resource":"shoots"},` +
		`"name":"hoarder","namespace":"garden-dev","operation":"CREATE",` +
		`"userInfo":{"username":"mallory@example.com","uid":"7c1d","groups":["system:authenticated"]},` +
		`"object":{"apiVersion":"core.gardener.cloud/v1beta1","kind":"Shoot","metadata":{"name":"hoarder","namespace":"garden-dev",` +
		`"uid":"0f4e2a9b-1c3d-4e5f-8a7b-9c0d1e2f3a4b","generation":1,"creationTimestamp":"2026-11-26T10:00:00Z","managedFields":` + managedFields + `},` +
		`"spec":{"cloudProfile":{"kind":"CloudProfile","name":"aws"},"credentialsBindingName":"aws","kubernetes":{"version":"1.33.4"},` +
		`"networking":{"type":"calico"},"provider":{"type":"aws","workers":[{"name":"worker","machine":{"type":"m5.large"},"minimum":1,"maximum":2,"zones":["eu-central-1a"]}]},` +
		`"region":"eu-central-1"},"status":{}},` +
		`"oldObject":null,"dryRun":false,"options":{"kind":"CreateOptions","apiVersion":"meta.k8s.io/v1","fieldManager":"kubectl-create"}}}`

	reg := prometheus.NewRegistry()
	resp := vServe(t, managedFieldsValidator(t, OperationModeBlock, reg), review)

	require.False(t, resp.Allowed, "a 120 KB managedFields entry must not be stored under an 8 KiB limit")
	assert.Equal(t, int32(http.StatusForbidden), resp.Result.Code)
	assert.Equal(t, fmt.Sprintf(`seedwarden: metadata.managedFields of %d bytes exceed the limit of 16Ki (16384 bytes) for shoots.core.gardener.cloud/v1beta1 "garden-dev/hoarder"`, len(managedFields)),
		vMessage(resp))
	assert.Greater(t, len(managedFields), 120_000)
	assert.Equal(t, 1.0, rejectedCount(t, reg, metrics.RejectReasonManagedFields))
}

// rejectedCount sums seedwarden_rejected_resources_total for reason.
func rejectedCount(t *testing.T, reg *prometheus.Registry, reason string) float64 {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	var n float64
	for _, f := range families {
		if f.GetName() != metrics.RejectedResourcesTotalName {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "reason" && l.GetValue() == reason {
					n += m.GetCounter().GetValue()
				}
			}
		}
	}
	return n
}

// shootWithSizes is a Shoot whose object measures objectSize bytes and whose
// metadata.managedFields measure managedFieldsSize bytes (at least 140).
func shootWithSizes(t testing.TB, objectSize, managedFieldsSize int) string {
	t.Helper()
	const entry = `[{"manager":"m","operation":"Update","apiVersion":"core.gardener.cloud/v1beta1","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:annotations":{"f:%s":{}}}}}]`
	pad := managedFieldsSize - len(fmt.Sprintf(entry, ""))
	require.GreaterOrEqual(t, pad, 0, "managedFields too small to pad")
	const shoot = `{"apiVersion":"core.gardener.cloud/v1beta1","kind":"Shoot","metadata":{"name":"obj","namespace":"garden-dev","managedFields":%s},"spec":{"region":"%s"},"status":{"seedName":"aws-eu1"}}`
	mf := fmt.Sprintf(entry, strings.Repeat("a", pad))
	base, err := objsize.MeasureSizes(fmt.Appendf(nil, shoot, mf, ""))
	require.NoError(t, err)
	require.LessOrEqual(t, base.Object, int64(objectSize), "object too small to pad")
	obj := fmt.Sprintf(shoot, mf, strings.Repeat("r", objectSize-int(base.Object)))
	got, err := objsize.MeasureSizes([]byte(obj))
	require.NoError(t, err)
	require.Equal(t, objsize.Sizes{Object: int64(objectSize), ManagedFields: int64(managedFieldsSize)}, got)
	return obj
}

func TestManagedFieldsLimit(t *testing.T) {
	const limit = 16 << 10
	small := shootWithSizes(t, 1000, 500)
	at := shootWithSizes(t, 1000, limit)
	over := shootWithSizes(t, 1000, limit+1)
	wayOver := shootWithSizes(t, 1000, 3*limit)
	tenant := &authenticationv1.UserInfo{Username: "mallory@example.com", Groups: []string{"system:authenticated"}}
	robot := &authenticationv1.UserInfo{Username: "system:serviceaccount:garden-dev:robot", Groups: []string{"system:serviceaccounts", "system:serviceaccounts:garden-dev"}}
	gardenlet := &authenticationv1.UserInfo{Username: "gardener.cloud:system:seed:aws-eu1", Groups: []string{"gardener.cloud:system:seeds", "system:authenticated"}}
	kcm := &authenticationv1.UserInfo{Username: "system:serviceaccount:kube-system:generic-garbage-collector"}
	gcm := &authenticationv1.UserInfo{Username: "system:serviceaccount:garden:gardener-controller-manager"}
	masters := &authenticationv1.UserInfo{Username: "system:apiserver", Groups: []string{"system:masters"}}
	admin := &authenticationv1.UserInfo{Username: "admin@example.com"}

	create := func(object string, u *authenticationv1.UserInfo) vReview {
		return vReview{operation: admissionv1.Create, object: object, name: "obj", user: u}
	}
	update := func(old, object string, u *authenticationv1.UserInfo) vReview {
		return vReview{operation: admissionv1.Update, object: object, oldObject: old, name: "obj", user: u}
	}
	tests := []struct {
		name        string
		mode        string
		limitless   bool // ManagedFieldsBytes 0
		review      vReview
		wantMessage string // "" admits
		wantWarning string
		sizeOnly    bool // refused for the object's size alone
	}{
		{name: "create at the limit", review: create(at, tenant)},
		{name: "create one byte over", review: create(over, tenant),
			wantMessage: fmt.Sprintf(`seedwarden: metadata.managedFields of %d bytes exceed the limit of 16Ki (16384 bytes) for shoots.core.gardener.cloud/v1beta1 "garden-dev/obj"`, limit+1)},
		{name: "create by a tenant's service account", review: create(over, robot), wantMessage: "metadata.managedFields of 16385 bytes exceed"},
		{name: "the object and its managedFields at their limits", review: create(shootWithSizes(t, 8<<10, limit), tenant)},
		{name: "both over: both named", review: create(shootWithSizes(t, 8<<10+1, limit+1), tenant),
			wantMessage: "seedwarden: resource size 8193 bytes exceeds the limit of 8Ki (8192 bytes) for shoots.core.gardener.cloud/v1beta1 \"garden-dev/obj\"; metadata.managedFields of 16385 bytes exceed"},

		// An UPDATE is refused only when it grows managedFields over the limit.
		{name: "update growing over the limit", review: update(small, over, tenant),
			wantMessage: "metadata.managedFields of 16385 bytes exceed the limit of 16Ki (16384 bytes) for shoots.core.gardener.cloud/v1beta1 \"garden-dev/obj\" (stored: 500 bytes; an update may keep managedFields over the limit, not grow them)"},
		{name: "update within the limit", review: update(wayOver, at, tenant)},
		{name: "update of an object over the limit, same size", review: update(over, over, tenant)},
		{name: "update of an object over the limit, shrinking", review: update(wayOver, over, tenant)},
		{name: "update of an object over the limit, growing by one byte", review: update(over, shootWithSizes(t, 1000, limit+2), tenant),
			wantMessage: "(stored: 16385 bytes;"},
		{name: "update without an old object", review: update("", over, tenant), wantMessage: "(stored: 0 bytes;"},

		// Gardener's and Kubernetes' own components are never refused for managedFields.
		{name: "gardenlet grows an object over the limit", review: update(over, wayOver, gardenlet)},
		{name: "garbage collector grows an object over the limit", review: update(over, wayOver, kcm)},
		{name: "gardener-controller-manager grows an object over the limit", review: update(over, wayOver, gcm)},
		{name: "API server loopback creates over the limit", review: create(wayOver, masters)},
		{name: "unrestricted subject", review: create(wayOver, admin)},
		{name: "their object size is still limited", review: create(shootWithSizes(t, 9000, 500), gardenlet), wantMessage: "resource size 9000 bytes exceeds", sizeOnly: true},

		{name: "log mode admits with a warning", mode: OperationModeLog, review: create(over, tenant),
			wantWarning: "metadata.managedFields of 16385 bytes exceed the limit of 16Ki (16384 bytes) for shoots.core.gardener.cloud/v1beta1 \"garden-dev/obj\" (admitted: resource-size enforcement is warn; deny would refuse this request)"},
		{name: "no managedFields limit", limitless: true, review: create(wayOver, tenant)},
		{name: "status subresource", review: func() vReview {
			r := update(small, wayOver, tenant)
			r.subResource = "status"
			return r
		}()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mode := tc.mode
			if mode == "" {
				mode = OperationModeBlock
			}
			reg := prometheus.NewRegistry()
			v := managedFieldsValidator(t, mode, reg)
			if tc.limitless {
				v.Limits[0].ManagedFieldsBytes = 0
			}
			resp := vServe(t, v, tc.review.body(t))
			if tc.wantMessage == "" {
				assert.True(t, resp.Allowed, vMessage(resp))
			} else {
				assert.False(t, resp.Allowed)
				assert.Contains(t, vMessage(resp), tc.wantMessage)
			}
			if tc.wantWarning != "" {
				require.Len(t, resp.Warnings, 1)
				assert.Contains(t, resp.Warnings[0], tc.wantWarning)
				assertValidWarning(t, resp.Warnings[0])
			} else {
				assert.Empty(t, resp.Warnings)
			}
			want := 0.0
			if (tc.wantMessage != "" || tc.wantWarning != "") && !tc.sizeOnly {
				want = 1
			}
			assert.Equal(t, want, rejectedCount(t, reg, metrics.RejectReasonManagedFields), "counted as managed_fields")
		})
	}
}
