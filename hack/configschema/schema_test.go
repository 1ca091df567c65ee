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
	enums[in[config.Log]("colour")] = []string{"red"}
	defer delete(enums, in[config.Log]("colour"))
	_, err := Schema()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "config.Log.colour")
}

// The enums are exactly what Parse accepts: each value passes, a value
// beside them fails naming the field, as the schema does.
func TestEnumsMatchValidation(t *testing.T) {
	tests := map[string]string{
		"strategy":                   "strategy: %s",
		"networkOverlap":             "networkOverlap: %s",
		"placement.mode":             "placement: {mode: %s}",
		"capacity.coordination":      "capacity: {coordination: %s}",
		"resourceSize.operationMode": "resourceSize: {operationMode: %s}",
		"pendingShoots.bindMode":     "pendingShoots: {bindMode: %s}",
	}
	var values map[string]any
	require.NoError(t, json.Unmarshal(committedSchema(t), &values))
	cfg := values["properties"].(map[string]any)["config"].(map[string]any)
	for path, doc := range tests {
		s := cfg
		for _, part := range strings.Split(path, ".") {
			s = s["properties"].(map[string]any)[part].(map[string]any)
		}
		enum := s["enum"].([]any)
		require.NotEmpty(t, enum, path)
		for _, v := range append(enum, "Nearest") {
			yaml := "apiVersion: " + config.APIVersion + "\nkind: " + config.Kind + "\n" + strings.Replace(doc, "%s", v.(string), 1)
			_, err := config.Parse([]byte(yaml))
			if v == "Nearest" {
				require.Error(t, err, path)
				assert.Contains(t, err.Error(), path+": unsupported value \"Nearest\"")
			} else if err != nil {
				assert.NotContains(t, err.Error(), path, "%s: %v", path, v)
			}
		}
	}
}
