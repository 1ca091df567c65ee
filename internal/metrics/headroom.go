package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metric names of the headroom profiles (internal/headroom).
const (
	HeadroomShootsName         = "seedwarden_headroom_shoots"
	HeadroomSoftShootsName     = "seedwarden_headroom_soft_shoots"
	HeadroomAlertThresholdName = "seedwarden_headroom_alert_threshold_shoots"
	HeadroomDurationName       = "seedwarden_headroom_duration_seconds"
	HeadroomLastSuccessName    = "seedwarden_headroom_last_success_timestamp_seconds"
	HeadroomProfileLabel       = "profile"
)

// HeadroomBuckets span 100µs to 10s: one profile on a 1,000-seed landscape
// takes milliseconds; the upper buckets show a landscape outgrowing that.
var HeadroomBuckets = prometheus.ExponentialBuckets(1e-4, 4, 9)

// headroomCollectors are GroupHeadroom's.
type headroomCollectors struct {
	shoots      *prometheus.GaugeVec
	softShoots  *prometheus.GaugeVec
	threshold   *prometheus.GaugeVec
	duration    *prometheus.HistogramVec
	lastSuccess *prometheus.GaugeVec
}

func newHeadroomCollectors() headroomCollectors {
	profile := []string{HeadroomProfileLabel}
	return headroomCollectors{
		shoots: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: HeadroomShootsName,
			Help: "How many more Shoots like the profile's template the landscape takes right now (placed one after another by the placement rules, up to the profile's limit), as last computed.",
		}, profile),
		softShoots: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: HeadroomSoftShootsName,
			Help: "How many more Shoots like the profile's template fit with every seed held to its soft limit (placement policies: policies.softLimitPercent, the seedwarden.io/soft-limit-percent annotation), as last computed; seedwarden_headroom_shoots where no seed has a soft limit.",
		}, profile),
		threshold: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: HeadroomAlertThresholdName,
			Help: "The profile's headroom.profiles[].alertBelow: the shipped alert fires while seedwarden_headroom_shoots is below it. Absent for profiles without one.",
		}, profile),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    HeadroomDurationName,
			Help:    "Time to compute one profile's headroom.",
			Buckets: HeadroomBuckets,
		}, profile),
		lastSuccess: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: HeadroomLastSuccessName,
			Help: "When the profile's headroom was last computed, in Unix seconds.",
		}, profile),
	}
}

func (c *headroomCollectors) register(reg prometheus.Registerer) {
	c.shoots = Register(reg, c.shoots)
	c.softShoots = Register(reg, c.softShoots)
	c.threshold = Register(reg, c.threshold)
	c.duration = Register(reg, c.duration)
	c.lastSuccess = Register(reg, c.lastSuccess)
}

// SetHeadroom records a profile's headroom, computed at at in d.
func (m *Recorder) SetHeadroom(profile string, shoots int, at time.Time, d time.Duration) {
	if m == nil {
		return
	}
	m.headroom.shoots.WithLabelValues(profile).Set(float64(shoots))
	m.headroom.duration.WithLabelValues(profile).Observe(d.Seconds())
	m.headroom.lastSuccess.WithLabelValues(profile).Set(float64(at.UnixNano()) / 1e9)
}

// SetSoftHeadroom records a profile's headroom under the soft limits.
func (m *Recorder) SetSoftHeadroom(profile string, shoots int) {
	if m == nil {
		return
	}
	m.headroom.softShoots.WithLabelValues(profile).Set(float64(shoots))
}

// SetHeadroomAlertThreshold exports a profile's alertBelow.
func (m *Recorder) SetHeadroomAlertThreshold(profile string, shoots int) {
	if m == nil {
		return
	}
	m.headroom.threshold.WithLabelValues(profile).Set(float64(shoots))
}
