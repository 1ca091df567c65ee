package landscape_test

import (
	"bytes"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/landscape"
	"github.com/seedwarden/seedwarden/internal/landscapegen"
)

// BenchmarkDecodeLandscape reads a YAML List of 100 seeds and 10,000
// Shoots, as `serve --landscape` and `plan` read a file once at start
// (BENCHMARKS.md section 30).
func BenchmarkDecodeLandscape(b *testing.B) {
	var objs []client.Object
	for i := range 100 {
		objs = append(objs, landscapegen.Seed(i))
	}
	for i := range 10000 {
		objs = append(objs, landscapegen.ExistingShoot(i, 100))
	}
	var buf bytes.Buffer
	if err := landscape.Encode(&buf, objs); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := landscape.Decode(data); err != nil {
			b.Fatal(err)
		}
	}
}
