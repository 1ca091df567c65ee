package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"os"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/autoscaler"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/certwatch"
	"github.com/seedwarden/seedwarden/internal/config"
	"github.com/seedwarden/seedwarden/internal/handlers"
	"github.com/seedwarden/seedwarden/internal/metrics"
	"github.com/seedwarden/seedwarden/internal/pending"
	"github.com/seedwarden/seedwarden/internal/placementtoken"
	"github.com/seedwarden/seedwarden/internal/seedreserve"
	"github.com/seedwarden/seedwarden/internal/server"
)

// gracefulShutdownTimeout bounds the manager's shutdown; it stays below
// Kubernetes' default terminationGracePeriodSeconds (30s).
const gracefulShutdownTimeout = 25 * time.Second

// serveCluster runs a controller-runtime manager: informers feed the Store,
// the webhook server answers from it. reservationNS is where the capacity
// webhook reserves across replicas ("": in this replica's memory only).
func serveCluster(ctx context.Context, cfg *config.Config, kubeconfig string, signer *placementtoken.Signer, reservationNS string, drain *server.Drainer, log logr.Logger) error {
	restCfg, err := restConfig(kubeconfig)
	if err != nil {
		return err
	}
	authorizer, err := clusterAuthorizer(cfg, restCfg)
	if err != nil {
		return err
	}
	m := metrics.New(ctrlmetrics.Registry, metricGroups(cfg, reservationNS)...)
	store := newStore(cfg, m)
	if signer != nil {
		// A token is single-use across replicas as far as the watch shows.
		signer.SetCarriers(store.TokenCarriers)
	}
	limits := newLimits(cfg.Server, m)
	webhookServer, err := newWebhookServer(cfg, limits, drain, m, log)
	if err != nil {
		return err
	}
	cacheOpts, freshness, watched := watchOptions(cfg)
	opts, err := managerOptions(cfg, cacheOpts, webhookServer, log)
	if err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(restCfg, opts)
	if err != nil {
		return fmt.Errorf("creating manager: %w", err)
	}
	leader, err := newLeaderOnly(mgr, restCfg, cfg, os.Getenv, m, log)
	if err != nil {
		return err
	}
	cluster, err := newClusterReserver(cfg, restCfg, store, reservationNS, leader.reservationLeader(cfg), m, log)
	if err != nil {
		return err
	}
	// GetWebhookServer also adds the server to the manager's runnables,
	// which every replica runs, like the caches, metrics and probes: only
	// the retry controller and the autoscaler wait for leadership (leader).
	srv := mgr.GetWebhookServer()
	if !cfg.Announce() {
		recordArrivals(store, mgr.GetEventRecorder(pending.EventRecorderName))
	}
	synced, err := cache.Register(ctx, mgr.GetCache(), store)
	if err != nil {
		return fmt.Errorf("watching the landscape: %w", err)
	}
	staleness := handlers.StalenessGuard{Freshness: freshness, MaxStaleness: cfg.Cache.MaxStaleness.Duration}
	m.RegisterCacheStaleness(cfg.Cache.MaxStaleness.Duration, func() time.Duration { return freshness.StaleFor(time.Now()) })
	deps := placementDeps{signer: signer, authorizer: authorizer, synced: synced, cluster: cluster, staleness: staleness, drain: drain, limits: limits,
		events: mgr.GetEventRecorder(handlers.EventRecorderName)}
	registerWebhooks(srv, cfg, store, deps, m, log)
	if err := registerSeedAutoscalerWebhook(srv, cfg, restCfg, mgr.GetAPIReader(), deps, m, log); err != nil {
		return err
	}
	if err := setupPendingShoots(mgr, cfg, store, pendingDeps{signer: signer, cluster: cluster, watched: watched, synced: synced, staleness: staleness}, leader, m, log); err != nil {
		return err
	}
	if err := setupCertificateWatch(mgr, cfg, m, log); err != nil {
		return err
	}
	if err := setupHeadroom(mgr, cfg, store, synced, staleness, m, log); err != nil {
		return err
	}
	if err := setupAutoscaler(ctx, mgr, cfg, autoscalerDeps{store: store, watched: watched, synced: synced, staleness: staleness}, leader, m, log); err != nil {
		return err
	}
	if err := setupSeedDrain(mgr, cfg, seedDrainDeps{store: store, cluster: cluster, synced: synced, staleness: staleness}, leader, m, log); err != nil {
		return err
	}
	setupAudit(mgr, cfg, store, synced, staleness, leader, m, log)
	if err := addChecks(mgr, synced, staleness, srv, drain); err != nil {
		return err
	}
	log.Info("Starting", "version", version, "commit", commit, "host", restCfg.Host,
		"strategy", cfg.Strategy, "networkOverlap", cfg.NetworkOverlap, "gardenNamespace", cfg.GardenNamespace,
		"metricsSecure", cfg.MetricsSecure(), "capacityCoordination", cfg.Capacity.Coordination,
		"cacheMaxStaleness", cfg.Cache.MaxStaleness.Duration)
	return mgr.Start(ctx)
}

// watchOptions are the informers' options, with what follows them: the
// freshness of their watches, which the webhooks, the retry controller and
// /readyz read (see handlers.StalenessGuard), and, when the retry
// controller or the autoscaler runs, the watch's copies of pending Shoots
// (nil otherwise): the retry controller decides from them instead of
// reading a Shoot first, the autoscaler places them on the replicas it
// considers.
func watchOptions(cfg *config.Config) (crcache.Options, *cache.Freshness, *cache.PendingShoots) {
	freshness := cache.NewFreshness()
	opts := cache.InformerOptions(cfg.GardenNamespace)
	opts.NewInformer = freshness.NewInformer
	var watched *cache.PendingShoots
	if cfg.PendingShootsEnabled() || cfg.Autoscaler.Enabled {
		watched = cache.NewPendingShoots(cfg.SchedulerName)
		watched.Configure(&opts)
	}
	return opts, freshness, watched
}

// managerOptions are the manager's. It elects no leader: losing the Lease
// would end the manager, webhooks included; newLeaderOnly elects for the
// leader-only work alone.
func managerOptions(cfg *config.Config, cacheOpts crcache.Options, webhookServer webhook.Server, log logr.Logger) (ctrl.Options, error) {
	scheme := cache.NewScheme()
	if err := autoscaler.AddToScheme(scheme); err != nil {
		return ctrl.Options{}, err
	}
	timeout := gracefulShutdownTimeout
	return ctrl.Options{
		Scheme:                  scheme,
		Cache:                   cacheOpts,
		Metrics:                 metricsOptions(cfg),
		HealthProbeBindAddress:  cfg.Health.BindAddress,
		WebhookServer:           webhookServer,
		GracefulShutdownTimeout: &timeout,
		Logger:                  log,
	}, nil
}

// addChecks adds /healthz and the /readyz checks: ready once the informers
// have synced, while the cache is fresh enough, the webhook server listens
// and no shutdown is under way.
func addChecks(mgr ctrl.Manager, synced func() bool, staleness handlers.StalenessGuard, srv webhook.Server, drain *server.Drainer) error {
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	for _, c := range []struct {
		name  string
		check healthz.Checker
	}{
		{"informers", server.SyncedChecker(synced)},
		{"cache-freshness", server.FreshnessChecker(staleness, staleness.MaxStaleness, time.Now)},
		{"webhook", srv.StartedChecker()},
		{"shutdown", drain.Readyz},
	} {
		if err := mgr.AddReadyzCheck(c.name, c.check); err != nil {
			return err
		}
	}
	return nil
}

// metricsOptions configures the manager's metrics server. metrics.secure:
// HTTPS with the serving certificate (reloaded like the webhook's) and
// server.MetricsAuthFilter, which lets through only bearer tokens the API server
// authenticates (TokenReview) and authorizes for GET /metrics
// (SubjectAccessReview); anything else gets 401 or 403. Otherwise plain
// HTTP, which the configuration allows on loopback addresses only.
func metricsOptions(cfg *config.Config) metricsserver.Options {
	o := metricsserver.Options{BindAddress: cfg.Metrics.BindAddress}
	if cfg.MetricsSecure() {
		o.SecureServing = true
		o.CertDir, o.CertName, o.KeyName = cfg.Server.CertDir, cfg.Server.CertName, cfg.Server.KeyName
		o.TLSOpts = []func(*tls.Config){server.HardenTLS}
		o.FilterProvider = server.MetricsAuthFilter
	}
	return o
}

// newClusterReserver returns the capacity webhook's cluster-wide reserver
// (capacity.coordination apiserver; seedreserve's package documentation
// explains the design): reservation ConfigMaps in namespace, read and
// written through a client of their own that never reads from a cache, with
// its metrics recorded through m. namespace "" returns nil
// (an untyped nil: the capacity webhook then reserves in the Store alone).
func newClusterReserver(cfg *config.Config, restCfg *rest.Config, store *cache.Store, namespace string, leading func() bool, m *metrics.Recorder, log logr.Logger) (handlers.ClusterReserver, error) {
	if namespace == "" {
		return nil, nil
	}
	c, err := seedreserve.NewClient(restCfg)
	if err != nil {
		return nil, err
	}
	r, err := seedreserve.New(c, store, seedreserve.Options{
		Namespace:     namespace,
		TTL:           cfg.ReservationTTL.Duration,
		ConfirmWindow: cfg.Reservations.ConfirmWindow.Duration,
		Limits:        reservationLimits(cfg),
		Leading:       leading,
		Metrics:       m,
		Log:           log.WithName("seedreserve"),
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
func setupCertificateWatch(mgr ctrl.Manager, cfg *config.Config, m *metrics.Recorder, log logr.Logger) error {
	if !cfg.Certificate.Watched() {
		return nil
	}
	return certwatch.New(cfg.Certificate.Namespace, cfg.Certificate.Name, certwatch.Options{
		Metrics:       m,
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

// metricGroups are the collectors of the parts the configuration runs
// besides the webhooks: a part that is off exports nothing.
func metricGroups(cfg *config.Config, reservationNS string) []metrics.Group {
	var groups []metrics.Group
	if cfg.PendingShootsEnabled() {
		groups = append(groups, metrics.GroupPending)
	}
	if reservationNS != "" {
		groups = append(groups, metrics.GroupReservations)
	}
	if cfg.Certificate.Watched() {
		groups = append(groups, metrics.GroupCertificates)
	}
	if cfg.Autoscaler.Enabled {
		groups = append(groups, metrics.GroupAutoscaler)
	}
	if cfg.SeedDrain.Enabled {
		groups = append(groups, metrics.GroupSeedDrain)
	}
	if cfg.Audit.Enabled {
		groups = append(groups, metrics.GroupAudit)
	}
	if needsLeader(cfg) {
		groups = append(groups, metrics.GroupLeadership)
	}
	return append(groups, headroomGroup(cfg)...)
}

// setupPendingShoots adds the retry controller for Shoots admitted without a
// seed: it decides from the same Store (and reserves in it) as the webhooks,
// and records through m with the others.
func setupPendingShoots(mgr ctrl.Manager, cfg *config.Config, store *cache.Store, deps pendingDeps, leader leaderOnly, m *metrics.Recorder, log logr.Logger) error {
	if !cfg.PendingShootsEnabled() {
		if cfg.Announce() {
			return fmt.Errorf("placement.mode %s: the retry controller binds the announced seeds, so pendingShoots.enabled must not be false (or use placement.mode %s)",
				config.PlacementViaBinding, config.PlacementViaPatch)
		}
		log.Info("Retry controller for pending Shoots disabled (pendingShoots.enabled: false)")
		return nil
	}
	newReconciler := func() *pending.Reconciler {
		r := newPendingReconciler(cfg, store, deps.synced, deps.staleness, m)
		if deps.signer != nil {
			// Not a typed nil in the interface: without a key no announced
			// seed is trusted.
			r.Verifier = deps.signer
		}
		if c, ok := deps.cluster.(pending.ClusterReserver); ok {
			r.Cluster = c // *seedreserve.Reserver: its ReserveFor of an existing Shoot
		}
		if deps.watched != nil {
			r.Watched = deps.watched
		}
		return r
	}
	// Checked once here, not at the first term: a bad configuration stops
	// the process at startup.
	if _, err := newReconciler().NewController(mgr, mgr.GetCache()); err != nil {
		return err
	}
	// A new Reconciler each term: nothing of an earlier term's pending
	// Shoots and backoffs carries over.
	leader.runner.Add(pending.ControllerName, func(ctx context.Context, c crcache.Cache) error {
		return newReconciler().Run(ctx, mgr, c)
	})
	pc := pendingConfig(cfg)
	kv := []any{"placementMode", cfg.Placement.Mode, "bindMode", pc.Mode, "backoffBase", pc.BackoffBase.String(), "backoffMax", pc.BackoffMax.String(), "workers", pc.Workers}
	if !leader.election.elected {
		log.Info("leaderElection.enabled is false: every replica runs the retry controller; run a single replica")
	}
	log.Info("Retry controller for pending Shoots enabled", append(kv, leader.election.logValues()...)...)
	return nil
}

// pendingDeps is what the retry controller shares with the webhooks and the
// informers: the token signer (nil: no key), the cross-replica reserver
// (nil: capacity coordination local), the watch's pending Shoots, and the
// cache's sync and staleness.
type pendingDeps struct {
	signer    *placementtoken.Signer
	cluster   handlers.ClusterReserver
	watched   *cache.PendingShoots
	synced    func() bool
	staleness handlers.StalenessGuard
}

// newPendingReconciler is the retry controller, placing with the same
// options (strategy, network mode, scoring profile) as the webhooks.
func newPendingReconciler(cfg *config.Config, store *cache.Store, synced func() bool, staleness handlers.StalenessGuard, m *metrics.Recorder) *pending.Reconciler {
	return &pending.Reconciler{
		Config:  pendingConfig(cfg),
		Store:   store,
		Options: placementOptions(cfg),
		Metrics: m,
		Synced:  synced,
		Stale: func() bool {
			_, stale := staleness.StaleBeyond(time.Now())
			return stale
		},
	}
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
