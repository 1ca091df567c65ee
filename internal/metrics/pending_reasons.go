package metrics

import (
	"cmp"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// PendingUnschedulableName counts the pending Shoots whose last attempt
// found no seed by reason code and by the Shoot's provider and region.
const PendingUnschedulableName = "seedwarden_pending_shoots_unschedulable"

// MaxPendingRegions bounds the (provider, region) pairs of
// seedwarden_pending_shoots_unschedulable: further pairs count as
// provider and region "other". Regions come from CloudProfiles, so a
// landscape has few; the bound keeps a forged or odd one from adding series.
const MaxPendingRegions = 200

// PendingReasonKey is one series of PendingUnschedulableName.
type PendingReasonKey struct {
	Reason, Provider, Region string
}

// pendingReasons reads the counts at scrape time from the function the
// controller sets, so a Shoot that is placed or gone leaves no series behind.
type pendingReasons struct {
	desc *prometheus.Desc
	read atomic.Pointer[func() map[PendingReasonKey]int]
}

func newPendingReasons() *pendingReasons {
	return &pendingReasons{desc: prometheus.NewDesc(PendingUnschedulableName,
		"Pending Shoots whose last placement attempt found no seed, by reason code (docs/placement.md, \"Reason codes\"; a Shoot counts once under each code its decision gives, so the sum over reasons exceeds the Shoots) and by the Shoot's provider type and region; only on the replica that runs the retry controller.",
		[]string{"reason", "provider", "region"}, nil)}
}

func (p *pendingReasons) Describe(ch chan<- *prometheus.Desc) { ch <- p.desc }

func (p *pendingReasons) Collect(ch chan<- prometheus.Metric) {
	f := p.read.Load()
	if f == nil {
		return
	}
	for k, n := range boundPendingRegions((*f)()) {
		ch <- prometheus.MustNewConstMetric(p.desc, prometheus.GaugeValue, float64(n), k.Reason, k.Provider, k.Region)
	}
}

// boundPendingRegions folds the pairs past MaxPendingRegions (by name, so
// the same pairs stay) into provider and region "other".
func boundPendingRegions(counts map[PendingReasonKey]int) map[PendingReasonKey]int {
	pairs := map[[2]string]bool{}
	for k := range counts {
		pairs[[2]string{k.Provider, k.Region}] = true
	}
	if len(pairs) <= MaxPendingRegions {
		return counts
	}
	keep := make([][2]string, 0, len(pairs))
	for p := range pairs {
		keep = append(keep, p)
	}
	slices.SortFunc(keep, func(a, b [2]string) int { return cmp.Or(strings.Compare(a[0], b[0]), strings.Compare(a[1], b[1])) })
	kept := map[[2]string]bool{}
	for _, p := range keep[:MaxPendingRegions] {
		kept[p] = true
	}
	out := make(map[PendingReasonKey]int, len(counts))
	for k, n := range counts {
		if !kept[[2]string{k.Provider, k.Region}] {
			k.Provider, k.Region = OtherLabelValue, OtherLabelValue
		}
		out[k] += n
	}
	return out
}

// SetPendingReasons makes seedwarden_pending_shoots_unschedulable read
// counts at each scrape; counts must be safe for concurrent use; nil
// reads none (a replica that stopped leading).
func (m *Recorder) SetPendingReasons(counts func() map[PendingReasonKey]int) {
	if m == nil {
		return
	}
	if counts == nil {
		m.pending.reasons.read.Store(nil)
		return
	}
	m.pending.reasons.read.Store(&counts)
}
