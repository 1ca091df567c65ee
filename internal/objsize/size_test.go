package objsize

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMeasure(t *testing.T) {
	big := strings.Repeat("x", 1000)
	tests := []struct {
		name string
		raw  string
		want int64
	}{
		{"plain object counts every byte", `{"spec":{"a":1}}`, 16},
		{"status is not counted", `{"spec":{"a":1},"status":{"big":"` + big + `"}}`, 16},
		{"managedFields are not counted", `{"metadata":{"name":"n","managedFields":[{"m":"` + big + `"}]},"spec":{}}`, int64(len(`{"metadata":{"name":"n"},"spec":{}}`))},
		{"both, size matches the object without them", `{"metadata":{"managedFields":[],"name":"n"},"spec":{},"status":{}}`, int64(len(`{"metadata":{"name":"n"},"spec":{}}`))},
		{"null status still subtracted", `{"spec":{},"status":null}`, int64(len(`{"spec":{}}`))},
		// Keys are case-sensitive, as the API server reads them: a "Status"
		// or "ManagedFields" member is data and counts (a big "Status"
		// escaped the limit when encoding/json matched it case-insensitively).
		{"Status in another case counts", `{"spec":{},"Status":{"big":"` + big + `"}}`, int64(len(`{"spec":{},"Status":{"big":"` + big + `"}}`))},
		{"managedFields in another case count", `{"metadata":{"ManagedFields":["` + big + `"]}}`, int64(len(`{"metadata":{"ManagedFields":["` + big + `"]}}`))},
		{"last duplicate status is the one left out", `{"status":"` + big + `","status":1}`, int64(len(`{"status":"` + big + `"}`))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Measure([]byte(tt.raw))
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestMeasureSizesManagedFields(t *testing.T) {
	entries := `[{"manager":"kubectl","operation":"Update","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{}}}]`
	tests := []struct {
		name string
		raw  string
		want Sizes
	}{
		{"no managedFields", `{"metadata":{"name":"n"},"spec":{}}`, Sizes{Object: 35}},
		{"the value is measured as sent", `{"metadata":{"name":"n","managedFields":` + entries + `},"spec":{}}`, Sizes{Object: 35, ManagedFields: int64(len(entries))}},
		{"empty list", `{"metadata":{"name":"n","managedFields":[]}}`, Sizes{Object: 25, ManagedFields: 2}},
		{"null counts as none", `{"metadata":{"name":"n","managedFields":null}}`, Sizes{Object: 25}},
		{"status does not count for either", `{"metadata":{"name":"n","managedFields":[]},"status":{"managedFields":"` + strings.Repeat("x", 100) + `"}}`, Sizes{Object: 25, ManagedFields: 2}},
		{"a top-level managedFields is data", `{"managedFields":["` + strings.Repeat("x", 100) + `"]}`, Sizes{Object: 122}},
		{"ManagedFields in another case is data", `{"metadata":{"ManagedFields":[1]}}`, Sizes{Object: 34}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := MeasureSizes([]byte(tt.raw))
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			object, err := Measure([]byte(tt.raw))
			require.NoError(t, err)
			assert.Equal(t, tt.want.Object, object, "Measure is MeasureSizes().Object")
		})
	}
}

func TestMeasureErrors(t *testing.T) {
	for _, raw := range []string{"", "{", "[1,2]", `"str"`, `{"status":}`, `{"metadata":{"managedFields":}}`, `{"metadata":[]}`} {
		_, err := MeasureSizes([]byte(raw))
		assert.Error(t, err, "%q", raw)
	}
}

func FuzzMeasure(f *testing.F) {
	f.Add([]byte(`{"metadata":{"managedFields":[]},"status":{}}`))
	f.Add([]byte(`{"a":"\u0000"}`))
	f.Add([]byte(`{"metadata":{"managedFields":null,"managedFields":[{"manager":"m"}]}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		s, err := MeasureSizes(raw)
		if err != nil {
			return
		}
		if s.Object < 2 || s.Object > int64(len(raw)) {
			t.Fatalf("object size %d out of range for %d bytes", s.Object, len(raw))
		}
		// The two never share a byte: managedFields are left out of Object.
		if s.ManagedFields < 0 || (s.Object > 2 && s.Object+s.ManagedFields > int64(len(raw))) {
			t.Fatalf("sizes %+v overlap in %d bytes", s, len(raw))
		}
	})
}

func BenchmarkMeasure100KB(b *testing.B) {
	raw := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","managedFields":[{"manager":"kubectl"}]},"data":{"k":"` + strings.Repeat("y", 100*1024) + `"},"status":{}}`)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Measure(raw); err != nil {
			b.Fatal(err)
		}
	}
}
