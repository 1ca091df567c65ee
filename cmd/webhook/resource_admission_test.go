package main

import (
	"testing"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/config"
	"github.com/seedwarden/seedwarden/internal/handlers"
)

// A resourceAdmission section pasted from gardener-admission-controller's
// configuration becomes the resource-size webhook: each entry a size and a
// count rule, the half it does not set marked None (so the first matching
// entry decides both), the RBAC subjects as seedwarden subjects.
func TestNewResourceAdmissionValidator(t *testing.T) {
	cfg, err := config.Parse([]byte(configHeader + `
resourceAdmission:
  operationMode: log
  limits:
  - apiGroups: ["core.gardener.cloud"]
    apiVersions: ["*"]
    resources: ["shoots"]
    size: 100k
  - apiGroups: ["core.gardener.cloud"]
    apiVersions: ["v1beta1"]
    resources: ["projects"]
    count: 500
    size: 1024
  unrestrictedSubjects:
  - {kind: Group, name: "*", apiGroup: rbac.authorization.k8s.io}
  - {kind: ServiceAccount, name: gardenlet, namespace: garden}
`))
	require.NoError(t, err)
	v := newResourceAdmissionValidator(cfg.ResourceAdmission, cache.NewStore(cache.Options{}), nil, logr.Discard())

	shoots := handlers.ResourceRule{APIGroups: []string{"core.gardener.cloud"}, APIVersions: []string{"*"}, Resources: []string{"shoots"}}
	projects := handlers.ResourceRule{APIGroups: []string{"core.gardener.cloud"}, APIVersions: []string{"v1beta1"}, Resources: []string{"projects"}}
	assert.Equal(t, "log", v.Mode)
	assert.Equal(t, []handlers.SizeLimit{
		{ResourceRule: shoots, Size: "100k", Bytes: 100000},
		{ResourceRule: projects, Size: "1024", Bytes: 1024},
	}, v.Limits)
	assert.Equal(t, []handlers.CountLimit{
		{ResourceRule: shoots, None: true},
		{ResourceRule: projects, Count: 500},
	}, v.Counts)
	assert.Equal(t, handlers.Subjects{
		{Kind: handlers.SubjectGroup, Name: "*"},
		{Kind: handlers.SubjectServiceAccount, Namespace: "garden", Name: "gardenlet"},
	}, v.UnrestrictedSubjects)
}
