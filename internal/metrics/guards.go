package metrics

import "github.com/prometheus/client_golang/prometheus"

// GuardRefusalsTotalName counts the requests a guard's rules refused, by
// what the guard's enforcement did with them (action: the enforcement,
// handlers.EnforceDeny, EnforceWarn or EnforceDryRun).
const GuardRefusalsTotalName = "seedwarden_guard_refusals_total"

func newGuardRefusals() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: GuardRefusalsTotalName,
		Help: "Requests a guard's rules refused, by guard (binding, capacity, resource-size, kubeconfig-secret, namespace-deletion) " +
			"and action (deny: refused; warn: admitted with a warning and an event; dryrun: admitted silently). " +
			"Requests a guard could not decide (stale cache, unreadable request) are not counted.",
	}, []string{"guard", "action"})
}

// ObserveGuardRefusal counts one request guard's rules refused, and what its
// enforcement did (action).
func (m *Recorder) ObserveGuardRefusal(guard, action string) {
	if m == nil {
		return
	}
	m.guardRefusals.WithLabelValues(guard, action).Inc()
}
