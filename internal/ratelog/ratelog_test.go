package ratelog

import (
	"testing"

	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"
)

func TestLogThinsFloods(t *testing.T) {
	var lines []string
	log := funcr.New(func(_, args string) { lines = append(lines, args) }, funcr.Options{})
	l := New(0, 2) // two lines, then nothing until the limit rises
	for range 5 {
		l.Info(log, "Refused", "reason", "bad")
	}
	require.Len(t, lines, 2)
	l.SetLimit(rate.Inf)
	l.Info(log, "Refused", "reason", "bad")
	require.Len(t, lines, 3)
	assert.Contains(t, lines[2], `"suppressedSinceLastLine"=3`)
	assert.NotContains(t, lines[1], SuppressedKey, "nothing was left out before it")
	for _, line := range lines {
		assert.Contains(t, line, `"level"=0`, "info, not an error with a stack")
		assert.Contains(t, line, `"reason"="bad"`)
	}
}
