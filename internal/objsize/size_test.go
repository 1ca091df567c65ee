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

func TestMeasureErrors(t *testing.T) {
	for _, raw := range []string{"", "{", "[1,2]", `"str"`, `{"status":}`} {
		_, err := Measure([]byte(raw))
		assert.Error(t, err, "%q", raw)
	}
}

func FuzzMeasure(f *testing.F) {
	f.Add([]byte(`{"metadata":{"managedFields":[]},"status":{}}`))
	f.Add([]byte(`{"a":"\u0000"}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		n, err := Measure(raw)
		if err == nil && (n < 2 || n > int64(len(raw))) {
			t.Fatalf("size %d out of range for %d bytes", n, len(raw))
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
