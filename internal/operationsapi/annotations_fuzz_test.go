package operationsapi

import (
	"testing"
	"time"
)

// ParseMove reads a value any Shoot owner can write: it never panics, and
// what it accepts encodes to a value it reads back the same.
func FuzzParseMove(f *testing.F) {
	f.Add(Move{Drain: "d", From: "a", To: "b", At: time.Unix(1700000000, 0)}.Encode())
	f.Add(`{"to":"b","at":"2026-12-02T18:00:00Z"}`)
	f.Add(`{"to":"b","at":"0001-01-01T00:00:00Z"}`)
	f.Add(`{"to":" ","at":"9999-12-31T23:59:59Z"}`)
	f.Add(`{"to":"b","at":"9999-12-31T23:59:59-23:59"}`)
	f.Add(`[]`)
	f.Fuzz(func(t *testing.T, value string) {
		m, err := ParseMove(value)
		if err != nil {
			return
		}
		back, err := ParseMove(m.Encode())
		if err != nil {
			t.Fatalf("%q parsed, its encoding %q does not: %v", value, m.Encode(), err)
		}
		if back.To != m.To || back.From != m.From || back.Drain != m.Drain || !back.At.Equal(m.At.Truncate(time.Second)) {
			t.Fatalf("%q: %+v, re-read %+v", value, m, back)
		}
	})
}
