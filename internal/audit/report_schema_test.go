package audit

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"

	"github.com/seedwarden/seedwarden/internal/placement"
)

// CRDPath is the upstream OpenReports Report CRD (see its header).
const CRDPath = "testdata/openreports.io_reports.yaml"

// The reports the audit writes are what the upstream CRD (the one Kyverno
// installs for OpenReports) accepts: valid by its schema, and nothing
// pruned, so a reader sees every field written. TestEnvtestReports
// creates them on a real kube-apiserver too.
func TestReportsMatchTheOpenReportsCRD(t *testing.T) {
	data, err := os.ReadFile(CRDPath)
	require.NoError(t, err)
	crd := &apiextensionsv1.CustomResourceDefinition{}
	require.NoError(t, yaml.UnmarshalStrict(data, crd))
	require.Equal(t, ReportGVK.Group, crd.Spec.Group)
	require.Equal(t, ReportGVK.Kind, crd.Spec.Names.Kind)
	require.Len(t, crd.Spec.Versions, 1)
	require.Equal(t, ReportGVK.Version, crd.Spec.Versions[0].Name)
	internal := &apiextensions.JSONSchemaProps{}
	require.NoError(t, apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(crd.Spec.Versions[0].Schema.OpenAPIV3Schema, internal, nil))
	ss, err := structuralschema.NewStructural(internal)
	require.NoError(t, err)
	sv, _, err := validation.NewSchemaValidator(internal)
	require.NoError(t, err)

	results := []Result{
		{Namespace: "garden-a", Shoot: "a", Seed: "s", Rule: placement.TaintNotTolerated, Message: "m1"},
		{Namespace: "garden-a", Shoot: "b", Seed: "s", Rule: placement.SeedDeleting, Message: "m2"},
		{Namespace: "garden-a", Shoot: "c", Seed: "s", Rule: placement.SeedFull, Message: "m3"},
	}
	for name, r := range map[string]*Report{
		"capped": NewReport("garden-a", results, 2, nil, time.Unix(1700000000, 0)),
		"all":    NewReport("garden-a", results, 100, nil, time.Unix(1700000000, 0)),
	} {
		t.Run(name, func(t *testing.T) {
			raw, err := json.Marshal(r)
			require.NoError(t, err)
			var obj map[string]any
			require.NoError(t, utiljson.Unmarshal(raw, &obj))
			assert.Empty(t, validation.ValidateCustomResource(nil, obj, sv))
			before := deepCopyJSON(t, obj)
			unknown := pruning.PruneWithOptions(obj, ss, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
			assert.Empty(t, unknown, "fields the API server would drop")
			assert.True(t, reflect.DeepEqual(before, obj), "changed by pruning")
		})
	}
}

func deepCopyJSON(t *testing.T, obj map[string]any) map[string]any {
	t.Helper()
	raw, err := json.Marshal(obj)
	require.NoError(t, err)
	var out map[string]any
	require.NoError(t, utiljson.Unmarshal(raw, &out))
	return out
}

func TestNewReport(t *testing.T) {
	results := []Result{
		{Namespace: "garden-a", Shoot: "a", Seed: "s", Rule: placement.TaintNotTolerated, Message: "m1"},
		{Namespace: "garden-a", Shoot: "b", Seed: "s", Rule: placement.TaintNotTolerated, Message: "m2"},
		{Namespace: "garden-a", Shoot: "c", Seed: "s", Rule: placement.TaintNotTolerated, Message: "m3"},
	}
	first := NewReport("garden-a", results, 2, nil, time.Unix(100, 0))
	assert.Equal(t, 3, first.Summary.Fail, "the summary counts every result")
	require.Len(t, first.Results, 2, "the report lists the first resultsLimit")
	assert.Equal(t, "a", first.Results[0].Resources[0].Name)
	assert.Equal(t, "TaintNotTolerated", first.Results[0].Rule)
	assert.Equal(t, "s", first.Results[0].Properties[PropertySeed])
	assert.Equal(t, 2, first.Configuration.Limits.MaxResults)

	// The same results later: the same report (first found kept), no write.
	again := NewReport("garden-a", results, 2, first, time.Unix(200, 0))
	assert.True(t, Equal(first, again))
	assert.Equal(t, int64(100), again.Results[1].Timestamp.Seconds)

	// One cleared: a change, the remaining result keeps its time, the one
	// now listed is new.
	fewer := NewReport("garden-a", results[1:], 2, first, time.Unix(300, 0))
	assert.False(t, Equal(first, fewer))
	assert.Equal(t, int64(100), fewer.Results[0].Timestamp.Seconds)
	assert.Equal(t, int64(300), fewer.Results[1].Timestamp.Seconds)
}

func TestByNamespace(t *testing.T) {
	rs := []Result{{Namespace: "a", Shoot: "1"}, {Namespace: "a", Shoot: "2"}, {Namespace: "b", Shoot: "1"}}
	assert.Equal(t, map[string][]Result{"a": rs[:2], "b": rs[2:]}, ByNamespace(rs))
	assert.Empty(t, ByNamespace(nil))
}
