package admissionjson

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// objectKeys lists the keys of the top-level object of valid JSON as
// encoding/json reads them (unescaped, duplicates kept, in order).
func objectKeys(t *testing.T, data []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	require.NoError(t, err)
	require.Equal(t, json.Delim('{'), tok)
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		require.NoError(t, err)
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		require.NoError(t, dec.Decode(&skip))
	}
	return keys
}

// The scanner on any JSON encoding/json accepts: skip steps over exactly the
// one value, and object sees every key of an object, in order, as
// encoding/json does, and it says which keys hold an escape. Whatever the bytes, it never panics.
func FuzzWalker(f *testing.F) {
	for _, seed := range []string{
		`{}`, `[]`, `""`, `0`, `-1.5e3`, `true`, `null`, ` {"a": 1} `,
		`{"a": "b\"c", "a": [1, {"x": "}"}], "\u0061": null}`,
		`{"metadata": {"annotations": {}, "annotations": {"k": "v"}}, "spec": {}}`,
		`{"k\\": "v", "` + string(bytes.Repeat([]byte("x"), 40)) + `\"y": ["\\", "]"]}`,
		`{"é": {"[": "{"}}`, `["a", {"b": [[]]}]`,
		`{"a":`, `{"a" 1}`, `"unterminated`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// Any bytes: the scanner may refuse them, but must not panic.
		_ = inspectObject(data)
		_, _ = inspectReview(data)
		if !json.Valid(data) {
			return
		}
		w := walker{b: data}
		require.True(t, w.skip(), "skip refused valid JSON %q", data)
		w.ws()
		assert.Equal(t, len(data), w.i, "skip stopped inside %q", data)

		if !startsJSONObject(data) {
			return
		}
		want := objectKeys(t, data)
		var got []string
		w = walker{b: data}
		ok := w.object(func(key []byte, escaped bool) bool {
			if !escaped {
				assert.NotContains(t, string(key), `\`, "an escape not reported")
			}
			// Decoded as encoding/json decodes a key (which also replaces
			// invalid UTF-8).
			var k string
			require.NoError(t, json.Unmarshal(append(append([]byte{'"'}, key...), '"'), &k))
			got = append(got, k)
			return w.skip()
		})
		require.True(t, ok, "object refused valid JSON %q", data)
		assert.Equal(t, want, got, "keys of %q", data)
	})
}

// TestWalkerStr steps over strings around shortStr, where str switches
// from scanning to searching, with escapes (an escaped quote, an escaped
// backslash before the closing quote) on either side of the switch.
func TestWalkerStr(t *testing.T) {
	for n := 0; n < 3*shortStr; n++ {
		for _, esc := range []string{"", `\"`, `\\`, `\u00e4`} {
			for _, at := range []int{0, n / 2, n} {
				content := strings.Repeat("a", at) + esc + strings.Repeat("b", n-at)
				in := `"` + content + `",1`
				w := walker{b: []byte(in)}
				s, escaped, ok := w.str()
				require.True(t, ok, "%q", in)
				assert.Equal(t, content, string(s), "%q", in)
				assert.Equal(t, esc != "", escaped, "%q", in)
				assert.Equal(t, len(in)-2, w.i, "%q: past the closing quote", in)
			}
		}
		unterminated := walker{b: []byte(`"` + strings.Repeat("a", n) + `\"`)}
		_, _, ok := unterminated.str()
		assert.False(t, ok, "unterminated at %d", n)
	}
}
