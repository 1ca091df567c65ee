package handlers

import (
	"sync/atomic"

	"github.com/go-logr/logr"
	"golang.org/x/time/rate"
)

// A request refused for what it carries (wrong kind, malformed object, a
// case variant) is the client's mistake or an attack, not the server's
// failure: it is logged at info level, without the stack trace an error
// carries, and a flood of them is thinned out so that it cannot drown the
// log (issue 14, defect 5). Server-side failures still log as errors.

// rejectionLogRate and rejectionLogBurst bound the rejection lines of one
// process: a burst of 20, then one a second.
const (
	rejectionLogRate  = rate.Limit(1)
	rejectionLogBurst = 20
)

var rejections = newRejectionLog(rejectionLogRate, rejectionLogBurst)

type rejectionLog struct {
	limit      *rate.Limiter
	suppressed atomic.Int64
}

func newRejectionLog(r rate.Limit, burst int) *rejectionLog {
	return &rejectionLog{limit: rate.NewLimiter(r, burst)}
}

// log logs one refused request, or counts it when over the rate; the next
// line logged says how many were left out.
func (l *rejectionLog) log(log logr.Logger, err error, msg string) {
	if !l.limit.Allow() {
		l.suppressed.Add(1)
		return
	}
	kv := []any{"reason", err.Error()}
	if n := l.suppressed.Swap(0); n > 0 {
		kv = append(kv, "suppressedSinceLastLine", n)
	}
	log.Info(msg, kv...)
}

// logRejected logs a request refused for its content (see rejectionLog).
func logRejected(log logr.Logger, err error, msg string) {
	rejections.log(log, err, msg)
}
