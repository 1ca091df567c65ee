package config

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestUnknownFieldSuggestions: an unknown field names the nearest known
// field at its own level, nested sections, list items and embedded structs
// included; no suggestion when nothing is near.
func TestUnknownFieldSuggestions(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"top level", "stratgy: SameRegion", `stratgy: unknown field; did you mean "strategy"?`},
		{"letter case", "Strategy: SameRegion", `Strategy: unknown field; did you mean "strategy"?`},
		{"nested", "reservations: {maxPerNamespce: 3}", `reservations.maxPerNamespce: unknown field; did you mean "maxPerNamespace"?`},
		{"transposed letters", "server: {prot: 1}", `server.prot: unknown field; did you mean "port"?`},
		{"two levels", "server: {clientAuth: {caFle: x}}", `server.clientAuth.caFle: unknown field; did you mean "caFile"?`},
		{"list item", "scoring: {scorers: [{name: LeastAllocated, wieght: 1}]}", `scoring.scorers[0].wieght: unknown field; did you mean "weight"?`},
		{"pointer section", "headroom: {profiles: [{name: a, shot: {}}]}", `headroom.profiles[0].shot: unknown field; did you mean "shoot"?`},
		{"embedded struct", `resourceAdmission: {limits: [{apiGroup: ["*"], apiVersions: ["*"], resources: ["*"], size: 1Ki}]}`,
			`resourceAdmission.limits[0].apiGroup: unknown field; did you mean "apiGroups"?`},
		{"nothing near", "reservations: {ceiling: 3}", "reservations.ceiling: unknown field"},
		{"short name", "a: 1", "a: unknown field"},
		{"other section's name", "log: {port: 1}", "log.port: unknown field"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(header + tc.yaml + "\n"))
			var cfgErr *Error
			require.ErrorAs(t, err, &cfgErr)
			assert.Contains(t, cfgErr.Problems, tc.want)
		})
	}
}

func TestNearest(t *testing.T) {
	for _, tc := range []struct {
		unknown string
		known   []string
		want    string
	}{
		{"maxPerNamespce", []string{"maxPerNamespace", "maxTotal"}, "maxPerNamespace"},
		{"maxtotal", []string{"maxPerNamespace", "maxTotal"}, "maxTotal"},
		{"bidnMode", []string{"bindMode", "workers"}, "bindMode"},
		{"xyz", []string{"abc"}, ""},
		{"a", []string{"b", "ab"}, ""},
		{"ab", []string{"b", "c"}, "b"},
		{"cat", []string{"car", "bat"}, "bat"}, // a tie goes to the first in sort order
		{"anything", nil, ""},
	} {
		t.Run(tc.unknown, func(t *testing.T) {
			assert.Equal(t, tc.want, nearest(tc.unknown, tc.known))
		})
	}
}

func TestFieldNamesAt(t *testing.T) {
	type inner struct {
		Kept    int `json:"kept"`
		Skipped int `json:"-"`
		Bare    int
	}
	type outer struct {
		inner
		Items  []*inner          `json:"items,omitempty"`
		ByName map[string]inner  `json:"byName"`
		Raw    map[string]string `json:"raw"`
	}
	typ := reflect.TypeFor[outer]()
	for _, tc := range []struct {
		path []string
		want []string
	}{
		{nil, []string{"kept", "Bare", "items", "byName", "raw"}},
		{[]string{"items[3]"}, []string{"kept", "Bare"}},
		{[]string{"byName", "some-key"}, []string{"kept", "Bare"}},
		{[]string{"raw", "k"}, nil},
		{[]string{"missing"}, nil},
		{[]string{"kept"}, nil},
	} {
		assert.Equal(t, tc.want, fieldNamesAt(typ, tc.path), "%q", tc.path)
	}
}
