package handlers

import (
	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/seedwarden/seedwarden/internal/ratelog"
)

// A request refused for what it carries (wrong kind, malformed object, a
// case variant, a body that is empty or no review at all) is the client's
// mistake or an attack, not the server's failure: it is logged at info
// level, without the stack trace an error carries, and a flood of them is
// thinned out so that it cannot drown the log. Server-side failures still
// log as errors.

var rejections = ratelog.New(ratelog.DefaultRate, ratelog.DefaultBurst)

// logRejected logs a request refused for its content (thinned out, see
// above).
func logRejected(log logr.Logger, err error, msg string) {
	rejections.Info(log, msg, "reason", err.Error())
}

// NewAdmissionWebhook is controller-runtime's webhook.Admission serving h,
// with the client's errors logged as rejections. webhook.Admission logs
// every body it cannot take (none, unreadable, too large, another content
// type, no AdmissionReview) and every answer it cannot write back (the
// client went away) as an error, through a logger built without a request:
// there is none yet, or none left to answer. Those lines are what any
// client can provoke at will, so they go through logRejected. What it logs
// with a decoded request (a response it cannot encode) stays an error.
func NewAdmissionWebhook(h admission.Handler) *admission.Webhook {
	return &admission.Webhook{Handler: h, LogConstructor: logClientErrorsAsRejections}
}

func logClientErrorsAsRejections(base logr.Logger, req *admission.Request) logr.Logger {
	if req != nil {
		return admission.DefaultLogConstructor(base, req)
	}
	sink := base.GetSink()
	if sink == nil {
		return base
	}
	// WithSink, not logr.New: New would Init the shared sink again.
	return base.WithSink(rejectingSink{sink})
}

// rejectingSink writes errors as logRejected does, everything else as its
// LogSink.
type rejectingSink struct{ logr.LogSink }

func (s rejectingSink) Error(err error, msg string, keysAndValues ...any) {
	reason := "<nil>"
	if err != nil {
		reason = err.Error()
	}
	rejections.Info(logr.Logger{}.WithSink(s.LogSink), msg, append([]any{"reason", reason}, keysAndValues...)...)
}

func (s rejectingSink) WithValues(keysAndValues ...any) logr.LogSink {
	return rejectingSink{s.LogSink.WithValues(keysAndValues...)}
}

func (s rejectingSink) WithName(name string) logr.LogSink {
	return rejectingSink{s.LogSink.WithName(name)}
}
