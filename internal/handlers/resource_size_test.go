package handlers

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/seedwarden/seedwarden/internal/admissionjson"
	"github.com/seedwarden/seedwarden/internal/metrics"
	"github.com/seedwarden/seedwarden/internal/objsize"
)

var (
	gvrShoots   = metaGVR("core.gardener.cloud", "v1beta1", "shoots")
	gvrSeeds    = metaGVR("core.gardener.cloud", "v1beta1", "seeds")
	gvrProjects = metaGVR("core.gardener.cloud", "v1beta1", "projects")
	gvrProfiles = metaGVR("core.gardener.cloud", "v1beta1", "cloudprofiles")
	gvrSecrets  = metaGVR("", "v1", "secrets")
	gvrWidgets  = metaGVR("example.com", "v1", "widgets")
	gvrPods     = metaGVR("", "v1", "pods")
)

func gvkFor(gvr metav1.GroupVersionResource, kind string) metav1.GroupVersionKind {
	return metaGVK(gvr.Group, gvr.Version, kind)
}

// modeEnforcer is Gardener's operationMode as the resource-size guard's
// enforcement: block denies, log warns.
func modeEnforcer(mode string) *Enforcer {
	if mode == OperationModeLog {
		return NewEnforcer(WebhookResourceSize, EnforceWarn, nil, nil, logr.Discard())
	}
	return NewEnforcer(WebhookResourceSize, EnforceDeny, nil, nil, logr.Discard())
}

func newSizeValidator(log logr.Logger, mode string, reg prometheus.Registerer) *ResourceSizeValidator {
	return &ResourceSizeValidator{
		Enforce: modeEnforcer(mode),
		Limits: []SizeLimit{
			{ResourceRule: ResourceRule{APIGroups: []string{"core.gardener.cloud"}, APIVersions: []string{"v1beta1"}, Resources: []string{"projects"}}, Size: "512", Bytes: 512},
			{ResourceRule: ResourceRule{APIGroups: []string{"core.gardener.cloud"}, APIVersions: []string{"*"}, Resources: []string{"shoots", "seeds"}}, Size: "1Ki", Bytes: 1024},
			{ResourceRule: ResourceRule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"secrets", "configmaps"}}, Size: "100", Bytes: 100},
			{ResourceRule: ResourceRule{APIGroups: []string{"*"}, APIVersions: []string{"*"}, Resources: []string{"widgets"}}, Size: "10Ki", Bytes: 10240},
			// A Gardener entry with a count only, then one that would limit its size.
			{ResourceRule: ResourceRule{APIGroups: []string{"core.gardener.cloud"}, APIVersions: []string{"*"}, Resources: []string{"cloudprofiles"}}, None: true},
			{ResourceRule: ResourceRule{APIGroups: []string{"*"}, APIVersions: []string{"*"}, Resources: []string{"cloudprofiles"}}, Size: "1", Bytes: 1},
		},
		Counts: []CountLimit{
			{ResourceRule: ResourceRule{APIGroups: []string{"core.gardener.cloud"}, APIVersions: []string{"*"}, Resources: []string{"seeds"}}, Count: 2},
			{ResourceRule: ResourceRule{APIGroups: []string{"core.gardener.cloud"}, APIVersions: []string{"*"}, Resources: []string{"projects"}}, Count: 1},
			{ResourceRule: ResourceRule{APIGroups: []string{"core.gardener.cloud"}, APIVersions: []string{"*"}, Resources: []string{"cloudprofiles"}}, None: true},
			{ResourceRule: ResourceRule{APIGroups: []string{"*"}, APIVersions: []string{"*"}, Resources: []string{"cloudprofiles"}}, Count: 0},
		},
		UnrestrictedSubjects: Subjects{
			{Kind: SubjectUser, Name: "admin@example.com"},
			{Kind: SubjectGroup, Name: "garden:*"},
			{Kind: SubjectServiceAccount, Namespace: "garden", Name: "gardener-*"},
			{Kind: SubjectUser, Name: "system:serviceaccount:kube-system:*"},
		},
		Counter: vStore(vSeed("a", -1), vSeed("b", -1)), // 2 seeds, 1 project
		Metrics: metrics.New(reg),
		Log:     log,
	}
}

// sized returns a JSON object of exactly n bytes as objsize measures it
// (plus a status and managedFields that do not count).
func sized(t testing.TB, kind, name string, n int) string {
	t.Helper()
	base := fmt.Sprintf(`{"kind":%q,"metadata":{"name":%q,"managedFields":[{"manager":"kubectl","fieldsV1":{"f:data":{}}}]},"status":{"phase":"Ready"},"data":""}`, kind, name)
	m, err := objsize.Measure([]byte(base))
	require.NoError(t, err)
	require.LessOrEqual(t, int(m), n, "object too small to pad")
	obj := strings.Replace(base, `"data":""`, `"data":"`+strings.Repeat("x", n-int(m))+`"`, 1)
	m, err = objsize.Measure([]byte(obj))
	require.NoError(t, err)
	require.Equal(t, int64(n), m)
	return obj
}

func TestResourceSizeValidator(t *testing.T) {
	admin := &authenticationv1.UserInfo{Username: "admin@example.com"}
	op := &authenticationv1.UserInfo{Username: "someone", Groups: []string{"system:authenticated", "garden:operators"}}
	gardenSA := &authenticationv1.UserInfo{Username: "system:serviceaccount:garden:gardener-controller-manager"}
	kubeSystemSA := &authenticationv1.UserInfo{Username: "system:serviceaccount:kube-system:generic-garbage-collector"}
	otherSA := &authenticationv1.UserInfo{Username: "system:serviceaccount:garden-dev:gardener-controller-manager"}

	req := func(gvr metav1.GroupVersionResource, kind string, op admissionv1.Operation, object string) vReview {
		return vReview{kind: gvkFor(gvr, kind), resource: gvr, operation: op, object: object, name: "obj", namespace: "garden-dev"}
	}
	clusterReq := func(gvr metav1.GroupVersionResource, kind string, op admissionv1.Operation, object string) vReview {
		r := req(gvr, kind, op, object)
		r.namespace = "-"
		return r
	}
	as := func(r vReview, u *authenticationv1.UserInfo) vReview { r.user = u; return r }

	tests := []struct {
		name        string
		mode        string // default block
		review      vReview
		wantAllowed bool
		wantMessage string
		wantWarning string
		wantMetrics map[string]float64 // "operation/kind/namespace/reason" -> count
		// groupWildcard adds {Group, "*"} to the unrestricted subjects.
		groupWildcard bool
	}{
		{name: "shoot at the limit", review: req(gvrShoots, "Shoot", admissionv1.Create, sized(t, "Shoot", "obj", 1024)), wantAllowed: true},
		{name: "shoot over the limit", review: req(gvrShoots, "Shoot", admissionv1.Create, sized(t, "Shoot", "obj", 1025)),
			wantMessage: `seedwarden: resource size 1025 bytes exceeds the limit of 1Ki (1024 bytes) for shoots.core.gardener.cloud/v1beta1 "garden-dev/obj"`,
			wantMetrics: map[string]float64{"CREATE/Shoot/garden-dev/size": 1}},
		{name: "update over the limit", review: req(gvrShoots, "Shoot", admissionv1.Update, sized(t, "Shoot", "obj", 2000)),
			wantMessage: "resource size 2000 bytes exceeds the limit of 1Ki", wantMetrics: map[string]float64{"UPDATE/Shoot/garden-dev/size": 1}},
		{name: "real shoot: managedFields and status do not count", review: req(gvrShoots, "Shoot", admissionv1.Update, shootJSON("", "")),
			wantMessage: "exceeds the limit of 1Ki"},
		{name: "secret over the limit", review: req(gvrSecrets, "Secret", admissionv1.Create, sized(t, "Secret", "obj", 101)),
			wantMessage: `resource size 101 bytes exceeds the limit of 100 (100 bytes) for secrets/v1 "garden-dev/obj"`},
		{name: "secret of another version has no limit", review: req(metaGVR("", "v2", "secrets"), "Secret", admissionv1.Create, sized(t, "Secret", "obj", 101)), wantAllowed: true},
		{name: "resource without limit", review: req(gvrPods, "Pod", admissionv1.Create, sized(t, "Pod", "obj", 100000)), wantAllowed: true},
		{name: "first matching limit wins", review: req(gvrProjects, "Project", admissionv1.Update, sized(t, "Project", "obj", 600)),
			wantMessage: "exceeds the limit of 512 (512 bytes)"},
		{name: "wildcard group", review: req(gvrWidgets, "Widget", admissionv1.Create, sized(t, "Widget", "obj", 10240)), wantAllowed: true},
		{name: "wildcard group over", review: req(gvrWidgets, "Widget", admissionv1.Create, sized(t, "Widget", "obj", 10241)),
			wantMessage: `for widgets.example.com/v1 "garden-dev/obj"`},
		{name: "generated name in the message", review: func() vReview {
			r := req(gvrSecrets, "Secret", admissionv1.Create, strings.Replace(sized(t, "Secret", "", 150), `"name":""`, `"generateName":"token-"`, 1))
			r.name = "-"
			return r
		}(), wantMessage: `for secrets/v1 "garden-dev/token-"`},

		// Modes
		{name: "log mode admits with a warning", mode: "log", review: req(gvrShoots, "Shoot", admissionv1.Create, sized(t, "Shoot", "obj", 1025)),
			wantAllowed: true, wantWarning: `seedwarden: resource size 1025 bytes exceeds the limit of 1Ki (1024 bytes) for shoots.core.gardener.cloud/v1beta1 "garden-dev/obj" (admitted: resource-size enforcement is warn; deny would refuse this request)`,
			wantMetrics: map[string]float64{"CREATE/Shoot/garden-dev/size": 1}},
		{name: "log mode within limits", mode: "log", review: req(gvrShoots, "Shoot", admissionv1.Create, sized(t, "Shoot", "obj", 100)), wantAllowed: true},

		// Unrestricted subjects
		{name: "unrestricted user", review: as(req(gvrShoots, "Shoot", admissionv1.Create, sized(t, "Shoot", "obj", 5000)), admin), wantAllowed: true},
		{name: "unrestricted group by wildcard", review: as(req(gvrShoots, "Shoot", admissionv1.Create, sized(t, "Shoot", "obj", 5000)), op), wantAllowed: true},
		{name: "unrestricted service account", review: as(req(gvrShoots, "Shoot", admissionv1.Create, sized(t, "Shoot", "obj", 5000)), gardenSA), wantAllowed: true},
		// Gardener: a service account is exempted by ServiceAccount subjects only.
		{name: "service account not exempted by a User subject", review: as(req(gvrSecrets, "Secret", admissionv1.Create, sized(t, "Secret", "obj", 5000)), kubeSystemSA),
			wantMessage: "exceeds the limit"},
		{name: "service account not exempted by Group *", groupWildcard: true, review: as(req(gvrShoots, "Shoot", admissionv1.Create, sized(t, "Shoot", "obj", 5000)),
			&authenticationv1.UserInfo{Username: "system:serviceaccount:garden-dev:robot", Groups: []string{"system:serviceaccounts", "system:serviceaccounts:garden-dev"}}),
			wantMessage: "exceeds the limit"},
		{name: "user exempted by Group *", groupWildcard: true, review: as(req(gvrShoots, "Shoot", admissionv1.Create, sized(t, "Shoot", "obj", 5000)), &authenticationv1.UserInfo{Username: "carol"}), wantAllowed: true},
		{name: "service account not exempted by its group", review: as(req(gvrShoots, "Shoot", admissionv1.Create, sized(t, "Shoot", "obj", 5000)),
			&authenticationv1.UserInfo{Username: "system:serviceaccount:garden-dev:robot", Groups: []string{"garden:operators"}}),
			wantMessage: "exceeds the limit"},

		// The version the client asked for decides, as in Gardener.
		{name: "requested version has a limit, converted one not", review: func() vReview {
			r := req(metaGVR("", "v2", "secrets"), "Secret", admissionv1.Create, sized(t, "Secret", "obj", 101))
			r.requestResource = &gvrSecrets
			return r
		}(), wantMessage: "exceeds the limit of 100"},
		{name: "converted version has a limit, requested one not", review: func() vReview {
			r := req(gvrSecrets, "Secret", admissionv1.Create, sized(t, "Secret", "obj", 101))
			v2 := metaGVR("", "v2", "secrets")
			r.requestResource = &v2
			return r
		}(), wantAllowed: true},

		// A Gardener entry with only a count (or only a size) ends the search.
		{name: "entry without size hides later size limits", review: clusterReq(gvrProfiles, "CloudProfile", admissionv1.Update, sized(t, "CloudProfile", "obj", 5000)), wantAllowed: true},
		{name: "entries without size or count hide later limits", review: clusterReq(gvrProfiles, "CloudProfile", admissionv1.Create, sized(t, "CloudProfile", "obj", 5000)), wantAllowed: true},
		{name: "service account of another namespace is limited", review: as(req(gvrShoots, "Shoot", admissionv1.Create, sized(t, "Shoot", "obj", 5000)), otherSA),
			wantMessage: "exceeds the limit"},
		{name: "unrestricted subjects skip counts too", review: as(clusterReq(gvrSeeds, "Seed", admissionv1.Create, sized(t, "Seed", "obj", 100)), admin), wantAllowed: true},

		// Counts
		{name: "seed count reached", review: clusterReq(gvrSeeds, "Seed", admissionv1.Create, sized(t, "Seed", "obj", 100)),
			wantMessage: `seedwarden: 2 seeds.core.gardener.cloud exist, the limit is 2; seeds.core.gardener.cloud/v1beta1 "obj" cannot be created`,
			wantMetrics: map[string]float64{"CREATE/Seed//count": 1}},
		{name: "seed count on update does not apply", review: clusterReq(gvrSeeds, "Seed", admissionv1.Update, sized(t, "Seed", "obj", 100)), wantAllowed: true},
		{name: "project count reached", review: clusterReq(gvrProjects, "Project", admissionv1.Create, sized(t, "Project", "obj", 100)),
			wantMessage: `1 projects.core.gardener.cloud exist, the limit is 1`},
		{name: "no count limit", review: clusterReq(gvrProfiles, "CloudProfile", admissionv1.Create, sized(t, "CloudProfile", "obj", 100)), wantAllowed: true},
		{name: "no limit for a resource the rules do not name", review: clusterReq(metaGVR("core.gardener.cloud", "v1beta1", "exposureclasses"), "ExposureClass", admissionv1.Create, sized(t, "ExposureClass", "obj", 100000)), wantAllowed: true},
		{name: "size and count at once", review: clusterReq(gvrSeeds, "Seed", admissionv1.Create, sized(t, "Seed", "obj", 4000)),
			wantMessage: `seedwarden: resource size 4000 bytes exceeds the limit of 1Ki (1024 bytes) for seeds.core.gardener.cloud/v1beta1 "obj"; 2 seeds.core.gardener.cloud exist`,
			wantMetrics: map[string]float64{"CREATE/Seed//count": 1, "CREATE/Seed//size": 1}},
		{name: "count in log mode", mode: "log", review: clusterReq(gvrSeeds, "Seed", admissionv1.Create, sized(t, "Seed", "obj", 100)),
			wantAllowed: true, wantWarning: "2 seeds.core.gardener.cloud exist", wantMetrics: map[string]float64{"CREATE/Seed//count": 1}},

		// Not checked
		{name: "delete", review: req(gvrShoots, "Shoot", admissionv1.Delete, ""), wantAllowed: true},
		{name: "subresource", review: func() vReview {
			r := req(gvrShoots, "Shoot", admissionv1.Update, sized(t, "Shoot", "obj", 5000))
			r.subResource = "status"
			return r
		}(), wantAllowed: true},
		{name: "malformed object without a limit is not read", review: req(gvrPods, "Pod", admissionv1.Create, `[1,2]`), wantAllowed: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mode := tc.mode
			if mode == "" {
				mode = OperationModeBlock
			}
			reg := prometheus.NewRegistry()
			v := newSizeValidator(vLog(t), mode, reg)
			if tc.groupWildcard {
				v.UnrestrictedSubjects = append(v.UnrestrictedSubjects, Subject{Kind: SubjectGroup, Name: "*"})
			}
			resp := vServe(t, v, tc.review.body(t))
			assert.Equal(t, tc.wantAllowed, resp.Allowed, vMessage(resp))
			if tc.wantMessage != "" {
				assert.Contains(t, vMessage(resp), tc.wantMessage)
			}
			if !resp.Allowed {
				assert.Equal(t, int32(http.StatusForbidden), resp.Result.Code)
			}
			if tc.wantWarning != "" {
				require.Len(t, resp.Warnings, 1)
				assert.Contains(t, resp.Warnings[0], tc.wantWarning)
				assertValidWarning(t, resp.Warnings[0])
			} else {
				assert.Empty(t, resp.Warnings)
			}
			got := map[string]float64{}
			families, err := reg.Gather()
			require.NoError(t, err)
			for _, f := range families {
				if f.GetName() != metrics.RejectedResourcesTotalName {
					continue
				}
				for _, m := range f.GetMetric() {
					l := map[string]string{}
					for _, p := range m.GetLabel() {
						l[p.GetName()] = p.GetValue()
					}
					got[l["operation"]+"/"+l["kind"]+"/"+l[metrics.RejectedNamespaceLabel]+"/"+l["reason"]] = m.GetCounter().GetValue()
				}
			}
			switch {
			case tc.wantMetrics != nil:
				assert.Equal(t, tc.wantMetrics, got)
			case resp.Allowed && len(resp.Warnings) == 0:
				assert.Empty(t, got, "nothing rejected")
			default:
				assert.NotEmpty(t, got, "every rejection is counted")
			}
		})
	}
}

func TestResourceSizeValidatorMalformed(t *testing.T) {
	v := newSizeValidator(vLog(t), OperationModeBlock, nil)
	for _, object := range []string{"", "null", `"text"`, `[1]`} {
		r := vReview{kind: gvkFor(gvrShoots, "Shoot"), resource: gvrShoots, object: object}
		resp := vServe(t, v, r.body(t))
		assert.False(t, resp.Allowed, object)
		assert.Equal(t, int32(http.StatusBadRequest), resp.Result.Code, object)
		assert.Contains(t, vMessage(resp), "seedwarden: cannot measure the object", object)
	}

	// Without a counter, count limits admit (and say so in the log).
	v.Counter = nil
	resp := vServe(t, v, vReview{kind: gvkFor(gvrSeeds, "Seed"), resource: gvrSeeds, object: `{}`}.body(t))
	assert.True(t, resp.Allowed, vMessage(resp))
}

func TestResourceRuleMatches(t *testing.T) {
	r := ResourceRule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"secrets"}}
	assert.True(t, r.Matches(gvrSecrets))
	assert.False(t, r.Matches(metaGVR("x", "v1", "secrets")))
	assert.False(t, r.Matches(metaGVR("", "v1", "configmaps")))
	assert.True(t, ResourceRule{APIGroups: []string{"*"}, APIVersions: []string{"*"}, Resources: []string{"*"}}.Matches(gvrWidgets))
	assert.False(t, ResourceRule{}.Matches(gvrWidgets))
}

func TestGlobMatch(t *testing.T) {
	for _, tc := range []struct {
		pattern, s string
		want       bool
	}{
		{"", "", true},
		{"", "a", false},
		{"a", "a", true},
		{"a", "ab", false},
		{"*", "", true},
		{"*", "anything:at:all", true},
		{"system:serviceaccount:garden:*", "system:serviceaccount:garden:x", true},
		{"system:serviceaccount:garden:*", "system:serviceaccount:garden-dev:x", false},
		{"a*b*c", "abc", true},
		{"a*b*c", "axxbyyc", true},
		{"a*b*c", "acb", false},
		{"a*a", "a", false},
		{"a*a", "aa", true},
		{"*x*", "yyxyy", true},
		{"[a]", "a", false},
		{"?", "a", false},
	} {
		assert.Equal(t, tc.want, globMatch(tc.pattern, tc.s), "%q ~ %q", tc.pattern, tc.s)
	}
}

func TestSubjectsMatch(t *testing.T) {
	subs := Subjects{
		{Kind: SubjectUser, Name: "alice"},
		{Kind: SubjectGroup, Name: "ops-*"},
		{Kind: SubjectServiceAccount, Namespace: "garden*", Name: "robot"},
	}
	for _, tc := range []struct {
		user authenticationv1.UserInfo
		want bool
	}{
		{authenticationv1.UserInfo{Username: "alice"}, true},
		{authenticationv1.UserInfo{Username: "alice2"}, false},
		{authenticationv1.UserInfo{Username: "bob", Groups: []string{"ops-eu"}}, true},
		{authenticationv1.UserInfo{Username: "bob", Groups: []string{"dev"}}, false},
		{authenticationv1.UserInfo{Username: "system:serviceaccount:garden-dev:robot"}, true},
		{authenticationv1.UserInfo{Username: "system:serviceaccount:kube-system:robot"}, false},
		{authenticationv1.UserInfo{Username: "system:serviceaccount:garden:robot2"}, false},
		{authenticationv1.UserInfo{Username: "system:serviceaccount:garden"}, false},
		{authenticationv1.UserInfo{Username: "robot"}, false},
		{authenticationv1.UserInfo{}, false},
	} {
		assert.Equal(t, tc.want, subs.Match(tc.user), "%+v", tc.user)
	}
	assert.False(t, Subjects(nil).Match(authenticationv1.UserInfo{Username: "alice"}))
	assert.False(t, Subjects{{Kind: "Robot", Name: "*"}}.Match(authenticationv1.UserInfo{Username: "alice"}))
}

func TestSubjectsMatchAsGardener(t *testing.T) {
	sa := func(ns, name string) authenticationv1.UserInfo {
		return authenticationv1.UserInfo{Username: "system:serviceaccount:" + ns + ":" + name, Groups: []string{"system:serviceaccounts", "system:authenticated"}}
	}
	user := func(name string, groups ...string) authenticationv1.UserInfo {
		return authenticationv1.UserInfo{Username: name, Groups: groups}
	}
	for _, tc := range []struct {
		name string
		subs Subjects
		user authenticationv1.UserInfo
		want bool
	}{
		{"user by name", Subjects{{Kind: SubjectUser, Name: "alice"}}, user("alice"), true},
		{"user * matches users", Subjects{{Kind: SubjectUser, Name: "*"}}, user("bob"), true},
		{"user * does not match service accounts", Subjects{{Kind: SubjectUser, Name: "*"}}, sa("garden", "robot"), false},
		{"user name of a service account does not match it", Subjects{{Kind: SubjectUser, Name: "system:serviceaccount:garden:robot"}}, sa("garden", "robot"), false},
		{"group", Subjects{{Kind: SubjectGroup, Name: "ops"}}, user("bob", "ops"), true},
		{"group * matches a user without groups", Subjects{{Kind: SubjectGroup, Name: "*"}}, user("bob"), true},
		{"group * does not match service accounts", Subjects{{Kind: SubjectGroup, Name: "*"}}, sa("garden", "robot"), false},
		{"service account group does not match", Subjects{{Kind: SubjectGroup, Name: "system:serviceaccounts"}}, sa("garden", "robot"), false},
		{"service account", Subjects{{Kind: SubjectServiceAccount, Namespace: "garden", Name: "robot"}}, sa("garden", "robot"), true},
		{"service account * in its namespace", Subjects{{Kind: SubjectServiceAccount, Namespace: "garden", Name: "*"}}, sa("garden", "x"), true},
		{"service account of another namespace", Subjects{{Kind: SubjectServiceAccount, Namespace: "garden", Name: "*"}}, sa("garden-dev", "x"), false},
		{"service account subject does not match a user", Subjects{{Kind: SubjectServiceAccount, Namespace: "*", Name: "*"}}, user("bob"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.subs.MatchAsGardener(tc.user))
		})
	}
}

// FuzzResourceSize: arbitrary object bytes through objsize.Measure and the
// handler (CREATE, and UPDATE with an arbitrary old object; a managedFields
// limit on shoots and seeds). Measure never panics and never reports more than the bytes it got
// (or less than "{}"); the handler always answers with a reason.
func FuzzResourceSize(f *testing.F) {
	f.Add([]byte(`{"metadata":{"name":"a","managedFields":[{"x":1}]},"status":{"a":"b"},"spec":{}}`))
	f.Add([]byte(`{"status":null,"metadata":{"managedFields":null}}`))
	f.Add([]byte(`{"a":"\u00e4","status":{},"status":{"dup":true}}`))
	f.Add([]byte(`[{"status":1}]`))
	f.Add([]byte(`{`))
	f.Add([]byte(``))

	v := newSizeValidator(logr.Discard(), OperationModeBlock, nil)
	v.Limits[1].ManagedFieldsSize, v.Limits[1].ManagedFieldsBytes = "64", 64 // shoots and seeds
	wh := (&webhook.Admission{Handler: v}).WithRecoverPanic(false)
	f.Fuzz(func(t *testing.T, raw []byte) {
		if n, err := objsize.Measure(raw); err == nil && (n > int64(len(raw)) || n < 2) {
			t.Fatalf("Measure(%q) = %d, outside 2..%d", raw, n, len(raw))
		}
		for _, gvr := range []metav1.GroupVersionResource{gvrShoots, gvrSeeds, gvrPods} {
			for _, op := range []admissionv1.Operation{admissionv1.Create, admissionv1.Update} {
				req := webhook.AdmissionRequest{AdmissionRequest: admissionv1.AdmissionRequest{
					UID: testUID, Kind: gvkFor(gvr, "X"), Resource: gvr, Operation: op,
				}}
				req.Object.Raw = raw
				if op == admissionv1.Update {
					req.OldObject.Raw = raw[:len(raw)/2] // mostly not JSON: measured as no managedFields
				}
				resp := wh.Handle(t.Context(), req)
				if !resp.Allowed && (resp.Result == nil || resp.Result.Message == "" || resp.Result.Code < 400) {
					t.Fatalf("rejection without code and message: %+v", resp.Result)
				}
			}
		}
	})
}

// withinSize lets objects no longer than the limit through without
// measuring them: objsize.Measure never counts more than the bytes it gets.
// What is not an object is left to Measure (which refuses it).
func TestWithinSize(t *testing.T) {
	for _, tc := range []struct {
		raw   string
		limit int64
		want  bool
	}{
		{`{"a":1}`, 7, true},
		{`{"a":1}`, 6, false},
		{` {"a":1} `, 9, true},
		{`{}`, 2, true},
		{``, 10, false},
		{`null`, 10, false},
		{`"text"`, 10, false},
		{`[1]`, 10, false},
		{`{`, 10, false},
		{`1}`, 10, false},
	} {
		assert.Equal(t, tc.want, withinSize(admissionjson.RawObject([]byte(tc.raw)), tc.limit), "%q within %d", tc.raw, tc.limit)
		if tc.want {
			n, err := objsize.Measure([]byte(tc.raw))
			require.NoError(t, err)
			assert.LessOrEqual(t, n, tc.limit, "Measure agrees")
		}
	}
}
