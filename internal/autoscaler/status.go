package autoscaler

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/autoscalingapi"
	"github.com/seedwarden/seedwarden/internal/metrics"
	"github.com/seedwarden/seedwarden/internal/seedscale"
)

// Reasons the controller adds to seedscale's.
const (
	ReasonScaledUp   = "ScaledUp"
	ReasonScaledDown = "ScaledDown"
	// dryRunPrefix starts the reason of a change dry-run did not write
	// (DryRunScaleUp, DryRunScaleDown).
	dryRunPrefix = "DryRun"

	reasonReadyForNewScale   = "ReadyForNewScale"
	reasonSucceededRescale   = "SucceededRescale"
	reasonValidMetricFound   = "ValidMetricFound"
	reasonBehaviorLimited    = "BehaviorLimited"
	reasonDesiredWithinRange = "DesiredWithinRange"
)

// Event actions (events.k8s.io/v1 requires one).
const (
	actionScale     = "Scale"
	actionRecommend = "Recommend"
)

// warningReasons are the recommendations an operator must act on.
var warningReasons = map[string]bool{
	seedscale.ReasonAtMaxReplicas:        true,
	seedscale.ReasonNewSeedsWouldNotHelp: true,
	seedscale.ReasonNoSeedModel:          true,
	seedscale.ReasonReplicasNotReady:     true,
	seedscale.ReasonBackedOff:            true,
}

// report writes the outcome into the status, the metrics and events.
func (r *Reconciler) report(ctx context.Context, sa *autoscalingapi.SeedAutoscaler, e *entry, out outcome) error {
	before := sa.DeepCopy()
	st := &sa.Status
	st.ObservedGeneration = sa.Generation
	now := metav1.NewTime(r.now())
	if out.err != nil {
		r.Metrics.CountAutoscalerError(sa.Namespace, sa.Name)
		r.reportError(sa, e, out)
	} else {
		r.reportDecision(sa, e, out, now)
	}
	if out.scaled || before.Status.Reason != sa.Status.Reason {
		// Like the events: on a change, not every sync.
		ctrl.LoggerFrom(ctx).Info("SeedAutoscaler "+sa.Status.Reason, "message", sa.Status.Message,
			"currentReplicas", sa.Status.CurrentReplicas, "desiredReplicas", sa.Status.DesiredReplicas)
	}
	return r.Client.Status().Patch(ctx, sa, client.MergeFrom(before))
}

// reportError sets the conditions an error breaks and warns once per
// reason; the replicas and metrics stay as last computed.
func (r *Reconciler) reportError(sa *autoscalingapi.SeedAutoscaler, e *entry, out outcome) {
	st := &sa.Status
	able := condition(autoscalingapi.ConditionAbleToScale, true, reasonReadyForNewScale, "the scale subresource was read")
	if !out.readScale || out.err.reason == ReasonFailedUpdateScale {
		able = condition(autoscalingapi.ConditionAbleToScale, false, out.err.reason, out.err.message)
	}
	setCondition(sa, able)
	setCondition(sa, condition(autoscalingapi.ConditionScalingActive, false, out.err.reason, out.err.message))
	if out.readScale {
		st.CurrentReplicas = out.current
	}
	st.Reason, st.Message = out.err.reason, out.err.message
	r.warnOnce(sa, e, out.err.reason, out.err.message)
}

// reportDecision fills the status from a recommendation and its decision.
func (r *Reconciler) reportDecision(sa *autoscalingapi.SeedAutoscaler, e *entry, out outcome, now metav1.Time) {
	st, rec, dec := &sa.Status, out.rec, out.decision
	st.CurrentReplicas, st.DesiredReplicas = out.current, dec.Replicas
	st.NewSeedModel = rec.ModelSource
	st.CurrentMetrics = metricStatuses(rec.Metrics)
	st.Reason, st.Message = decisionText(out)
	if out.noScaleIn != "" && !out.scaled {
		st.Message += "; " + out.noScaleIn
	}
	st.ScaleIn = out.scaleIn
	if si := out.scaleIn; si != nil && !out.scaled {
		st.Reason, st.Message = scaleInReason(si.Phase), si.Message
	}
	if out.scaled {
		st.LastScaleTime = &now
	}
	able := condition(autoscalingapi.ConditionAbleToScale, true, reasonReadyForNewScale, "the scale subresource was read")
	if out.scaled {
		able = condition(autoscalingapi.ConditionAbleToScale, true, reasonSucceededRescale, st.Message)
	}
	setCondition(sa, able)
	setCondition(sa, condition(autoscalingapi.ConditionScalingActive, true, reasonValidMetricFound, metricsComputed(len(rec.Metrics))))
	setCondition(sa, limitedCondition(out))
	r.Metrics.SetAutoscaler(sa.Namespace, sa.Name, out.current, dec.Replicas, rec.Short)
	r.Metrics.SetAutoscalerNotReady(sa.Namespace, sa.Name, rec.NotReady.Late)

	switch {
	case out.scaled:
		direction, reason := metrics.ScaleUp, ReasonScaledUp
		if dec.Replicas < out.current {
			direction, reason = metrics.ScaleDown, ReasonScaledDown
		}
		r.Metrics.CountAutoscalerScale(sa.Namespace, sa.Name, direction)
		r.Recorder.Eventf(sa, nil, corev1.EventTypeNormal, reason, actionScale, "%s", st.Message)
	case out.scaleIn != nil && out.scaleIn.Phase == autoscalingapi.ScaleInDryRun:
		if key := ReasonDryRunScaleIn + "/" + out.scaleIn.Replica; key != e.lastDryRun {
			e.lastDryRun = key
			r.Recorder.Eventf(sa, nil, corev1.EventTypeNormal, ReasonDryRunScaleIn, actionRecommend, "%s", out.scaleIn.Message)
		}
	case out.dryRun && dec.Replicas != out.current:
		if key := st.Reason + "/" + strconv.Itoa(int(dec.Replicas)); key != e.lastDryRun {
			e.lastDryRun = key
			r.Recorder.Eventf(sa, nil, corev1.EventTypeNormal, st.Reason, actionRecommend, "%s", st.Message)
		}
	default:
		e.lastDryRun = ""
	}
	if warningReasons[rec.Reason] {
		r.warnOnce(sa, e, rec.Reason, rec.Message)
	} else {
		e.lastWarning = ""
	}
}

// warnOnce records a warning unless the last one had the same reason.
func (r *Reconciler) warnOnce(sa *autoscalingapi.SeedAutoscaler, e *entry, reason, message string) {
	if e.lastWarning == reason {
		return
	}
	e.lastWarning = reason
	r.Recorder.Eventf(sa, nil, corev1.EventTypeWarning, reason, actionRecommend, "%s", message)
}

// decisionText is the status reason and message: what was done, then
// seedscale's explanation, and what held the replicas back.
func decisionText(out outcome) (string, string) {
	rec, dec := out.rec, out.decision
	reason, msg := rec.Reason, rec.Message
	if dec.Replicas != rec.Desired && dec.Limited != "" {
		msg = fmt.Sprintf("%s; held at %d by the %s", msg, dec.Replicas, dec.Limited)
	}
	if dec.Replicas == out.current {
		return reason, msg
	}
	up := dec.Replicas > out.current
	switch {
	case out.scaled && up:
		reason = ReasonScaledUp
	case out.scaled:
		reason = ReasonScaledDown
	case up:
		reason = dryRunPrefix + seedscale.ReasonScaleUp
	default:
		reason = dryRunPrefix + seedscale.ReasonScaleDown
	}
	if !out.scaled {
		msg = fmt.Sprintf("dry run, spec.replicas stays %d: %s", out.current, msg)
	}
	return reason, msg
}

// limitedCondition: at maxReplicas and short, or held back by behavior.
func limitedCondition(out outcome) metav1.Condition {
	rec, dec := out.rec, out.decision
	switch {
	case rec.Reason == seedscale.ReasonReplicasNotReady || rec.Reason == seedscale.ReasonBackedOff:
		return condition(autoscalingapi.ConditionScalingLimited, true, rec.Reason, rec.Message)
	case rec.Short:
		return condition(autoscalingapi.ConditionScalingLimited, true, seedscale.ReasonAtMaxReplicas, rec.Message)
	case rec.Reason == seedscale.ReasonNoSeedModel:
		return condition(autoscalingapi.ConditionScalingLimited, true, seedscale.ReasonNoSeedModel, rec.Message)
	case dec.Replicas != rec.Desired && dec.Limited != "":
		return condition(autoscalingapi.ConditionScalingLimited, true, reasonBehaviorLimited,
			fmt.Sprintf("%d replicas recommended, %d allowed by the %s", rec.Desired, dec.Replicas, dec.Limited))
	}
	return condition(autoscalingapi.ConditionScalingLimited, false, reasonDesiredWithinRange, "the desired replicas are within minReplicas and maxReplicas")
}

// metricsComputed says how many metrics the replicas come from.
func metricsComputed(n int) string {
	if n == 1 {
		return "the replicas are computed from the one metric"
	}
	return "the replicas are computed from " + strconv.Itoa(n) + " metrics"
}

func metricStatuses(ms []seedscale.MetricResult) []autoscalingapi.MetricStatus {
	out := make([]autoscalingapi.MetricStatus, len(ms))
	for i, m := range ms {
		out[i] = autoscalingapi.MetricStatus{
			Type: m.Type, Name: m.Name, Current: m.Current, DesiredReplicas: m.Replicas, Met: m.Met, Reason: m.WouldNotHelp,
			ReasonCode: string(m.WouldNotHelpCode),
		}
	}
	return out
}

func condition(typ string, ok bool, reason, message string) metav1.Condition {
	status := metav1.ConditionFalse
	if ok {
		status = metav1.ConditionTrue
	}
	return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: truncate(message)}
}

func setCondition(sa *autoscalingapi.SeedAutoscaler, c metav1.Condition) {
	c.ObservedGeneration = sa.Generation
	meta.SetStatusCondition(&sa.Status.Conditions, c)
}

// maxConditionMessage is metav1.Condition's limit on message.
const maxConditionMessage = 32768

func truncate(s string) string {
	if len(s) <= maxConditionMessage {
		return s
	}
	// ToValidUTF8 drops a character the cut split.
	return strings.ToValidUTF8(s[:maxConditionMessage-3], "") + "..."
}
