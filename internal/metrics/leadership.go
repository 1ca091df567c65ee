package metrics

import "github.com/prometheus/client_golang/prometheus"

// LeadershipEndedName counts the terms of leadership that ended while the
// process ran on (internal/leadership).
const LeadershipEndedName = "seedwarden_leadership_terms_ended_total"

// leadershipCollectors are GroupLeadership's.
type leadershipCollectors struct {
	ended *prometheus.CounterVec
}

func newLeadershipCollectors() leadershipCollectors {
	return leadershipCollectors{
		ended: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: LeadershipEndedName,
			Help: "Terms of leadership of this replica that ended before shutdown, by reason (lease_lost: the Lease was not renewed within the renew deadline; work_failed: the leader-only work failed and the Lease was given up). The replica stands for election again; the webhooks serve on.",
		}, []string{"reason"}),
	}
}

func (c *leadershipCollectors) register(reg prometheus.Registerer) {
	c.ended = Register(reg, c.ended)
}

// CountLeadershipEnded counts one term that ended for reason.
func (m *Recorder) CountLeadershipEnded(reason string) {
	if m == nil {
		return
	}
	m.leadership.ended.WithLabelValues(reason).Inc()
}
