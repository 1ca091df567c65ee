// Package ratelog thins out floods of one kind of log line: a burst, then a
// steady rate, with the count of lines left out on the next line written.
// Lines a client can provoke at will (refused requests, refused TLS
// handshakes) go through it, so that nobody can drown the log.
package ratelog

import (
	"sync/atomic"

	"github.com/go-logr/logr"
	"golang.org/x/time/rate"
)

// The usual limit: a burst of 20 lines, then one a second.
const (
	DefaultRate  = rate.Limit(1)
	DefaultBurst = 20
)

// SuppressedKey is the key of the count of lines left out.
const SuppressedKey = "suppressedSinceLastLine"

// Log writes info lines at most at its rate. The zero value is not usable;
// call New.
type Log struct {
	limit      *rate.Limiter
	suppressed atomic.Int64
}

// New allows burst lines at once, then r a second.
func New(r rate.Limit, burst int) *Log {
	return &Log{limit: rate.NewLimiter(r, burst)}
}

// Info writes msg with keysAndValues at info level, or counts it when over
// the rate.
func (l *Log) Info(log logr.Logger, msg string, keysAndValues ...any) {
	if !l.limit.Allow() {
		l.suppressed.Add(1)
		return
	}
	if n := l.suppressed.Swap(0); n > 0 {
		keysAndValues = append(keysAndValues, SuppressedKey, n)
	}
	log.Info(msg, keysAndValues...)
}

// SetLimit changes the rate (tests).
func (l *Log) SetLimit(r rate.Limit) { l.limit.SetLimit(r) }
