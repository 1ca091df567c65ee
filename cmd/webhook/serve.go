package main

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	"github.com/spf13/pflag"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/config"
	"github.com/seedwarden/seedwarden/internal/handlers"
	"github.com/seedwarden/seedwarden/internal/landscape"
	"github.com/seedwarden/seedwarden/internal/metrics"
	"github.com/seedwarden/seedwarden/internal/seedreserve"
	"github.com/seedwarden/seedwarden/internal/server"
)

// errLandscapeWithKubeconfig refuses the two sources of a landscape given
// together, for serve and plan.
const errLandscapeWithKubeconfig = "--landscape and --kubeconfig are mutually exclusive: give one of them"

// serveOptions are serve's flags.
type serveOptions struct {
	configPath, kubeconfig, landscapeFile *string
}

// serveFlags defines serve's flags on fs.
func serveFlags(fs *pflag.FlagSet) serveOptions {
	return serveOptions{
		configPath:    fs.String("config", "", "configuration `FILE` (YAML or JSON); without it every default applies"),
		kubeconfig:    fs.String("kubeconfig", "", "kubeconfig `PATH` of the garden cluster (default: $KUBECONFIG, ~/.kube/config or the in-cluster config)"),
		landscapeFile: fs.String("landscape", "", "serve decisions from this static landscape `FILE` (YAML/JSON List or multi-document) instead of a cluster"),
	}
}

func serveCommand(ctx context.Context, c *cli, o serveOptions, args []string) int {
	stderr := c.stderr
	configPath, kubeconfig, landscapeFile := o.configPath, o.kubeconfig, o.landscapeFile
	fail := func(err any) int {
		fmt.Fprintf(stderr, "webhook serve: %v\n", err)
		return exitUsage
	}
	if len(args) > 0 {
		return fail(fmt.Sprintf("unexpected argument %q", args[0]))
	}
	if *landscapeFile != "" && *kubeconfig != "" {
		return fail(errLandscapeWithKubeconfig)
	}
	cfg, err := loadConfig(*configPath)
	if err != nil {
		return fail(err)
	}
	var objs []client.Object
	if *landscapeFile != "" {
		if objs, err = landscapeToServe(cfg, *landscapeFile); err != nil {
			return fail(err)
		}
	}
	log := newLogger(cfg.Log, stderr)
	setLogger(log)
	drain := server.NewDrainer(cfg.Server.ShutdownDelay.Duration)
	ctx, stop := drain.Context(ctx, log)
	defer stop()
	signer, err := newPlacementSigner(cfg, *landscapeFile != "", log)
	if err != nil {
		return fail(err)
	}

	if *landscapeFile != "" {
		if cfg.Certificate.Watched() {
			log.Info("certificate is not watched with --landscape (there is no cluster to watch it in)",
				"certificate", cfg.Certificate.Namespace+"/"+cfg.Certificate.Name)
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

// landscapeToServe checks cfg for serving a landscape file and reads the
// file, before anything is logged or started: a file that cannot be read
// is bad usage, named by its flag.
func landscapeToServe(cfg *config.Config, path string) ([]client.Object, error) {
	if err := checkLandscapeConfig(cfg); err != nil {
		return nil, err
	}
	objs, err := landscape.ReadFile(path, warnLandscape)
	if err != nil {
		return nil, fmt.Errorf("--landscape %q: %w", path, err)
	}
	return objs, nil
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

// serveLandscape serves decisions from a static landscape: no cluster at all.
// It runs the same webhook server as serveCluster, plus plain HTTP servers for
// metrics and probes, until ctx ends.
func serveLandscape(ctx context.Context, cfg *config.Config, objs []client.Object, deps placementDeps, log logr.Logger) error {
	m := metrics.New(ctrlmetrics.Registry, headroomGroup(cfg)...)
	store := newStore(cfg, m)
	store.Load(objs)
	runner, err := newHeadroomRunner(cfg, store, nil, m, log)
	if err != nil {
		return err
	}
	if runner != nil {
		// The landscape is loaded: ready at once. It stops with ctx.
		go func() { _ = runner.Start(ctx) }()
	}
	log.Info("Loaded landscape", "objects", len(objs), "seeds", len(store.Snapshot().Seeds))
	if cfg.PendingShootsEnabled() {
		log.V(1).Info("No retry controller for pending Shoots in landscape mode: there is nothing to bind")
	}
	if cfg.Announce() {
		log.Info("placement.mode binding in landscape mode: seeds are announced, never bound (set placement.mode: patch to see spec.seedName set)")
	}

	deps.limits = newLimits(cfg.Server, m)
	srv, err := newWebhookServer(cfg, deps.limits, deps.drain, m, log)
	if err != nil {
		return err
	}
	registerWebhooks(srv, cfg, store, deps, m, log)

	log.Info("Starting", "version", version, "commit", commit, "mode", "landscape",
		"strategy", cfg.Strategy, "networkOverlap", cfg.NetworkOverlap, "gardenNamespace", cfg.GardenNamespace)
	return server.Standalone{
		Webhook: srv,
		CertDir: cfg.Server.CertDir,
		// The same registry a manager's metrics server would serve: it also
		// holds controller-runtime's webhook and Go runtime metrics.
		Metrics:        ctrlmetrics.Registry,
		MetricsAddress: bindAddress(cfg.Metrics.BindAddress),
		HealthAddress:  bindAddress(cfg.Health.BindAddress),
		Drain:          deps.drain,
	}.Run(ctx, log)
}

// bindAddress is a configured bind address as server.Standalone takes it:
// "" for disabled ("0").
func bindAddress(addr string) string {
	if addr == config.Disabled {
		return ""
	}
	return addr
}

// newWebhookServer is the webhook server the configuration describes, its
// unknown paths guarded by limits; client rejections are counted in m.
func newWebhookServer(cfg *config.Config, limits server.Limits, drain *server.Drainer, m *metrics.Recorder, log logr.Logger) (webhook.Server, error) {
	o := server.WebhookOptions{
		Port:     cfg.Server.Port,
		CertDir:  cfg.Server.CertDir,
		CertName: cfg.Server.CertName,
		KeyName:  cfg.Server.KeyName,
		Limits:   limits,
		// What the port serves, seen by every readiness probe.
		ServedCertificate: m.SetServingCertificateExpiry,
	}
	if a := cfg.Server.ClientAuth; a.Enabled() {
		v, err := server.NewClientVerifier(server.ClientAuth{
			CAFile:       a.CAFile,
			AllowedNames: a.AllowedNames,
			Log:          log.WithName("client-auth"),
			Rejected:     m.ObserveClientRejection,
		})
		if err != nil {
			return nil, fmt.Errorf("server.clientAuth.caFile: %w", err)
		}
		o.ClientAuth = v
		log.Info("Webhook clients must present a certificate", "caFile", a.CAFile, "allowedNames", a.AllowedNames)
	}
	return server.NewWebhook(o, drain)
}

// newLimits are the request limits as configured, for every handler of one
// server: they share one budget of request bytes in flight, exported
// through m.
func newLimits(s config.Server, m *metrics.Recorder) server.Limits {
	b := server.NewBudget(s.MaxRequestBytesInFlight, s.MaxRequestBytes, s.RequestQueueTimeout.Duration, m)
	m.RegisterRequestBudget(b.Limit(), b.InFlight, server.BudgetQueued, server.BudgetRefused, server.BudgetStreamed)
	return server.Limits{MaxRequestBytes: s.MaxRequestBytes, ReadTimeout: s.ReadTimeout.Duration, WriteTimeout: s.WriteTimeout.Duration, Budget: b}
}

// newStore is the Store the configuration describes; it counts the
// reservations its limits refuse through m (nil: nowhere).
func newStore(cfg *config.Config, m *metrics.Recorder) *cache.Store {
	o := cache.Options{
		GardenNamespace: cfg.GardenNamespace,
		ReservationTTL:  cfg.ReservationTTL.Duration,
		ConfirmWindow:   cfg.Reservations.ConfirmWindow.Duration,
		Limits:          reservationLimits(cfg),
		// SeedDrains cordon their seeds only where they are watched.
		WatchSeedDrains: cfg.SeedDrain.Enabled,
	}
	if m != nil {
		o.Recorder = m
	}
	return cache.NewStore(o)
}

// registerWebhooks registers the admission handlers on srv, each recording
// its answers through m, and exports the Store's per-seed gauges.
func registerWebhooks(srv webhook.Server, cfg *config.Config, store *cache.Store, deps placementDeps, m *metrics.Recorder, log logr.Logger) {
	registerSeedStats(cfg, store, m)
	// The mutating webhook is on every Shoot CREATE's path, so it decodes the
	// AdmissionReview once itself (same answers as webhook.Admission, which it
	// falls back to for unusual input; see handlers.NewMutatingHTTPHandler).
	srv.Register(handlers.MutateShootsPath, server.Guard(deps.limits, deps.drain, handlers.NewMutatingHTTPHandler(&handlers.ShootMutator{
		// With capacity.coordination apiserver, a placement is reserved
		// across replicas before the webhook answers.
		Placer:         &seedreserve.ClusterPlacer{Local: store, Cluster: deps.cluster, Defer: deferOf(deps.cluster), Metrics: m, Log: log.WithName("mutate-shoots")},
		Options:        placementOptions(cfg),
		SchedulerName:  cfg.SchedulerName,
		Announce:       cfg.Announce(),
		Signer:         deps.signer,
		Projects:       store,
		Metrics:        m,
		Log:            log.WithName("mutate-shoots"),
		StalenessGuard: deps.staleness,
	}, cfg.Server.MaxRequestBytes)))
	registerValidatingWebhooks(srv, cfg, store, deps, m, log)
}

// deferOf is the mutating webhook's ClusterPlacer.Defer: the Reserver's
// (seedreserve.Reserver.Defers); nil without one.
func deferOf(c handlers.ClusterReserver) func(seed string) bool {
	if r, ok := c.(*seedreserve.Reserver); ok {
		return r.Defers
	}
	return nil
}
