package main

// Long file (over 450 lines): the server library code here (request
// guarding, TLS hardening, landscape-mode servers) moves to its own package
// under issue 13, item 4.

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/certwatch"
	"github.com/seedwarden/seedwarden/internal/config"
	"github.com/seedwarden/seedwarden/internal/handlers"
	"github.com/seedwarden/seedwarden/internal/landscape"
	"github.com/seedwarden/seedwarden/internal/metrics"
	"github.com/seedwarden/seedwarden/internal/pending"
	"github.com/seedwarden/seedwarden/internal/placementtoken"
	"github.com/seedwarden/seedwarden/internal/seedreserve"
)

// MutateShootsPath is where the mutating webhook for Shoot CREATE is served.
const MutateShootsPath = "/mutate-shoots"

// gracefulShutdownTimeout bounds the manager's shutdown; it stays below
// Kubernetes' default terminationGracePeriodSeconds (30s).
const gracefulShutdownTimeout = 25 * time.Second

func serveCommand(ctx context.Context, args []string, stderr io.Writer) int {
	fs := newFlagSet("serve", "webhook serve [--config FILE] [--kubeconfig PATH] [--landscape FILE]", stderr)
	configPath := fs.String("config", "", "configuration file (YAML or JSON); without it every default applies")
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig of the garden cluster (default: $KUBECONFIG, ~/.kube/config or the in-cluster config)")
	landscape := fs.String("landscape", "", "serve decisions from this static landscape file (YAML/JSON List or multi-document) instead of a cluster")
	if code, done := parseFlags(fs, args); done {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "webhook serve: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	if *landscape != "" && *kubeconfig != "" {
		fmt.Fprintln(stderr, "webhook serve: --landscape and --kubeconfig exclude each other")
		return exitUsage
	}
	cfg, err := loadConfig(*configPath)
	if err != nil {
		fmt.Fprintf(stderr, "webhook serve: %v\n", err)
		return exitUsage
	}
	if *landscape != "" {
		if err := checkLandscapeConfig(cfg); err != nil {
			fmt.Fprintf(stderr, "webhook serve: %v\n", err)
			return exitUsage
		}
	}
	log := newLogger(cfg.Log, stderr)
	setLogger(log)
	drain := &drainer{delay: cfg.Server.ShutdownDelay.Duration}
	ctx, stop := drain.context(ctx, log)
	defer stop()
	signer, err := newPlacementSigner(cfg, *landscape != "", log)
	if err != nil {
		fmt.Fprintf(stderr, "webhook serve: %v\n", err)
		return exitUsage
	}

	if *landscape != "" {
		if cfg.Certificate.Watched() {
			log.Info("certificate is not watched with --landscape (there is no cluster to watch it in)",
				"certificate", cfg.Certificate.Namespace+"/"+cfg.Certificate.Name)
		}
		objs, err := readLandscape(*landscape)
		if err != nil {
			fmt.Fprintf(stderr, "webhook serve: %v\n", err)
			return exitUsage
		}
		err = serveLandscape(ctx, cfg, objs, placementDeps{signer: signer, authorizer: landscapeAuthorizer(cfg), drain: drain}, log)
		if err == nil {
			return exitOK
		}
		log.Error(err, "Webhook server failed")
		return exitError
	}
	reservationNS, err := reservationNamespace(cfg, podNamespace, log)
	if err != nil {
		fmt.Fprintf(stderr, "webhook serve: invalid configuration: %v\n", err)
		return exitUsage
	}
	if err := serveCluster(ctx, cfg, *kubeconfig, signer, reservationNS, drain, log); err != nil {
		log.Error(err, "Webhook server failed")
		return exitError
	}
	return exitOK
}

// checkLandscapeConfig refuses settings that need an API server, which
// --landscape does not have.
func checkLandscapeConfig(cfg *config.Config) error {
	var problems []string
	if cfg.CapacityEnabled() && cfg.Capacity.APIServer() {
		problems = append(problems, fmt.Sprintf("capacity.coordination: %q reserves through the API server, which --landscape does not have; use %q (one process)",
			config.CoordinationAPIServer, config.CoordinationLocal))
	}
	if cfg.MetricsSecure() && cfg.Metrics.BindAddress != config.Disabled {
		problems = append(problems, "metrics.secure: true authenticates and authorizes scrapers through the API server, which --landscape does not have; "+
			"set metrics.secure: false with a loopback metrics.bindAddress, or metrics.bindAddress: \"0\"")
	}
	if len(problems) == 0 {
		return nil
	}
	return &config.Error{Problems: problems}
}

// serveCluster runs a controller-runtime manager: informers feed the Store,
// the webhook server answers from it. reservationNS is where the capacity
// webhook reserves across replicas ("": in this replica's memory only).
func serveCluster(ctx context.Context, cfg *config.Config, kubeconfig string, signer *placementtoken.Signer, reservationNS string, drain *drainer, log logr.Logger) error {
	restCfg, err := restConfig(kubeconfig)
	if err != nil {
		return err
	}
	authorizer, err := clusterAuthorizer(cfg, restCfg)
	if err != nil {
		return err
	}
	store := newStore(cfg)
	cluster, err := newClusterReserver(cfg, restCfg, store, reservationNS, log)
	if err != nil {
		return err
	}
	timeout := gracefulShutdownTimeout
	// Follows the informers' watches; the webhooks, the retry controller
	// and /readyz read it (see handlers.StalenessGuard).
	freshness := cache.NewFreshness()
	cacheOpts := cache.InformerOptions(cfg.GardenNamespace)
	cacheOpts.NewInformer = freshness.NewInformer
	opts := ctrl.Options{
		Scheme:                  cache.NewScheme(),
		Cache:                   cacheOpts,
		Metrics:                 metricsOptions(cfg),
		HealthProbeBindAddress:  cfg.Health.BindAddress,
		WebhookServer:           newWebhookServer(cfg, drain),
		GracefulShutdownTimeout: &timeout,
		Logger:                  log,
	}
	configureLeaderElection(&opts, cfg, os.Getenv)
	mgr, err := ctrl.NewManager(restCfg, opts)
	if err != nil {
		return fmt.Errorf("creating manager: %w", err)
	}
	// GetWebhookServer also adds the server to the manager's runnables: the
	// webhooks group, which every replica starts before (and regardless of)
	// leader election, like the caches, metrics and probes. Only the retry
	// controller waits for leadership.
	srv := mgr.GetWebhookServer()
	if !cfg.Announce() {
		recordArrivals(store, mgr.GetEventRecorder(pending.EventRecorderName))
	}
	synced, err := cache.Register(ctx, mgr.GetCache(), store)
	if err != nil {
		return fmt.Errorf("watching the landscape: %w", err)
	}
	staleness := handlers.StalenessGuard{Freshness: freshness, MaxStaleness: cfg.Cache.MaxStaleness.Duration}
	mustRegisterReplacing(ctrlmetrics.Registry, metrics.NewCacheStaleness(func() time.Duration { return freshness.StaleFor(time.Now()) }))
	registerWebhooks(srv, cfg, store, placementDeps{signer: signer, authorizer: authorizer, synced: synced, cluster: cluster, staleness: staleness, drain: drain}, log)
	if err := setupPendingShoots(mgr, cfg, store, signer, synced, staleness, opts, log); err != nil {
		return err
	}
	if err := setupCertificateWatch(mgr, cfg, log); err != nil {
		return err
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("informers", syncedChecker(synced)); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("cache-freshness", freshnessChecker(staleness, time.Now)); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("webhook", srv.StartedChecker()); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("shutdown", drain.readyz); err != nil {
		return err
	}
	log.Info("Starting", "version", version, "commit", commit, "host", restCfg.Host,
		"strategy", cfg.Strategy, "networkOverlap", cfg.NetworkOverlap, "gardenNamespace", cfg.GardenNamespace,
		"metricsSecure", cfg.MetricsSecure(), "capacityCoordination", cfg.Capacity.Coordination,
		"cacheMaxStaleness", cfg.Cache.MaxStaleness.Duration)
	return mgr.Start(ctx)
}

// metricsOptions configures the manager's metrics server. metrics.secure:
// HTTPS with the serving certificate (reloaded like the webhook's) and
// controller-runtime's filter, which lets through only bearer tokens the API
// server authenticates (TokenReview) and authorizes for GET /metrics
// (SubjectAccessReview); anything else gets 401 or 403. Otherwise plain
// HTTP, which the configuration allows on loopback addresses only.
func metricsOptions(cfg *config.Config) metricsserver.Options {
	o := metricsserver.Options{BindAddress: cfg.Metrics.BindAddress}
	if cfg.MetricsSecure() {
		o.SecureServing = true
		o.CertDir, o.CertName, o.KeyName = cfg.Server.CertDir, cfg.Server.CertName, cfg.Server.KeyName
		o.TLSOpts = []func(*tls.Config){hardenTLS}
		o.FilterProvider = filters.WithAuthenticationAndAuthorization
	}
	return o
}

// newClusterReserver returns the capacity webhook's cluster-wide reserver
// (capacity.coordination apiserver; seedreserve's package documentation
// explains the design): reservation ConfigMaps in namespace, read and
// written through a client of their own that never reads from a cache, with
// its collectors on controller-runtime's registry. namespace "" returns nil
// (an untyped nil: the capacity webhook then reserves in the Store alone).
func newClusterReserver(cfg *config.Config, restCfg *rest.Config, store *cache.Store, namespace string, log logr.Logger) (handlers.ClusterReserver, error) {
	if namespace == "" {
		return nil, nil
	}
	c, err := seedreserve.NewClient(restCfg)
	if err != nil {
		return nil, err
	}
	m := seedreserve.NewMetrics()
	for _, col := range m.Collectors() {
		mustRegisterReplacing(ctrlmetrics.Registry, col)
	}
	r, err := seedreserve.New(c, store, seedreserve.Options{
		Namespace: namespace,
		TTL:       cfg.ReservationTTL.Duration,
		Metrics:   m,
		Log:       log.WithName("seedreserve"),
	})
	if err != nil {
		return nil, err
	}
	log.Info("Seed capacity is reserved across replicas through the API server",
		"coordination", config.CoordinationAPIServer, "namespace", namespace, "reservationTTL", cfg.ReservationTTL.Duration)
	return r, nil
}

// setupCertificateWatch watches the cert-manager Certificate named in the
// configuration, on every replica (certwatch.Watcher needs no leadership).
func setupCertificateWatch(mgr ctrl.Manager, cfg *config.Config, log logr.Logger) error {
	if !cfg.Certificate.Watched() {
		return nil
	}
	return certwatch.New(cfg.Certificate.Namespace, cfg.Certificate.Name, certwatch.Options{
		Registerer:    ctrlmetrics.Registry,
		Log:           log.WithName("certwatch"),
		ExpiryWarning: cfg.Certificate.ExpiryWarning.Duration, // "0s": never
	}).SetupWithManager(mgr)
}

// restConfig loads --kubeconfig, else what controller-runtime finds. Both
// leave client-side rate limiting off (QPS -1), relying on the API server's
// priority and fairness: ctrl.GetConfig does so itself, and a kubeconfig
// alone would get client-go's 5 requests/s, at which the retry controller
// (a read, a patch and an event per bind) binds about two Shoots a second.
func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig != "" {
		c, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("kubeconfig %s: %w", kubeconfig, err)
		}
		if c.QPS == 0 {
			c.QPS = -1
		}
		return c, nil
	}
	c, err := ctrl.GetConfig()
	if err != nil {
		return nil, fmt.Errorf("no cluster configuration (use --kubeconfig, or --landscape to run without a cluster): %w", err)
	}
	return c, nil
}

func syncedChecker(synced func() bool) healthz.Checker {
	return func(*http.Request) error {
		if !synced() {
			return errors.New("informers have not synced yet")
		}
		return nil
	}
}

// freshnessChecker fails while the cache has been stale for longer than the
// bound (cache.maxStaleness), so that the Service sends requests to replicas
// whose watch works; it passes again once every informer watches again.
func freshnessChecker(g handlers.StalenessGuard, now func() time.Time) healthz.Checker {
	return func(*http.Request) error {
		if d, stale := g.StaleBeyond(now()); stale {
			return fmt.Errorf("the informer cache is stale: watch broken for %s (cache.maxStaleness %s)", d.Round(time.Second), g.MaxStaleness)
		}
		return nil
	}
}

// configureLeaderElection elects a leader among replicas when the retry
// controller runs (the only runnable that needs one). The Lease is released
// on shutdown, so a rolling update hands over at once instead of after the
// lease duration; the process exits right after the manager stops, as
// LeaderElectionReleaseOnCancel requires.
func configureLeaderElection(opts *ctrl.Options, cfg *config.Config, getenv func(string) string) {
	if !cfg.PendingShootsEnabled() || !cfg.LeaderElectionEnabled() {
		return
	}
	opts.LeaderElection = true
	opts.LeaderElectionID = cfg.LeaderElection.ID
	opts.LeaderElectionNamespace = cfg.LeaderElectionNamespace(getenv)
	opts.LeaderElectionReleaseOnCancel = true
}

// setupPendingShoots adds the retry controller for Shoots admitted without a
// seed: it decides from the same Store (and reserves in it) as the webhooks,
// and its metrics go to controller-runtime's registry with the others.
func setupPendingShoots(mgr ctrl.Manager, cfg *config.Config, store *cache.Store, signer *placementtoken.Signer, synced func() bool, staleness handlers.StalenessGuard, opts ctrl.Options, log logr.Logger) error {
	if !cfg.PendingShootsEnabled() {
		if cfg.Announce() {
			return fmt.Errorf("placement.mode %s: the retry controller binds the announced seeds, so pendingShoots.enabled must not be false (or use placement.mode %s)",
				config.PlacementModeBinding, config.PlacementModePatch)
		}
		log.Info("Retry controller for pending Shoots disabled (pendingShoots.enabled: false)")
		return nil
	}
	r := &pending.Reconciler{
		Config:  pendingConfig(cfg),
		Store:   store,
		Options: placementOptions(cfg),
		Metrics: metrics.NewPending(ctrlmetrics.Registry),
		Synced:  synced,
		Stale: func() bool {
			_, stale := staleness.StaleBeyond(time.Now())
			return stale
		},
	}
	if signer != nil {
		// Not a typed nil in the interface: without a key no announced
		// seed is trusted.
		r.Verifier = signer
	}
	if err := r.SetupWithManager(mgr); err != nil {
		return err
	}
	pc := pendingConfig(cfg)
	kv := []any{"placementMode", cfg.Placement.Mode, "bindMode", pc.Mode, "backoffBase", pc.BackoffBase.String(), "backoffMax", pc.BackoffMax.String(), "workers", pc.Workers}
	if opts.LeaderElection {
		kv = append(kv, "leaderElection", true, "lease", opts.LeaderElectionNamespace+"/"+opts.LeaderElectionID)
	} else {
		kv = append(kv, "leaderElection", false)
		log.Info("leaderElection.enabled is false: every replica runs the retry controller; run a single replica")
	}
	log.Info("Retry controller for pending Shoots enabled", kv...)
	return nil
}

// serveLandscape serves decisions from a static landscape: no cluster at all.
// It runs the same webhook server as serveCluster, plus plain HTTP servers for
// metrics and probes, until ctx ends.
func serveLandscape(ctx context.Context, cfg *config.Config, objs []client.Object, deps placementDeps, log logr.Logger) error {
	store := newStore(cfg)
	store.Load(objs)
	log.Info("Loaded landscape", "objects", len(objs), "seeds", len(store.Snapshot().Seeds))
	if cfg.PendingShootsEnabled() {
		log.V(1).Info("No retry controller for pending Shoots in landscape mode: there is nothing to bind")
	}
	if cfg.Announce() {
		log.Info("placement.mode binding in landscape mode: seeds are announced, never bound (set placement.mode: patch to see spec.seedName set)")
	}

	srv := newWebhookServer(cfg, deps.drain)
	registerWebhooks(srv, cfg, store, deps, log)

	// The same registry a manager's metrics server would serve: it also holds
	// controller-runtime's webhook and Go runtime metrics.
	metricsMux := http.NewServeMux()
	metricsMux.Handle("/metrics", promhttp.HandlerFor(ctrlmetrics.Registry, promhttp.HandlerOpts{}))

	probes := http.NewServeMux()
	mountChecks(probes, "/healthz", map[string]healthz.Checker{"ping": healthz.Ping})
	mountChecks(probes, "/readyz", map[string]healthz.Checker{
		// The landscape is loaded before anything listens; the webhook
		// server is the only thing left to wait for.
		"webhook":  srv.StartedChecker(),
		"shutdown": deps.drain.readyz,
	})

	log.Info("Starting", "version", version, "commit", commit, "mode", "landscape",
		"strategy", cfg.Strategy, "networkOverlap", cfg.NetworkOverlap, "gardenNamespace", cfg.GardenNamespace)
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		if err := srv.Start(ctx); err != nil {
			return fmt.Errorf("webhook server (certificates from %s): %w", cfg.Server.CertDir, err)
		}
		return nil
	})
	g.Go(func() error { return serveHTTP(ctx, "metrics", cfg.Metrics.BindAddress, metricsMux, log) })
	g.Go(func() error { return serveHTTP(ctx, "health probes", cfg.Health.BindAddress, probes, log) })
	return g.Wait()
}

// mountChecks serves checks like controller-runtime's manager does: all at
// path, each at path/<name>.
func mountChecks(mux *http.ServeMux, path string, checks map[string]healthz.Checker) {
	h := http.StripPrefix(path, &healthz.Handler{Checks: checks})
	mux.Handle(path, h)
	mux.Handle(path+"/", h)
}

// serveHTTP serves h on addr until ctx ends; "0" disables it.
func serveHTTP(ctx context.Context, name, addr string, h http.Handler, log logr.Logger) error {
	if addr == config.Disabled {
		return nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("%s server: %w", name, err)
	}
	// Ours (landscape mode), so every timeout is set: GETs without a body.
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

func readLandscape(path string) ([]client.Object, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	objs, err := landscape.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("landscape %s: %w", path, err)
	}
	return objs, nil
}

func newStore(cfg *config.Config) *cache.Store {
	return cache.NewStore(cache.Options{
		GardenNamespace: cfg.GardenNamespace,
		ReservationTTL:  cfg.ReservationTTL.Duration,
	})
}

// tls12CipherSuites are the only TLS 1.2 cipher suites offered: ECDHE key
// exchange (forward secrecy) with AEAD ciphers, nothing with CBC, RSA key
// exchange, 3DES or RC4. TLS 1.3, which Go prefers, has only AEAD suites,
// and Go does not let them be configured.
var tls12CipherSuites = []uint16{
	tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
	tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
}

// hardenTLS is the TLS configuration of the webhook and (metrics.secure)
// metrics servers: TLS 1.2 at least, the suites above for 1.2, and HTTP/1.1
// only: HTTP/2 stream handling has had denial-of-service flaws
// (CVE-2023-44487, CVE-2023-39325), and the API server and Prometheus need
// nothing more.
func hardenTLS(c *tls.Config) {
	c.MinVersion = tls.VersionTLS12
	c.CipherSuites = tls12CipherSuites
	c.NextProtos = []string{"http/1.1"}
}

// newWebhookServer serves TLS from certDir; controller-runtime's certwatcher
// reloads the certificate and key when the files change.
//
// Timeouts: webhook.Options (controller-runtime v0.25) has no field for
// them. Its server is an http.Server with ReadHeaderTimeout 32s (which also
// bounds the TLS handshake), IdleTimeout 90s and MaxHeaderBytes 1 MiB, and
// neither ReadTimeout nor WriteTimeout. guardRequest, which every path goes
// through (a catch-all answers unknown paths with 404), adds both per
// request with an http.ResponseController: server.readTimeout for the body,
// server.writeTimeout for the answer.
func newWebhookServer(cfg *config.Config, drain *drainer) webhook.Server {
	srv := webhook.NewServer(webhook.Options{
		Port:     cfg.Server.Port,
		CertDir:  cfg.Server.CertDir,
		CertName: cfg.Server.CertName,
		KeyName:  cfg.Server.KeyName,
		TLSOpts:  []func(*tls.Config){hardenTLS},
	})
	srv.Register("/", guardRequest(cfg.Server, drain, http.NotFoundHandler()))
	return srv
}

// registerWebhooks registers the admission handlers on srv and seedwarden's
// collectors on controller-runtime's metrics registry.
func registerWebhooks(srv webhook.Server, cfg *config.Config, store *cache.Store, deps placementDeps, log logr.Logger) {
	m := metrics.New(ctrlmetrics.Registry)
	mustRegisterReplacing(ctrlmetrics.Registry, metrics.NewSeedCollector(store.SeedStats))
	// The mutating webhook is on every Shoot CREATE's path, so it decodes the
	// AdmissionReview once itself (same answers as webhook.Admission, which it
	// falls back to for unusual input; see handlers.NewMutatingHTTPHandler).
	srv.Register(MutateShootsPath, guardRequest(cfg.Server, deps.drain, handlers.NewMutatingHTTPHandler(&handlers.ShootMutator{
		// With capacity.coordination apiserver, a placement is reserved
		// across replicas before the webhook answers.
		Placer:         &handlers.ClusterPlacer{Local: store, Cluster: deps.cluster, Metrics: m, Log: log.WithName("mutate-shoots")},
		Options:        placementOptions(cfg),
		SchedulerName:  cfg.SchedulerName,
		Announce:       cfg.Announce(),
		Signer:         deps.signer,
		Metrics:        m,
		Log:            log.WithName("mutate-shoots"),
		StalenessGuard: deps.staleness,
	}, cfg.Server.MaxRequestBytes)))
	registerValidatingWebhooks(srv, cfg, store, deps, m, log)
}

// mustRegisterReplacing registers c, replacing an equal collector registered
// before (the collector of an earlier server's Store in the same process, as
// in tests).
func mustRegisterReplacing(reg prometheus.Registerer, c prometheus.Collector) {
	err := reg.Register(c)
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		reg.Unregister(are.ExistingCollector)
		err = reg.Register(c)
	}
	if err != nil {
		panic(err)
	}
}

// guardRequest wraps every handler of the webhook server:
//
//   - the answer must be written within server.writeTimeout of the handler
//     being called (a client that does not read it is cut off);
//   - the body must arrive within server.readTimeout (a client that sends
//     headers and stalls is cut off). net/http lifts the read deadline itself
//     once the body has been read (the background read that notices a client
//     going away runs without one), so a handler waiting for the API server
//     is bounded by the write deadline and its own timeouts, not cancelled;
//   - bodies larger than server.maxRequestBytes are refused with 413: at
//     once when the Content-Length says so, else while reading;
//   - while shutting down (drain), the answer closes its connection, and
//     the shutdown does not cancel the request's context (see
//     drainer.requestContext).
//
// The deadlines are set on the connection; the next request on a kept-alive
// connection sets its own. Setting them fails only where the connection does
// not support deadlines (not the case for controller-runtime's server), and
// then the request is served without them.
func guardRequest(s config.Server, drain *drainer, h http.Handler) http.Handler {
	limit, readTimeout, writeTimeout := s.MaxRequestBytes, s.ReadTimeout.Duration, s.WriteTimeout.Duration
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
		if r.Body != nil && r.Body != http.NoBody {
			_ = rc.SetReadDeadline(now.Add(readTimeout))
			r.Body = &closeOnReadError{ReadCloser: http.MaxBytesReader(w, r.Body, limit), w: w}
		}
		h.ServeHTTP(w, r)
	})
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

// recordArrivals records gardener-scheduler's success event on every Shoot
// the mutating webhook of this replica placed by setting spec.seedName
// (placement mode patch), once the Shoot exists: at admission there is no
// object to record it on yet.
func recordArrivals(store *cache.Store, rec pending.EventRecorder) {
	store.OnArrival(func(shoot *api.Shoot, seed string) {
		rec.Eventf(shoot, nil, corev1.EventTypeNormal, pending.ReasonSchedulingSuccessful, pending.ActionSchedule, "Scheduled to seed %q", seed)
	})
}
