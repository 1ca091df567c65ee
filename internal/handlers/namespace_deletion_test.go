package handlers

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/go-logr/logr/testr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/cache"
)

// ndNamespaceJSON is a Namespace as the API server sends it in oldObject.
func ndNamespaceJSON(name, extraMeta string) string {
	return `{
  "apiVersion": "v1",
  "kind": "Namespace",
  "metadata": {` + extraMeta + `
    "name": "` + name + `",
    "uid": "8c1b4f4e-1111-2222-3333-444455556666",
    "resourceVersion": "123",
    "creationTimestamp": "2025-11-01T10:00:00Z",
    "labels": {"gardener.cloud/role": "project", "project.gardener.cloud/name": "dev", "kubernetes.io/metadata.name": "` + name + `"},
    "ownerReferences": [{"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Project", "name": "dev", "uid": "1", "controller": true, "blockOwnerDeletion": true}]
  },
  "spec": {"finalizers": ["kubernetes"]},
  "status": {"phase": "Active"}
}`
}

// ndReview is a namespace DELETE as the API server sends it: no object, the
// namespace in oldObject, its name in request.name (and no request.namespace
// for a cluster-scoped resource).
func ndReview(name, operation, kind, resource, oldObject string) string {
	if oldObject == "" {
		oldObject = "null"
	}
	return fmt.Sprintf(`{
  "kind": "AdmissionReview",
  "apiVersion": "admission.k8s.io/v1",
  "request": {
    "uid": %q,
    "kind": {"group": "", "version": "v1", "kind": %q},
    "resource": {"group": "", "version": "v1", "resource": %q},
    "requestKind": {"group": "", "version": "v1", "kind": %[2]q},
    "requestResource": {"group": "", "version": "v1", "resource": %[3]q},
    "name": %q,
    "operation": %q,
    "userInfo": {"username": "jane.doe@example.com", "groups": ["system:authenticated"]},
    "object": null,
    "oldObject": %s,
    "dryRun": false,
    "options": {"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1", "propagationPolicy": "Background"}
  }
}`, testUID, kind, resource, name, operation, oldObject)
}

func ndDelete(name string) string {
	return ndReview(name, "DELETE", "Namespace", "namespaces", ndNamespaceJSON(name, ""))
}

// ndStore is a real cache.Store with a project "dev" for garden-dev,
// a deleting project "old" for garden-old, and shootsPerNS Shoots in each
// namespace given.
func ndStore(shootsPerNS map[string]int) *cache.Store {
	s := cache.NewStore(cache.Options{})
	ns := func(v string) *string { return &v }
	s.Apply(&api.Project{ObjectMeta: metav1.ObjectMeta{Name: "dev", ResourceVersion: "1"}, Spec: api.ProjectSpec{Namespace: ns("garden-dev")}})
	now := metav1.Now()
	s.Apply(&api.Project{ObjectMeta: metav1.ObjectMeta{Name: "old", ResourceVersion: "1", DeletionTimestamp: &now}, Spec: api.ProjectSpec{Namespace: ns("garden-old")}})
	for n, count := range shootsPerNS {
		for i := range count {
			s.Apply(&api.Shoot{ObjectMeta: metav1.ObjectMeta{Namespace: n, Name: fmt.Sprintf("s%d", i)}, Spec: api.ShootSpec{SeedName: ns("seed-a")}})
		}
	}
	return s
}

func ndValidator(t *testing.T, s *cache.Store) *NamespaceDeletionValidator {
	return &NamespaceDeletionValidator{Shoots: s, Projects: s, Log: testr.New(t)}
}

func TestNamespaceDeletionValidator(t *testing.T) {
	store := ndStore(map[string]int{"garden-dev": 2, "garden-old": 3, "team-x": 1})
	tests := []struct {
		name      string
		body      string
		wantAllow bool
		wantMsg   string
	}{
		{
			name:    "project namespace with shoots",
			body:    ndDelete("garden-dev"),
			wantMsg: `deletion of namespace "garden-dev" is not permitted: it belongs to project "dev", which is not being deleted (delete the project instead); it still contains 2 Shoot(s)`,
		},
		{
			name:    "deleting project, shoots remain",
			body:    ndDelete("garden-old"),
			wantMsg: `deletion of namespace "garden-old" is not permitted: it still contains 3 Shoot(s)`,
		},
		{
			name:    "no project, shoots remain",
			body:    ndDelete("team-x"),
			wantMsg: `deletion of namespace "team-x" is not permitted: it still contains 1 Shoot(s)`,
		},
		{name: "unrelated namespace", body: ndDelete("kube-public"), wantAllow: true},
		{
			name:      "already terminating",
			body:      ndReview("garden-dev", "DELETE", "Namespace", "namespaces", ndNamespaceJSON("garden-dev", `"deletionTimestamp": "2026-01-01T00:00:00Z",`)),
			wantAllow: true,
		},
		{
			name:    "no oldObject: name from the request",
			body:    ndReview("garden-dev", "DELETE", "Namespace", "namespaces", ""),
			wantMsg: `deletion of namespace "garden-dev" is not permitted: it belongs to project "dev", which is not being deleted (delete the project instead); it still contains 2 Shoot(s)`,
		},
		{name: "create is not checked", body: ndReview("garden-dev", "CREATE", "Namespace", "namespaces", ""), wantAllow: true},
		{name: "update is not checked", body: ndReview("garden-dev", "UPDATE", "Namespace", "namespaces", ndNamespaceJSON("garden-dev", "")), wantAllow: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := ksServe(t, ndValidator(t, store), tt.body)
			assert.Equal(t, tt.wantAllow, resp.Allowed, "%+v", resp.Result)
			if !tt.wantAllow {
				require.NotNil(t, resp.Result)
				assert.Equal(t, int32(http.StatusForbidden), resp.Result.Code)
				assert.Equal(t, tt.wantMsg, resp.Result.Message)
			}
		})
	}
}

// The answer follows the cache as Shoots and the project go.
func TestNamespaceDeletionValidatorFollowsCache(t *testing.T) {
	store := ndStore(map[string]int{"garden-dev": 1})
	v := ndValidator(t, store)
	ns := func(s string) *string { return &s }

	resp := ksServe(t, v, ndDelete("garden-dev"))
	assert.False(t, resp.Allowed)

	// The project is being deleted: only the Shoot holds the namespace.
	now := metav1.Now()
	store.Apply(&api.Project{ObjectMeta: metav1.ObjectMeta{Name: "dev", ResourceVersion: "2", DeletionTimestamp: &now}, Spec: api.ProjectSpec{Namespace: ns("garden-dev")}})
	resp = ksServe(t, v, ndDelete("garden-dev"))
	assert.False(t, resp.Allowed)
	assert.Equal(t, `deletion of namespace "garden-dev" is not permitted: it still contains 1 Shoot(s)`, resp.Result.Message)

	// The last Shoot is gone.
	store.Remove(&api.Shoot{ObjectMeta: metav1.ObjectMeta{Namespace: "garden-dev", Name: "s0"}})
	resp = ksServe(t, v, ndDelete("garden-dev"))
	assert.True(t, resp.Allowed, "%+v", resp.Result)
}

func TestNamespaceDeletionValidatorErrors(t *testing.T) {
	store := ndStore(nil)
	tests := map[string]struct {
		v       *NamespaceDeletionValidator
		body    string
		code    int32
		wantMsg string
	}{
		"wrong kind":     {ndValidator(t, store), ndReview("x", "DELETE", "Secret", "secrets", ""), http.StatusBadRequest, "expected kind v1 Namespace"},
		"wrong resource": {ndValidator(t, store), ndReview("x", "DELETE", "Namespace", "pods", ""), http.StatusBadRequest, "expected resource namespaces"},
		"no name":        {ndValidator(t, store), ndReview("", "DELETE", "Namespace", "namespaces", ""), http.StatusBadRequest, "carries no name"},
		"no cache":       {&NamespaceDeletionValidator{Log: testr.New(t)}, ndDelete("x"), http.StatusInternalServerError, "has no cache"},
		"cache not synced": {
			&NamespaceDeletionValidator{Shoots: store, Projects: store, Synced: func() bool { return false }, Log: testr.New(t)},
			ndDelete("x"), http.StatusServiceUnavailable, "has not synced",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			resp := ksServe(t, tt.v, tt.body)
			assert.False(t, resp.Allowed)
			require.NotNil(t, resp.Result)
			assert.Equal(t, tt.code, resp.Result.Code)
			assert.Contains(t, resp.Result.Message, tt.wantMsg)
		})
	}
	synced := &NamespaceDeletionValidator{Shoots: store, Projects: store, Synced: func() bool { return true }, Log: testr.New(t)}
	assert.True(t, ksServe(t, synced, ndDelete("x")).Allowed)
}

// An oldObject that is absent or does not decode counts as not terminating.
func TestNDTerminating(t *testing.T) {
	tests := map[string]struct {
		raw         string
		terminating bool
	}{
		"terminating": {raw: `{"metadata":{"deletionTimestamp":"2024-01-01T00:00:00Z"}}`, terminating: true},
		"live":        {raw: `{"metadata":{"name":"a"}}`},
		"null":        {raw: `null`},
		"absent":      {raw: ``},
		"broken":      {raw: `{"metadata":1}`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tt.terminating, ndTerminating([]byte(tt.raw)))
		})
	}
}
