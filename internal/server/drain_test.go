package server

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDrainer(t *testing.T) {
	for _, delay := range []time.Duration{0, 300 * time.Millisecond} {
		t.Run(delay.String(), func(t *testing.T) {
			d := NewDrainer(delay)
			parent, terminate := context.WithCancel(context.Background())
			ctx, stop := d.Context(parent, logr.Discard())
			defer stop()

			l := Limits{MaxRequestBytes: 1 << 10, ReadTimeout: time.Second, WriteTimeout: time.Second}
			srv := httptest.NewServer(Guard(l, d, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
			defer srv.Close()
			get := func() *http.Response {
				resp, err := srv.Client().Get(srv.URL)
				require.NoError(t, err)
				resp.Body.Close()
				return resp
			}

			require.NoError(t, d.Readyz(nil), "ready while running")
			assert.False(t, get().Close, "keep-alive while running")

			terminated := time.Now()
			terminate()
			require.Eventually(t, func() bool { return d.Readyz(nil) != nil }, time.Second, time.Millisecond, "not ready once told to stop")
			assert.Equal(t, ErrShuttingDown, d.Readyz(nil))
			if delay > 0 {
				assert.NoError(t, ctx.Err(), "the servers keep running during the delay")
				assert.True(t, get().Close, "answers close their connection while draining")
			}
			<-ctx.Done()
			assert.GreaterOrEqual(t, time.Since(terminated), delay, "the servers stop after the delay")
		})
	}

	// stop without termination ends the context and never drains.
	d := NewDrainer(time.Hour)
	ctx, stop := d.Context(context.Background(), logr.Discard())
	stop()
	<-ctx.Done()
	assert.NoError(t, d.Readyz(nil))
	var none *Drainer
	assert.NoError(t, none.Readyz(nil))
	assert.False(t, none.closing())
}

// TestDrainerRequestContext: a request in flight when the server's base
// context is cancelled (controller-runtime's shutdown) keeps its context
// while draining; outside a drain, the cancellation reaches it.
func TestDrainerRequestContext(t *testing.T) {
	for _, tc := range []struct {
		name      string
		terminate bool
		wantErr   error
	}{
		{name: "shutdown after SIGTERM", terminate: true, wantErr: nil},
		{name: "server stopped otherwise", terminate: false, wantErr: context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := NewDrainer(0)
			parent, terminate := context.WithCancel(context.Background())
			defer terminate()
			mgrCtx, stop := d.Context(parent, logr.Discard())
			defer stop()
			base, cancelBase := context.WithCancel(context.Background())
			defer cancelBase()

			inHandler, release := make(chan struct{}), make(chan struct{})
			got := make(chan error, 1)
			l := Limits{MaxRequestBytes: 1 << 10, ReadTimeout: 5 * time.Second, WriteTimeout: 5 * time.Second}
			srv := httptest.NewUnstartedServer(Guard(l, d, http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
				close(inHandler)
				<-release
				got <- r.Context().Err()
			})))
			srv.Config.BaseContext = func(net.Listener) context.Context { return base }
			srv.Start()
			defer srv.Close()

			go func() {
				if resp, err := srv.Client().Get(srv.URL); err == nil {
					resp.Body.Close()
				}
			}()
			<-inHandler
			if tc.terminate {
				terminate()
				<-mgrCtx.Done() // delay 0: draining, then the manager's context ends
			}
			cancelBase()
			time.Sleep(20 * time.Millisecond) // let a cancellation arrive
			close(release)
			assert.ErrorIs(t, <-got, tc.wantErr)
		})
	}
}
