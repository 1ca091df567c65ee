package metrics

import "github.com/prometheus/client_golang/prometheus"

// Metric names of the SeedAutoscaler controller (internal/autoscaler).
const (
	AutoscalerCurrentReplicasName = "seedwarden_autoscaler_current_replicas"
	AutoscalerDesiredReplicasName = "seedwarden_autoscaler_desired_replicas"
	AutoscalerShortName           = "seedwarden_autoscaler_short"
	// AutoscalerReplicasNotReadyName counts the replicas past the
	// provisioning time (spec.provisioningTimeout).
	AutoscalerReplicasNotReadyName = "seedwarden_autoscaler_replicas_not_ready"
	AutoscalerScalesTotalName      = "seedwarden_autoscaler_scales_total"
	AutoscalerErrorsTotalName      = "seedwarden_autoscaler_errors_total"
	// AutoscalerRecommendationsTotalName counts the syncs that got as far
	// as a recommendation, by how they got it (result).
	AutoscalerRecommendationsTotalName = "seedwarden_autoscaler_recommendations_total"
	AutoscalerResultLabel              = "result"
	// AutoscalerNamespaceLabel is not "namespace": a scrape sets that to
	// the pod's namespace and would rename this one exported_namespace.
	AutoscalerNamespaceLabel = "autoscaler_namespace"
	AutoscalerNameLabel      = "autoscaler"
	AutoscalerDirectionLabel = "direction"
)

// Values of the direction label.
const (
	ScaleUp   = "up"
	ScaleDown = "down"
)

// Values of the result label of seedwarden_autoscaler_recommendations_total.
const (
	// RecommendationComputed: computed afresh.
	RecommendationComputed = "computed"
	// RecommendationReused: the inputs were the last sync's, and so is the
	// recommendation (behavior is still applied anew).
	RecommendationReused = "reused"
	// RecommendationOverBudget: stopped at the sync budget, nothing decided.
	RecommendationOverBudget = "over_budget"
	// RecommendationFailed: the spec or the landscape could not be computed.
	RecommendationFailed = "failed"
)

// autoscalerCollectors are GroupAutoscaler's.
type autoscalerCollectors struct {
	current, desired, short, late   *prometheus.GaugeVec
	scales, errors, recommendations *prometheus.CounterVec
}

func newAutoscalerCollectors() autoscalerCollectors {
	id := []string{AutoscalerNamespaceLabel, AutoscalerNameLabel}
	return autoscalerCollectors{
		current: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: AutoscalerCurrentReplicasName,
			Help: "The scale target's spec.replicas as the SeedAutoscaler last saw it.",
		}, id),
		desired: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: AutoscalerDesiredReplicasName,
			Help: "The replicas the SeedAutoscaler wants now, after its behavior (written unless dry-run).",
		}, id),
		late: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: AutoscalerReplicasNotReadyName,
			Help: "Replicas of the SeedAutoscaler's ManagedSeedSet asked for or registered and not ready past the provisioning time (spec.provisioningTimeout): they no longer count as room (status reason ReplicasNotReady).",
		}, id),
		short: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: AutoscalerShortName,
			Help: "1 while the SeedAutoscaler is at maxReplicas and a metric is still not met, else 0.",
		}, id),
		scales: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: AutoscalerScalesTotalName,
			Help: "Changes of the scale target's replicas the SeedAutoscaler wrote, by direction (up, down).",
		}, append(id, AutoscalerDirectionLabel)),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: AutoscalerErrorsTotalName,
			Help: "Syncs of the SeedAutoscaler that failed (no target, no scale subresource, a bad selector or profile, an API error).",
		}, id),
		recommendations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: AutoscalerRecommendationsTotalName,
			Help: "Recommendations of the SeedAutoscaler by result: computed, reused (inputs unchanged since the last sync), over_budget (stopped at autoscaler.syncBudget, nothing written), failed.",
		}, append(id, AutoscalerResultLabel)),
	}
}

func (c *autoscalerCollectors) register(reg prometheus.Registerer) {
	c.current = Register(reg, c.current)
	c.desired = Register(reg, c.desired)
	c.short = Register(reg, c.short)
	c.late = Register(reg, c.late)
	c.scales = Register(reg, c.scales)
	c.errors = Register(reg, c.errors)
	c.recommendations = Register(reg, c.recommendations)
}

// SetAutoscaler records a SeedAutoscaler's replicas and whether it is short.
func (m *Recorder) SetAutoscaler(namespace, name string, current, desired int32, short bool) {
	if m == nil {
		return
	}
	c := &m.autoscaler
	c.current.WithLabelValues(namespace, name).Set(float64(current))
	c.desired.WithLabelValues(namespace, name).Set(float64(desired))
	v := 0.0
	if short {
		v = 1
	}
	c.short.WithLabelValues(namespace, name).Set(v)
}

// SetAutoscalerNotReady records how many replicas of a SeedAutoscaler's
// set are past the provisioning time.
func (m *Recorder) SetAutoscalerNotReady(namespace, name string, late int32) {
	if m == nil {
		return
	}
	m.autoscaler.late.WithLabelValues(namespace, name).Set(float64(late))
}

// CountAutoscalerScale counts a write of the replicas in direction
// (ScaleUp, ScaleDown).
func (m *Recorder) CountAutoscalerScale(namespace, name, direction string) {
	if m == nil {
		return
	}
	m.autoscaler.scales.WithLabelValues(namespace, name, direction).Inc()
}

// CountAutoscalerError counts a failed sync.
func (m *Recorder) CountAutoscalerError(namespace, name string) {
	if m == nil {
		return
	}
	m.autoscaler.errors.WithLabelValues(namespace, name).Inc()
}

// CountAutoscalerRecommendation counts a recommendation by result
// (RecommendationComputed, ...).
func (m *Recorder) CountAutoscalerRecommendation(namespace, name, result string) {
	if m == nil {
		return
	}
	m.autoscaler.recommendations.WithLabelValues(namespace, name, result).Inc()
}

// DeleteAutoscaler drops every series of a deleted SeedAutoscaler.
func (m *Recorder) DeleteAutoscaler(namespace, name string) {
	if m == nil {
		return
	}
	c := &m.autoscaler
	id := prometheus.Labels{AutoscalerNamespaceLabel: namespace, AutoscalerNameLabel: name}
	c.current.Delete(id)
	c.desired.Delete(id)
	c.short.Delete(id)
	c.late.Delete(id)
	c.errors.Delete(id)
	c.scales.DeletePartialMatch(id)
	c.recommendations.DeletePartialMatch(id)
}
