package docs

import (
	"encoding/json"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seedwarden/seedwarden/internal/config"
)

// configPaths lists the JSON path of every field a configuration file can
// set, as configuration.md spells them: "server.port",
// "headroom.profiles[].alertBelow". It descends into the config package's own
// structs (embedded ones flatten, as encoding/json does) and stops at types
// that decode themselves (Duration, Quantity, the raw Shoot) and at other
// packages' types (rbacv1.Subject), which the reference documents as a whole.
func configPaths(t reflect.Type, prefix string) []string {
	t = deref(t)
	if t.Kind() == reflect.Slice {
		if !descends(deref(t.Elem())) { // a list of values: the field is the leaf
			return []string{prefix}
		}
		return configPaths(t.Elem(), prefix+"[]")
	}
	if !descends(t) {
		return []string{prefix}
	}
	var paths []string
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" {
			paths = append(paths, configPaths(f.Type, prefix)...)
			continue
		}
		if name == "" {
			name = f.Name
		}
		path := name
		if prefix != "" {
			path = prefix + "." + name
		}
		paths = append(paths, configPaths(f.Type, path)...)
	}
	return paths
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// descends reports whether configPaths lists t's fields: a struct of the
// config package that does not decode itself.
func descends(t reflect.Type) bool {
	return t.Kind() == reflect.Struct && t.PkgPath() == reflect.TypeFor[config.Config]().PkgPath() &&
		!reflect.PointerTo(t).Implements(reflect.TypeFor[json.Unmarshaler]())
}

// documentedPaths are the backticked words in the first cell of
// configuration.md's table rows: a field counts as documented when it has a
// row of its own (or shares one, as certificate.namespace and .name do).
func documentedPaths(doc string) map[string]bool {
	code := regexp.MustCompile("`([^`]+)`")
	out := map[string]bool{}
	for line := range strings.Lines(doc) {
		if !strings.HasPrefix(line, "|") {
			continue
		}
		first, _, _ := strings.Cut(strings.TrimPrefix(line, "|"), "|")
		for _, m := range code.FindAllStringSubmatch(first, -1) {
			out[m[1]] = true
		}
	}
	return out
}

// Every field of the configuration file must have a row in
// configuration.md; a field added to internal/config without one fails here.
func TestConfigurationDocumentsEveryField(t *testing.T) {
	doc, err := os.ReadFile("configuration.md")
	require.NoError(t, err)
	documented := documentedPaths(string(doc))

	paths := configPaths(reflect.TypeFor[config.Config](), "")
	require.Greater(t, len(paths), 50, "the walk found too few fields: %v", paths)
	for _, p := range paths {
		assert.True(t, documented[p], "configuration.md has no table row naming `%s`", p)
	}
}

// The walk itself: nested structs, slices of structs, embedded structs,
// pointers, and the types it must not descend into.
func TestConfigPaths(t *testing.T) {
	paths := configPaths(reflect.TypeFor[config.Config](), "")
	for _, want := range []string{
		"apiVersion",
		"reservations.maxPerNamespace",
		"server.clientAuth.allowedNames",
		"headroom.profiles[].alertBelow",
		"headroom.profiles[].shoot",
		"headroom.interval",
		"resourceSize.limits[].apiGroups",
		"resourceSize.limits[].size",
		"resourceSize.counts[].count",
		"capacity.unrestrictedSubjects[].namespace",
		"resourceAdmission.limits[].size",
		"resourceAdmission.unrestrictedSubjects",
		"scoring.scorers[].weight",
	} {
		assert.Contains(t, paths, want)
	}
	for _, not := range []string{"reservationTTL.Duration", "headroom.profiles[].shoot[]", "metrics.seedLabels[]", "resourceSize.limits[].Resources"} {
		assert.NotContains(t, paths, not)
	}
}

// Only a backticked path in a row's first cell counts: not one mentioned
// outside a table, in another row's meaning, or without backticks.
func TestDocumentedPaths(t *testing.T) {
	got := documentedPaths("`outside.table` text\n| `a.b`, `a.c` | `1s` | see `c[].d` |\n| plain e.f |\n")
	assert.Equal(t, map[string]bool{"a.b": true, "a.c": true}, got)
}
