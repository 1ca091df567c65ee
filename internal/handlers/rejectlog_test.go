package handlers

import (
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"

	"github.com/seedwarden/seedwarden/internal/ratelog"
)

func capture() (logr.Logger, *[]string) {
	var lines []string
	return funcr.New(func(prefix, args string) { lines = append(lines, args) }, funcr.Options{}), &lines
}

// A malformed review is the client's fault: logged at info, not as an error.
func TestRejectedRequestLogsAtInfo(t *testing.T) {
	saved := rejections
	rejections = ratelog.New(rate.Inf, 1) // other tests' rejections must not thin this one's out
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
