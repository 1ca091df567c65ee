package main

import (
	"fmt"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/seedwarden/seedwarden/internal/config"
	"github.com/seedwarden/seedwarden/internal/leadership"
	"github.com/seedwarden/seedwarden/internal/metrics"
)

// election is how the replicas choose the one that runs the leader-only
// work (the retry controller, the autoscaler, the SeedDrain controller, the
// audit).
type election struct {
	// elected: a Lease decides; otherwise this replica runs the work
	// (leaderElection.enabled false, one replica).
	elected   bool
	namespace string
	id        string
}

// logValues describe the election in a log line.
func (e election) logValues() []any {
	if !e.elected {
		return []any{"leaderElection", false}
	}
	return []any{"leaderElection", true, "lease", e.namespace + "/" + e.id}
}

// leaderElection is the election the configuration asks for: the Lease
// leaderElection.id in leaderElection.namespace (default $POD_NAMESPACE,
// else the garden namespace), as earlier versions elected through
// controller-runtime's manager, so that both share one Lease during a
// rolling update. None when nothing needs a leader.
func leaderElection(cfg *config.Config, getenv func(string) string) election {
	if !needsLeader(cfg) || !cfg.LeaderElectionEnabled() {
		return election{}
	}
	return election{elected: true, namespace: cfg.LeaderElectionNamespace(getenv), id: cfg.LeaderElection.ID}
}

// needsLeader reports whether some leader-only work runs.
func needsLeader(cfg *config.Config) bool {
	return cfg.PendingShootsEnabled() || cfg.Autoscaler.Enabled || cfg.SeedDrain.Enabled || cfg.Audit.Enabled
}

// leaderOnly runs the work only the leader may do.
type leaderOnly struct {
	runner   *leadership.Runner
	election election
}

// newLeaderOnly adds to mgr the runner of the leader-only work, on every
// replica; setupPendingShoots and setupAutoscaler add their work to it.
// Losing the Lease stops that work only: the webhooks, caches, metrics and
// probes are the manager's and keep running. With nothing that needs a
// leader the runner has no work and returns at once.
func newLeaderOnly(mgr ctrl.Manager, restCfg *rest.Config, cfg *config.Config, getenv func(string) string, m *metrics.Recorder, log logr.Logger) (leaderOnly, error) {
	e := leaderElection(cfg, getenv)
	opts := leadership.Options{Log: log.WithName("leadership"), Metrics: m}
	if e.elected {
		lock, err := leadership.NewLock(restCfg, mgr, e.namespace, e.id)
		if err != nil {
			return leaderOnly{}, fmt.Errorf("leader election: %w", err)
		}
		opts.Lock, opts.Name = lock, e.id
	}
	r := leadership.New(mgr.GetCache(), opts)
	return leaderOnly{runner: r, election: e}, mgr.Add(r)
}

// reservationLeader is seedreserve.Options.Leading: where a Lease elects
// the replica of the retry controller, whether this one leads. Nil
// otherwise: without a retry controller nothing would place a Shoot the
// others left to the leader, and a lone replica contends with nobody.
func (l leaderOnly) reservationLeader(cfg *config.Config) func() bool {
	if !l.election.elected || !cfg.PendingShootsEnabled() {
		return nil
	}
	return l.runner.Leading
}
