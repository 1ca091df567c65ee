package handlers

import (
	"errors"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"
)

func capture() (logr.Logger, *[]string) {
	var lines []string
	return funcr.New(func(prefix, args string) { lines = append(lines, args) }, funcr.Options{}), &lines
}

func TestRejectionLogThinsFloods(t *testing.T) {
	log, lines := capture()
	l := newRejectionLog(0, 2) // two lines, then nothing until the limit rises
	for range 5 {
		l.log(log, errors.New("bad"), "Rejecting admission request")
	}
	require.Len(t, *lines, 2)
	l.limit.SetLimit(rate.Inf)
	l.log(log, errors.New("bad"), "Rejecting admission request")
	require.Len(t, *lines, 3)
	assert.Contains(t, (*lines)[2], `"suppressedSinceLastLine"=3`)
	for _, line := range *lines {
		assert.Contains(t, line, `"level"=0`, "info, not an error with a stack")
		assert.Contains(t, line, `"reason"="bad"`)
	}
}

// A malformed review is the client's fault: logged at info, not as an error.
func TestRejectedRequestLogsAtInfo(t *testing.T) {
	saved := rejections
	rejections = newRejectionLog(rate.Inf, 1) // other tests' rejections must not thin this one's out
	t.Cleanup(func() { rejections = saved })
	log, lines := capture()
	f := newBindingFixture(t)
	f.v.Log = log
	resp := vServe(t, f.v, vReview{object: `{"spec":{"seedName":1}}`}.body(t))
	require.False(t, resp.Allowed)
	joined := strings.Join(*lines, "\n")
	assert.Contains(t, joined, "Rejecting admission request")
	assert.NotContains(t, joined, `"error"=`, "no error-level line")
}
