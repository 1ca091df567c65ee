package server

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// Limits bound each request of the webhook server (server.maxRequestBytes,
// server.readTimeout, server.writeTimeout) and, through Budget
// (server.maxRequestBytesInFlight), all of them together. Every handler's
// Limits share one Budget; nil bounds nothing.
type Limits struct {
	MaxRequestBytes int64
	ReadTimeout     time.Duration
	WriteTimeout    time.Duration
	Budget          *Budget
}

// Guard wraps every handler of the webhook server:
//
//   - the answer must be written within WriteTimeout of the handler being
//     called (a client that does not read it is cut off);
//   - the body must arrive within ReadTimeout (a client that sends headers
//     and stalls is cut off). net/http lifts the read deadline itself once
//     the body has been read (the background read that notices a client
//     going away runs without one), so a handler waiting for the API server
//     is bounded by the write deadline and its own timeouts, not cancelled;
//   - bodies larger than MaxRequestBytes are refused with 413: at once when
//     the Content-Length says so, else while reading;
//   - the body's bytes (its Content-Length, or MaxRequestBytes when it has
//     none) are taken from Budget before the handler runs, and given back
//     when it returns; a request that finds no room within the budget's wait
//     is answered 429 (see refuseOverBudget) without being decoded;
//   - while shutting down (drain), the answer closes its connection, and
//     the shutdown does not cancel the request's context (see
//     Drainer.requestContext).
//
// The deadlines are set on the connection; the next request on a kept-alive
// connection sets its own. Setting them fails only where the connection does
// not support deadlines (not the case for controller-runtime's server), and
// then the request is served without them. drain may be nil.
func Guard(l Limits, drain *Drainer, h http.Handler) http.Handler {
	return guard(l, drain, h, nil)
}

// GuardOrStream is Guard for a handler that can also answer without holding
// the body (streamed reads it as it arrives, in memory that does not grow
// with it): a body larger than SmallRequestBytes, or one the budget has no
// room for at once, goes to streamed without taking budget, so a request
// there never waits for the budget and is never refused for it. Smaller
// bodies that fit go to buffered, as Guard would send them. Without a
// Budget everything goes to buffered.
func GuardOrStream(l Limits, drain *Drainer, buffered, streamed http.Handler) http.Handler {
	return guard(l, drain, buffered, streamed)
}

func guard(l Limits, drain *Drainer, h, streamed http.Handler) http.Handler {
	limit, readTimeout, writeTimeout := l.MaxRequestBytes, l.ReadTimeout, l.WriteTimeout
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if drain.closing() {
			w.Header().Set("Connection", "close")
		}
		r, done := drain.requestContext(r)
		defer done()
		rc := http.NewResponseController(w)
		now := time.Now()
		_ = rc.SetWriteDeadline(now.Add(writeTimeout))
		if r.ContentLength > limit {
			http.Error(w, fmt.Sprintf("request body of %d bytes exceeds the limit of %d bytes (server.maxRequestBytes)", r.ContentLength, limit), http.StatusRequestEntityTooLarge)
			return
		}
		// Without a body, net/http's background read has started already;
		// a deadline would end it and cancel the request's context.
		if r.Body == nil || r.Body == http.NoBody {
			h.ServeHTTP(w, r)
			return
		}
		_ = rc.SetReadDeadline(now.Add(readTimeout))
		r.Body = &closeOnReadError{ReadCloser: http.MaxBytesReader(w, r.Body, limit), w: w}
		charge := r.ContentLength
		if charge < 0 {
			charge = limit
		}
		if l.Budget == nil {
			h.ServeHTTP(w, r)
			return
		}
		if streamed != nil {
			if isSmall(charge) && l.Budget.tryAcquire(charge) {
				defer l.Budget.release(charge)
				h.ServeHTTP(w, r)
				return
			}
			streamed.ServeHTTP(w, r)
			return
		}
		if !l.Budget.acquire(r.Context(), charge) {
			refuseOverBudget(w, r, l.Budget, charge)
			return
		}
		defer l.Budget.release(charge)
		h.ServeHTTP(w, r)
	})
}

// refuseOverBudget answers a request the budget had no room for: HTTP 429
// with a plain-text reason. Any status but 200 is a failed call to the API
// server, which then applies the webhook's failurePolicy (Ignore: admitted
// unchanged; Fail: refused); without a Retry-After header it does not send
// the request again. The body is read and dropped first, through a small
// buffer: an answer written while the client still sends would be lost to
// the connection's reset.
func refuseOverBudget(w http.ResponseWriter, r *http.Request, b *Budget, charge int64) {
	_, _ = io.Copy(io.Discard, r.Body)
	http.Error(w, fmt.Sprintf("request body of %d bytes refused: no room within %s (server.requestQueueTimeout) in server.maxRequestBytesInFlight: %d bytes, %d in use, %d of them kept for requests of at most %d bytes",
		charge, b.Wait(), b.Limit(), b.InFlight(), b.Limit()-b.largeLimit, SmallRequestBytes), http.StatusTooManyRequests)
}

// closeOnReadError marks the answer "Connection: close" when reading the
// body fails (timed out, too large, cut short). The handler still answers
// (controller-runtime says why), and then the connection is closed: net/http
// would otherwise keep it for another request, which a stalled client never
// sends, until its idle timeout (90s).
type closeOnReadError struct {
	io.ReadCloser
	w http.ResponseWriter
}

func (b *closeOnReadError) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		b.w.Header().Set("Connection", "close")
	}
	return n, err
}
