package handlers

import (
	"github.com/go-logr/logr"

	"github.com/seedwarden/seedwarden/internal/ratelog"
)

// A request refused for what it carries (wrong kind, malformed object, a
// case variant) is the client's mistake or an attack, not the server's
// failure: it is logged at info level, without the stack trace an error
// carries, and a flood of them is thinned out so that it cannot drown the
// log. Server-side failures still log as errors.

var rejections = ratelog.New(ratelog.DefaultRate, ratelog.DefaultBurst)

// logRejected logs a request refused for its content (thinned out, see
// above).
func logRejected(log logr.Logger, err error, msg string) {
	rejections.Info(log, msg, "reason", err.Error())
}
