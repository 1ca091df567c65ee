package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seedwarden/seedwarden/internal/config"
)

func committedSchema(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", ChartSchema))
	require.NoError(t, err)
	return data
}

// The chart's schema is what the generator writes from today's types: a
// field added to internal/config without `make generate` fails here.
func TestSchemaUpToDate(t *testing.T) {
	committed := committedSchema(t)
	want, err := WithConfigSchema(committed)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(committed), "%s is stale: run `make generate`", ChartSchema)
}

// Every JSON field of the configuration types, at any depth, has an entry
// in the committed schema, and every object in between refuses other keys.
func TestEveryConfigFieldInSchema(t *testing.T) {
	var values map[string]any
	require.NoError(t, json.Unmarshal(committedSchema(t), &values))
	cfg := values["properties"].(map[string]any)["config"].(map[string]any)
	checked := 0
	var walk func(t reflect.Type, s map[string]any, path string)
	walk = func(typ reflect.Type, s map[string]any, path string) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice && typ != rawType {
			typ = typ.Elem()
			if items, ok := s["items"].(map[string]any); ok {
				s = items
			}
		}
		if typ.Kind() != reflect.Struct || typ == durationType || typ == quantityType {
			return
		}
		assert.Equal(t, false, s["additionalProperties"], "%s: unknown keys must be refused", path)
		props, _ := s["properties"].(map[string]any)
		for i := range typ.NumField() {
			f := typ.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if f.Anonymous && name == "" {
				walk(f.Type, s, path)
				continue
			}
			if name == "-" || !f.IsExported() {
				continue
			}
			checked++
			entry, ok := props[name].(map[string]any)
			if !assert.True(t, ok, "%s.%s (%s.%s) has no schema entry", path, name, typ, f.Name) {
				continue
			}
			walk(f.Type, entry, path+"."+name)
		}
	}
	walk(reflect.TypeFor[config.Config](), cfg, "config")
	assert.Greater(t, checked, 60, "fields walked")
}

// An enum or a bound naming a field the types no longer have is an error,
// not a rule silently dropped from the schema.
func TestSchemaRefusesStaleRules(t *testing.T) {
	_, err := generate(map[field][]string{fieldOf[config.Log]("colour"): {"red"}},
		map[field]bound{fieldOf[config.Server]("backlog"): {0, 1}, fieldOf[config.Server]("port"): {0, 65535}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "config.Log.colour, config.Server.backlog")
	assert.NotContains(t, err.Error(), "port")
}

// The enums are exactly what Parse accepts: each value passes, a value
// beside them fails naming the field, as the schema does.
func TestEnumsMatchValidation(t *testing.T) {
	tests := []struct {
		path string // as Parse names the field; "[0]" is a list entry
		doc  string // the field's YAML, %s its value
	}{
		{"strategy", "strategy: %s"},
		{"networkOverlap", "networkOverlap: %s"},
		{"placement.mode", "placement: {mode: %s}"},
		{"capacity.coordination", "capacity: {coordination: %s}"},
		{"resourceSize.operationMode", "resourceSize: {operationMode: %s}"},
		{"resourceAdmission.operationMode", "resourceAdmission: {operationMode: %s, limits: []}"},
		{"pendingShoots.bindMode", "pendingShoots: {bindMode: %s}"},
		{"capacity.unrestrictedSubjects[0].kind", "capacity: {unrestrictedSubjects: [{kind: %s, name: x}]}"},
		{"resourceAdmission.unrestrictedSubjects[0].kind", "resourceAdmission: {limits: [], unrestrictedSubjects: [{kind: %s, name: x}]}"},
	}
	var values map[string]any
	require.NoError(t, json.Unmarshal(committedSchema(t), &values))
	cfg := values["properties"].(map[string]any)["config"].(map[string]any)
	for _, tt := range tests {
		s := cfg
		for _, part := range strings.Split(tt.path, ".") {
			name, entry := strings.CutSuffix(part, "[0]")
			s = s["properties"].(map[string]any)[name].(map[string]any)
			if entry {
				s = s["items"].(map[string]any)
			}
		}
		enum, _ := s["enum"].([]any)
		require.NotEmpty(t, enum, tt.path)
		for _, v := range append(enum, "Nearest") {
			doc := "apiVersion: " + config.APIVersion + "\nkind: " + config.Kind + "\n" + strings.Replace(tt.doc, "%s", v.(string), 1)
			_, err := config.Parse([]byte(doc))
			if v == "Nearest" {
				require.Error(t, err, tt.path)
				assert.Contains(t, err.Error(), tt.path+": unsupported value \"Nearest\"")
			} else if err != nil {
				assert.NotContains(t, err.Error(), tt.path+":", "%s: %v", tt.path, v)
			}
		}
	}
}
