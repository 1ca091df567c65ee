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
	admissionv1 "k8s.io/api/admission/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

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

// controller-runtime's errors about a body (no request decoded) are the
// client's: thinned info lines. With a decoded request they stay errors.
func TestAdmissionWebhookLogsClientErrorsAsRejections(t *testing.T) {
	saved := rejections
	rejections = ratelog.New(0, 2) // a burst of two, then nothing
	t.Cleanup(func() { rejections = saved })
	log, lines := capture()

	bodyLog := logClientErrorsAsRejections(log, nil).WithName("admission").WithValues("k", "v")
	for range 5 {
		bodyLog.Error(errors.New("couldn't get version/kind; json parse error"), "unable to decode the request")
	}
	require.Len(t, *lines, 2, "a flood is thinned out")
	assert.Contains(t, (*lines)[0], `"reason"="couldn't get version/kind; json parse error"`)
	assert.Contains(t, (*lines)[0], `"k"="v"`)
	assert.NotContains(t, (*lines)[0], `"error"=`)

	req := &admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{UID: "uid-1"}}
	logClientErrorsAsRejections(log, req).Error(errors.New("json: unsupported value"), "unable to encode response")
	require.Len(t, *lines, 3, "never thinned")
	assert.Contains(t, (*lines)[2], `"error"="json: unsupported value"`)
	assert.Contains(t, (*lines)[2], `"requestID"="uid-1"`)
}
