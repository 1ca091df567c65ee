package metrics

import "github.com/prometheus/client_golang/prometheus"

// The bound on the request bytes the webhook server handles at once
// (server.maxRequestBytesInFlight).
const (
	RequestBytesInFlightName    = "seedwarden_webhook_request_bytes_in_flight"
	MaxRequestBytesInFlightName = "seedwarden_webhook_max_request_bytes_in_flight"
	RequestBudgetWaitsTotalName = "seedwarden_webhook_request_budget_waits_total"
)

// RegisterRequestBudget exports the budget of request bytes in flight: its
// limit, the bytes taken now (inFlight), and the requests that had to wait
// for room (ObserveRequestBudget), replacing an earlier server's. outcomes
// are the values ObserveRequestBudget receives (internal/server's Budget*
// constants); each has a series from the start, so that rate() sees the
// first request.
func (m *Recorder) RegisterRequestBudget(limit int64, inFlight func() int64, outcomes ...string) {
	if m == nil {
		return
	}
	waits := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: RequestBudgetWaitsTotalName,
		Help: "Webhook requests that did not fit in server.maxRequestBytesInFlight at once, by outcome: queued (got room within server.requestQueueTimeout and were handled), refused (answered 429; the API server applied the webhook's failurePolicy) or streamed (resource-size reviews, measured as they arrived without the budget and answered).",
	}, []string{"outcome"})
	for _, o := range outcomes {
		waits.WithLabelValues(o)
	}
	m.requestBudgetWaits = waits
	m.registerReplacing(waits)
	m.registerReplacing(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: RequestBytesInFlightName,
		Help: "Bytes of the webhook request bodies being handled now, as charged to server.maxRequestBytesInFlight (a body of unknown length counts as server.maxRequestBytes).",
	}, func() float64 { return float64(inFlight()) }))
	m.registerReplacing(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: MaxRequestBytesInFlightName,
		Help: "The configured server.maxRequestBytesInFlight: requests that would take seedwarden_webhook_request_bytes_in_flight above it wait, then are refused.",
	}, func() float64 { return float64(limit) }))
}

// ObserveRequestBudget counts one request that waited for room in the budget;
// outcome is "queued" (then handled), "refused" or "streamed".
func (m *Recorder) ObserveRequestBudget(outcome string) {
	if m == nil || m.requestBudgetWaits == nil {
		return
	}
	m.requestBudgetWaits.WithLabelValues(outcome).Inc()
}
