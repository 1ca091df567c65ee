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
// count rule (the size rule with its managedFields limit), the half it does not set marked None (so the first matching
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
    managedFieldsSize: 64Ki
  unrestrictedSubjects:
  - {kind: Group, name: "*", apiGroup: rbac.authorization.k8s.io}
  - {kind: ServiceAccount, name: gardenlet, namespace: garden}
`))
	require.NoError(t, err)
	enforce := handlers.NewEnforcer(handlers.WebhookResourceSize, cfg.ResourceAdmission.Enforcement(), nil, nil, logr.Discard())
	v := newResourceAdmissionValidator(cfg.ResourceAdmission, cache.NewStore(cache.Options{}), nil, enforce, logr.Discard())

	shoots := handlers.ResourceRule{APIGroups: []string{"core.gardener.cloud"}, APIVersions: []string{"*"}, Resources: []string{"shoots"}}
	projects := handlers.ResourceRule{APIGroups: []string{"core.gardener.cloud"}, APIVersions: []string{"v1beta1"}, Resources: []string{"projects"}}
	assert.Equal(t, handlers.EnforceWarn, v.Enforce.Action(), "operationMode log is enforcement warn")
	assert.Equal(t, []handlers.SizeLimit{
		// managedFields: twice the size by default, or as configured.
		{ResourceRule: shoots, Size: "100k", Bytes: 100000, ManagedFieldsSize: "200000", ManagedFieldsBytes: 200000},
		{ResourceRule: projects, Size: "1024", Bytes: 1024, ManagedFieldsSize: "64Ki", ManagedFieldsBytes: 64 << 10},
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

// resourceSize limits get their managedFields limit the same way: as
// configured, else twice the size with a floor of 16Ki.
func TestNewResourceSizeValidatorManagedFields(t *testing.T) {
	cfg, err := config.Parse([]byte(configHeader + `
resourceSize:
  limits:
  - {apiGroups: [core.gardener.cloud], apiVersions: ["*"], resources: [shoots], size: 8Ki}
  - {apiGroups: [""], apiVersions: [v1], resources: [configmaps], size: 1Mi, managedFieldsSize: 64Ki, enforcement: warn}
  counts:
  - {apiGroups: [core.gardener.cloud], apiVersions: ["*"], resources: [projects], count: 5, enforcement: dryrun}
`))
	require.NoError(t, err)
	v := newResourceSizeValidator(cfg.ResourceSize, cache.NewStore(cache.Options{}), nil, nil, logr.Discard())
	require.Len(t, v.Limits, 2)
	// A limit's own enforcement is carried over; "" leaves it to the guard's.
	assert.Equal(t, []string{"", handlers.EnforceWarn}, []string{v.Limits[0].Enforcement, v.Limits[1].Enforcement})
	require.Len(t, v.Counts, 1)
	assert.Equal(t, handlers.EnforceDryRun, v.Counts[0].Enforcement)
	assert.Equal(t, []string{"16Ki", "64Ki"}, []string{v.Limits[0].ManagedFieldsSize, v.Limits[1].ManagedFieldsSize})
	assert.Equal(t, []int64{16 << 10, 64 << 10}, []int64{v.Limits[0].ManagedFieldsBytes, v.Limits[1].ManagedFieldsBytes})
}
