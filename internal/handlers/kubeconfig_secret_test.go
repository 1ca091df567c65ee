package handlers

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/testr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// ksKubeconfig is a realistic kubeconfig (as gardenctl or a Seed's backup
// secret would hold one) whose single user's auth lines are authLines,
// indented for the `user:` block, and whose cluster has clusterLines.
func ksKubeconfig(clusterLines, authLines string) string {
	return `apiVersion: v1
kind: Config
current-context: garden-dev
clusters:
- name: garden
  cluster:
    server: https://api.garden.example.com
    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUM=
` + clusterLines + `contexts:
- name: garden-dev
  context:
    cluster: garden
    user: admin
    namespace: garden-dev
users:
- name: admin
  user:
` + authLines
}

// ksSecretJSON is a Secret as the API server sends it; data is base64 per
// key as in JSON. extra is spliced into the object's top level.
func ksSecretJSON(data map[string]string, extra string) string {
	enc := map[string]string{}
	for k, v := range data {
		enc[k] = base64.StdEncoding.EncodeToString([]byte(v))
	}
	d, _ := json.Marshal(enc)
	return `{
  "apiVersion": "v1",
  "kind": "Secret",
  "metadata": {
    "name": "seed-backup",
    "namespace": "garden",
    "uid": "0d3c5b7e-2b7e-4c6b-9c1f-1a2b3c4d5e6f",
    "resourceVersion": "4711",
    "creationTimestamp": "2026-01-02T03:04:05Z",
    "labels": {"gardener.cloud/role": "seed"},
    "managedFields": [{"manager": "kubectl", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {}}}]
  },` + extra + `
  "type": "Opaque",
  "data": ` + string(d) + `
}`
}

type ksReview struct {
	kind, resource, subResource string // group/version/kind; defaults: core v1 Secret, secrets
	operation                   string // default CREATE
	object, oldObject           string // raw JSON; default null
}

func (r ksReview) body() string {
	if r.kind == "" {
		r.kind = "/v1/Secret"
	}
	if r.resource == "" {
		r.resource = "/v1/secrets"
	}
	if r.operation == "" {
		r.operation = "CREATE"
	}
	if r.object == "" {
		r.object = "null"
	}
	if r.oldObject == "" {
		r.oldObject = "null"
	}
	split := func(s string) (string, string, string) {
		p := strings.SplitN(s, "/", 3)
		for len(p) < 3 {
			p = append(p, "")
		}
		return p[0], p[1], p[2]
	}
	kg, kv, kk := split(r.kind)
	rg, rv, rr := split(r.resource)
	return fmt.Sprintf(`{
  "kind": "AdmissionReview",
  "apiVersion": "admission.k8s.io/v1",
  "request": {
    "uid": %q,
    "kind": {"group": %q, "version": %q, "kind": %q},
    "resource": {"group": %q, "version": %q, "resource": %q},
    "subResource": %q,
    "requestKind": {"group": %[2]q, "version": %[3]q, "kind": %[4]q},
    "requestResource": {"group": %[5]q, "version": %[6]q, "resource": %[7]q},
    "name": "seed-backup",
    "namespace": "garden",
    "operation": %[9]q,
    "userInfo": {"username": "jane.doe@example.com", "groups": ["system:authenticated"]},
    "object": %[10]s,
    "oldObject": %[11]s,
    "dryRun": false,
    "options": {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1"}
  }
}`, testUID, kg, kv, kk, rg, rv, rr, r.subResource, r.operation, r.object, r.oldObject)
}

// ksServe sends body through controller-runtime's webhook as the API server would.
func ksServe(t testing.TB, h admission.Handler, body string) *admissionv1.AdmissionResponse {
	t.Helper()
	wh := (&webhook.Admission{Handler: h}).WithRecoverPanic(false)
	req := httptest.NewRequestWithContext(context.Background(), http.MethodPost, "/validate", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	wh.ServeHTTP(rec, req)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var out admissionv1.AdmissionReview
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out), "response: %s", rec.Body.String())
	require.NotNil(t, out.Response, "response: %s", rec.Body.String())
	assert.Equal(t, testUID, string(out.Response.UID))
	return out.Response
}

func ksValidator(t testing.TB, allowed ...string) *KubeconfigSecretValidator {
	log := logr.Discard()
	if tt, ok := t.(*testing.T); ok {
		log = testr.New(tt)
	}
	return &KubeconfigSecretValidator{AllowedFields: allowed, Log: log}
}

func TestKubeconfigSecretValidator(t *testing.T) {
	const (
		certData = "    client-certificate-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t\n    client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQ==\n"
		token    = "    token: eyJhbGciOiJSUzI1NiIsImtpZCI6IiJ9.e30.c2ln\n"
		basic    = "    username: admin\n    password: s3cr3t\n"
	)
	deny := func(field string) string {
		return fmt.Sprintf(`kubeconfig: user "admin" uses field %q, which is not allowed`, field)
	}
	tests := []struct {
		name      string
		cluster   string // lines added to the cluster
		auth      string
		allowed   []string
		wantAllow bool
		wantMsg   string
	}{
		{name: "client certificate data", auth: certData, wantAllow: true},
		{name: "token", auth: token, wantAllow: true},
		{name: "username and password", auth: basic, wantAllow: true},
		{name: "all allowed fields", auth: certData + token + basic, wantAllow: true},
		{name: "no credentials at all", auth: "    {}\n", wantAllow: true},
		{name: "insecure and proxy are cluster settings, not files", cluster: "    insecure-skip-tls-verify: true\n    proxy-url: http://proxy:3128\n", auth: token, wantAllow: true},

		{name: "client certificate file", auth: "    client-certificate: /etc/ssl/admin.crt\n    client-key-data: LS0t\n", wantMsg: deny("client-certificate")},
		{name: "client key file", auth: "    client-certificate-data: LS0t\n    client-key: /etc/ssl/admin.key\n", wantMsg: deny("client-key")},
		{name: "token file", auth: "    tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token\n", wantMsg: deny("tokenFile")},
		{name: "impersonation", auth: token + "    as: system:admin\n", wantMsg: deny("as")},
		{name: "impersonation uid", auth: token + "    as-uid: \"0\"\n", wantMsg: deny("as-uid")},
		{name: "impersonation groups", auth: token + "    as-groups: [system:masters]\n", wantMsg: deny("as-groups")},
		{name: "impersonation extra", auth: token + "    as-user-extra: {scopes: [all]}\n", wantMsg: deny("as-user-extra")},
		{name: "auth provider with config", auth: "    auth-provider:\n      name: oidc\n      config:\n        idp-issuer-url: https://issuer.example.com\n        client-id: kube\n", wantMsg: deny("auth-provider")},
		{name: "auth provider without config", auth: "    auth-provider:\n      name: gcp\n", wantMsg: deny("auth-provider")},
		{name: "exec", auth: "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: /bin/sh\n      args: [-c, 'cat /etc/shadow']\n      interactiveMode: Never\n", wantMsg: deny("exec")},
		{name: "cluster CA file", cluster: "    certificate-authority: /etc/ssl/ca.crt\n", auth: token, wantMsg: `kubeconfig: cluster "garden" uses field "certificate-authority", which is not allowed`},
		{
			name:    "every violation is listed, in field order",
			auth:    "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: gke-gcloud-auth-plugin\n    tokenFile: /tmp/t\n",
			cluster: "    certificate-authority: /etc/ssl/ca.crt\n",
			wantMsg: `kubeconfig: user "admin" uses field "tokenFile", which is not allowed; user "admin" uses field "exec", which is not allowed; cluster "garden" uses field "certificate-authority", which is not allowed`,
		},

		{name: "allow-list permits exec", auth: "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: kubelogin\n", allowed: []string{"exec"}, wantAllow: true},
		{name: "allow-list permits the CA file", cluster: "    certificate-authority: /etc/ssl/ca.crt\n", auth: token, allowed: []string{"certificate-authority"}, wantAllow: true},
		{name: "allow-list is per field", auth: token + "    as: system:admin\n    as-groups: [system:masters]\n", allowed: []string{"as"}, wantMsg: deny("as-groups")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kc := ksKubeconfig(tt.cluster, tt.auth)
			_, err := clientcmd.Load([]byte(kc)) // the fixture itself must parse
			require.NoError(t, err, kc)
			for _, op := range []string{"CREATE", "UPDATE"} {
				r := ksReview{operation: op, object: ksSecretJSON(map[string]string{"kubeconfig": kc, "other": "x"}, "")}
				if op == "UPDATE" {
					r.oldObject = ksSecretJSON(map[string]string{"kubeconfig": ksKubeconfig("", token)}, "")
				}
				resp := ksServe(t, ksValidator(t, tt.allowed...), r.body())
				assert.Equal(t, tt.wantAllow, resp.Allowed, "%s: %+v", op, resp.Result)
				if !tt.wantAllow {
					require.NotNil(t, resp.Result)
					assert.Equal(t, tt.wantMsg, resp.Result.Message, op)
					assert.Equal(t, int32(http.StatusForbidden), resp.Result.Code, op)
				}
			}
		})
	}
}

func TestKubeconfigSecretValidatorChecksEveryUser(t *testing.T) {
	kc := `apiVersion: v1
kind: Config
current-context: good
clusters:
- name: c
  cluster: {server: "https://api.example.com"}
contexts:
- name: good
  context: {cluster: c, user: good}
users:
- name: good
  user: {token: abc}
- name: unused-but-stored
  user:
    exec: {apiVersion: client.authentication.k8s.io/v1, command: evil}
- name: zz-second
  user: {tokenFile: /t}
`
	resp := ksServe(t, ksValidator(t), ksReview{object: ksSecretJSON(map[string]string{"kubeconfig": kc}, "")}.body())
	assert.False(t, resp.Allowed)
	assert.Equal(t, `kubeconfig: user "unused-but-stored" uses field "exec", which is not allowed; user "zz-second" uses field "tokenFile", which is not allowed`, resp.Result.Message)
}

func TestKubeconfigSecretValidatorUnparsable(t *testing.T) {
	for name, kc := range map[string]string{
		"not yaml":          "users: [\n",
		"wrong kind of doc": "- just\n- a list\n",
		"duplicate users":   "apiVersion: v1\nkind: Config\nusers:\n- name: a\n  user: {token: x}\n- name: a\n  user: {token: y}\n",
		"wrong field type":  "apiVersion: v1\nkind: Config\nusers:\n- name: a\n  user: {as-groups: notalist}\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, loadErr := clientcmd.Load([]byte(kc))
			require.Error(t, loadErr)
			resp := ksServe(t, ksValidator(t), ksReview{object: ksSecretJSON(map[string]string{"kubeconfig": kc}, "")}.body())
			assert.False(t, resp.Allowed)
			assert.Equal(t, "kubeconfig: cannot be parsed: "+loadErr.Error(), resp.Result.Message)
		})
	}
}

func TestKubeconfigSecretValidatorAllows(t *testing.T) {
	tests := map[string]ksReview{
		"no kubeconfig key":      {object: ksSecretJSON(map[string]string{"token": "abc", "ca.crt": "---"}, "")},
		"no data at all":         {object: `{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "x", "namespace": "garden"}, "type": "Opaque"}`},
		"empty kubeconfig":       {object: ksSecretJSON(map[string]string{"kubeconfig": ""}, "")},
		"delete is not checked":  {operation: "DELETE", oldObject: ksSecretJSON(map[string]string{"kubeconfig": "exec: ["}, "")},
		"connect is not checked": {operation: "CONNECT"},
	}
	for name, r := range tests {
		t.Run(name, func(t *testing.T) {
			resp := ksServe(t, ksValidator(t), r.body())
			assert.True(t, resp.Allowed, "%+v", resp.Result)
		})
	}
}

// stringData would be folded into data by the API server; if a request
// still carries it, it is checked as well.
func TestKubeconfigSecretValidatorStringData(t *testing.T) {
	bad := ksKubeconfig("", "    tokenFile: /t\n")
	extra := fmt.Sprintf("\n  \"stringData\": {\"kubeconfig\": %q},", bad)
	resp := ksServe(t, ksValidator(t), ksReview{object: ksSecretJSON(map[string]string{"kubeconfig": ksKubeconfig("", "    token: x\n")}, extra)}.body())
	assert.False(t, resp.Allowed)
	assert.Contains(t, resp.Result.Message, `"tokenFile"`)
}

func TestKubeconfigSecretValidatorErrors(t *testing.T) {
	secret := ksSecretJSON(map[string]string{"kubeconfig": ksKubeconfig("", "    token: x\n")}, "")
	tests := map[string]struct {
		review  ksReview
		wantMsg string
	}{
		"wrong kind":            {ksReview{kind: "/v1/ConfigMap", resource: "/v1/configmaps", object: secret}, `expected kind v1 Secret, got "/v1, Kind=ConfigMap"`},
		"wrong group":           {ksReview{kind: "core.gardener.cloud/v1beta1/Secret", object: secret}, "expected kind v1 Secret"},
		"wrong resource":        {ksReview{resource: "/v1/configmaps", object: secret}, `expected resource secrets in the core group without subresource, got "configmaps"`},
		"subresource":           {ksReview{subResource: "status", object: secret}, `got "secrets/status"`},
		"no object":             {ksReview{}, "admission request carries no object"},
		"object of other kind":  {ksReview{object: `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}`}, `object has kind "ConfigMap"`},
		"object of other group": {ksReview{object: `{"apiVersion": "apps/v1", "kind": "Secret", "metadata": {"name": "x"}}`}, `object has apiVersion "apps/v1"`},
		"data not base64":       {ksReview{object: `{"apiVersion": "v1", "kind": "Secret", "data": {"kubeconfig": "***"}}`}, "cannot decode object as a Secret"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			resp := ksServe(t, ksValidator(t), tt.review.body())
			assert.False(t, resp.Allowed)
			require.NotNil(t, resp.Result)
			assert.Equal(t, int32(http.StatusBadRequest), resp.Result.Code)
			assert.Contains(t, resp.Result.Message, tt.wantMsg)
		})
	}
}

func TestValidateKubeconfigAllowedFields(t *testing.T) {
	assert.NoError(t, ValidateKubeconfigAllowedFields(nil))
	assert.NoError(t, ValidateKubeconfigAllowedFields(KubeconfigRestrictedFields))
	assert.NoError(t, ValidateKubeconfigAllowedFields([]string{"token", "exec"}))
	err := ValidateKubeconfigAllowedFields([]string{"exec", "token-file", "Exec"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unknown kubeconfig field(s) "token-file", "Exec"`)
}

func TestKubeconfigViolationsNil(t *testing.T) {
	assert.Empty(t, KubeconfigViolations(nil, nil))
}

// Many violations are cut to a bounded message.
func TestKubeconfigSecretValidatorManyViolations(t *testing.T) {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Config\nusers:\n")
	for i := range 25 {
		fmt.Fprintf(&b, "- name: u%02d\n  user: {tokenFile: /t}\n", i)
	}
	resp := ksServe(t, ksValidator(t), ksReview{object: ksSecretJSON(map[string]string{"kubeconfig": b.String()}, "")}.body())
	assert.False(t, resp.Allowed)
	assert.Equal(t, 10, strings.Count(resp.Result.Message, "which is not allowed"))
	assert.True(t, strings.HasSuffix(resp.Result.Message, "; and 15 more"), resp.Result.Message)
}

// FuzzKubeconfigSecret: any kubeconfig bytes give a well-formed answer, and
// an allowed one never loads with a restricted field.
func FuzzKubeconfigSecret(f *testing.F) {
	f.Add([]byte(ksKubeconfig("", "    token: abc\n")))
	f.Add([]byte(ksKubeconfig("    certificate-authority: /ca\n", "    exec:\n      command: x\n      apiVersion: client.authentication.k8s.io/v1\n")))
	f.Add([]byte(ksKubeconfig("", "    auth-provider: {name: gcp}\n    as-groups: [a]\n")))
	f.Add([]byte(`{"apiVersion":"v1","kind":"Config","users":[{"name":"a","user":{"tokenFile":"/t"}}]}`))
	f.Add([]byte("users:\n- name: a\n  user: null\n"))
	f.Add([]byte("clusters:\n- name: c\n  cluster: null\n"))
	f.Add([]byte{})
	f.Add([]byte("\x00\xff"))
	v := ksValidator(f)
	f.Fuzz(func(t *testing.T, kc []byte) {
		object := `{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "x", "namespace": "garden"}, "data": {"kubeconfig": "` +
			base64.StdEncoding.EncodeToString(kc) + `"}}`
		resp := ksServe(t, v, ksReview{object: object}.body())
		cfg, err := clientcmd.Load(kc)
		switch {
		case err != nil:
			require.False(t, resp.Allowed, "unparsable kubeconfig allowed")
			require.Equal(t, "kubeconfig: cannot be parsed: "+err.Error(), resp.Result.Message)
		case len(KubeconfigViolations(cfg, nil)) > 0:
			require.False(t, resp.Allowed, "restricted field allowed")
			require.True(t, strings.HasPrefix(resp.Result.Message, "kubeconfig: "), resp.Result.Message)
		default:
			require.True(t, resp.Allowed, "%+v", resp.Result)
			for _, ai := range cfg.AuthInfos {
				if ai == nil {
					continue
				}
				require.Empty(t, ai.ClientCertificate)
				require.Empty(t, ai.ClientKey)
				require.Empty(t, ai.TokenFile)
				require.Empty(t, ai.Impersonate)
				require.Empty(t, ai.ImpersonateUID)
				require.Empty(t, ai.ImpersonateGroups)
				require.Empty(t, ai.ImpersonateUserExtra)
				require.Nil(t, ai.AuthProvider)
				require.Nil(t, ai.Exec)
			}
			for _, c := range cfg.Clusters {
				if c != nil {
					require.Empty(t, c.CertificateAuthority)
				}
			}
		}
	})
}
