package server

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
)

// Drainer is the shutdown delay (server.shutdownDelay). When the process is
// told to stop, it keeps serving for the delay while /readyz fails and every
// answer carries "Connection: close": load balancers stop sending new
// connections, and the API server's pooled keep-alive connections are
// closed after their next request instead of by the server's shutdown, which
// races with a request being sent on them (a POST that fails that way is not
// retried, and a fail-closed webhook's failure denies the request). Then the
// servers shut down gracefully: in-flight requests finish. A nil *Drainer
// never drains.
type Drainer struct {
	delay    time.Duration
	draining atomic.Bool
}

// NewDrainer returns a Drainer that keeps serving for delay once told to
// stop.
func NewDrainer(delay time.Duration) *Drainer { return &Drainer{delay: delay} }

// ErrShuttingDown is Readyz's answer while draining.
var ErrShuttingDown = errors.New("shutting down")

// Context returns a context that ends delay after parent ends, draining
// from parent's end; stop releases it early.
func (d *Drainer) Context(parent context.Context, log logr.Logger) (ctx context.Context, stop context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(parent))
	go func() {
		select {
		case <-parent.Done():
		case <-ctx.Done():
			return
		}
		d.draining.Store(true)
		log.Info("Shutting down: not ready, closing connections after their answers", "shutdownDelay", d.delay.String())
		t := time.NewTimer(d.delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		cancel()
	}()
	return ctx, cancel
}

// Readyz is a readiness check that fails while draining.
func (d *Drainer) Readyz(*http.Request) error {
	if d != nil && d.draining.Load() {
		return ErrShuttingDown
	}
	return nil
}

// requestContext gives r a context that the server's shutdown does not
// cancel: controller-runtime's webhook server derives every request's
// context from the manager's, which is cancelled first thing in a shutdown,
// so requests in flight would be answered "context canceled" (the mutating
// webhook would not place, SubjectAccessReviews and API-server reservations
// would fail closed). A client going away still cancels it, except while
// shutting down (the write deadline bounds the request then). done releases
// it.
func (d *Drainer) requestContext(r *http.Request) (_ *http.Request, done func()) {
	if d == nil {
		return r, func() {}
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	// draining is set before the manager's context is cancelled.
	stop := context.AfterFunc(r.Context(), func() {
		if !d.closing() {
			cancel()
		}
	})
	return r.WithContext(ctx), func() { stop(); cancel() }
}

// closing reports whether answers should close their connection.
func (d *Drainer) closing() bool { return d != nil && d.draining.Load() }
