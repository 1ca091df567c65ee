package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/sync/errgroup"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// Standalone are the servers of a process without a controller-runtime
// manager (landscape mode): the webhook server, and plain HTTP servers for
// metrics and probes as a manager would run them.
type Standalone struct {
	// Webhook is the admission server (NewWebhook); its handlers registered.
	Webhook webhook.Server
	// CertDir is where Webhook's certificates are, for its error message.
	CertDir string
	// MetricsAddress and HealthAddress are where /metrics and /healthz,
	// /readyz are served; "" serves none.
	MetricsAddress, HealthAddress string
	// Metrics is what /metrics serves.
	Metrics prometheus.Gatherer
	// Drain fails /readyz while shutting down; nil: never.
	Drain *Drainer
}

// Run serves until ctx ends or a server fails.
func (s Standalone) Run(ctx context.Context, log logr.Logger) error {
	metricsMux := http.NewServeMux()
	metricsMux.Handle("/metrics", promhttp.HandlerFor(s.Metrics, promhttp.HandlerOpts{}))

	probes := http.NewServeMux()
	mountChecks(probes, "/healthz", map[string]healthz.Checker{"ping": healthz.Ping})
	mountChecks(probes, "/readyz", map[string]healthz.Checker{
		// Everything else is ready before anything listens; the webhook
		// server is the only thing left to wait for.
		"webhook":  s.Webhook.StartedChecker(),
		"shutdown": s.Drain.Readyz,
	})

	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		if err := s.Webhook.Start(ctx); err != nil {
			return fmt.Errorf("webhook server (certificates from %s): %w", s.CertDir, err)
		}
		return nil
	})
	g.Go(func() error { return serveHTTP(ctx, "metrics", s.MetricsAddress, metricsMux, log) })
	g.Go(func() error { return serveHTTP(ctx, "health probes", s.HealthAddress, probes, log) })
	return g.Wait()
}

// mountChecks serves checks like controller-runtime's manager does: all at
// path, each at path/<name>.
func mountChecks(mux *http.ServeMux, path string, checks map[string]healthz.Checker) {
	h := http.StripPrefix(path, &healthz.Handler{Checks: checks})
	mux.Handle(path, h)
	mux.Handle(path+"/", h)
}

// serveHTTP serves h on addr until ctx ends; "" disables it.
func serveHTTP(ctx context.Context, name, addr string, h http.Handler, log logr.Logger) error {
	if addr == "" {
		return nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("%s server: %w", name, err)
	}
	// Ours, so every timeout is set: GETs without a body.
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 10 * time.Second,
		WriteTimeout: 30 * time.Second, IdleTimeout: 90 * time.Second, MaxHeaderBytes: 1 << 20}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		<-ctx.Done()
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdownCtx)
	}()
	log.Info("Serving "+name, "address", ln.Addr().String())
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("%s server: %w", name, err)
	}
	<-stopped
	return nil
}
