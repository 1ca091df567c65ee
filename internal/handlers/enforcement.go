package handlers

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-logr/logr"
	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/seedwarden/seedwarden/internal/metrics"
	"github.com/seedwarden/seedwarden/internal/ratelog"
)

// Enforcement actions of a guard (the configuration's enforcement values;
// cmd/webhook's test holds the two sets equal).
const (
	EnforceDeny   = "deny"
	EnforceWarn   = "warn"
	EnforceDryRun = "dryrun"
)

// The event a guard in warn mode records on the object it admitted, and the
// reporting controller it names.
const (
	EventRecorderName   = "seedwarden-webhook"
	ReasonWouldBeDenied = "WouldBeDenied"
	actionAdmit         = "Admit"
)

// Events a guard in warn mode records, per guard and replica: a burst, then
// one every guardEventEvery. A flood of refused requests is counted in full
// (seedwarden_guard_refusals_total) but costs the API server a bounded
// number of Event writes; client-go's recorder also folds repeats of one
// event into a series.
const (
	guardEventBurst = 10
	guardEventEvery = 6 * time.Second
	// maxEventNote is what the events API takes in an Event's note.
	maxEventNote = 1024
)

// EventRecorder is client-go's events.EventRecorder (what
// manager.GetEventRecorder returns).
type EventRecorder interface {
	Eventf(regarding runtime.Object, related runtime.Object, eventtype, reason, action, note string, args ...any)
}

// Enforcer is what a guard does with a request its rules refuse: deny it,
// or admit it with a warning and an event (warn) or silently (dryrun). It
// is asked only with a verdict of the guard's rules, never when the guard
// cannot decide (a stale cache, an unreadable request, an authorizer that
// did not answer): those stay refused whatever the action, so that no guard
// fails open because seedwarden cannot tell. A guard calls it once its
// books look as deny leaves them (capacity: after the reservation failed,
// with a place held for the request given back), so a request admitted by
// warn or dryrun holds nothing deny would not have.
//
// A nil *Enforcer denies and counts nothing (tests, and handlers built
// without one).
type Enforcer struct {
	guard, action string
	metrics       *metrics.Recorder
	events        EventRecorder
	eventLimit    *rate.Limiter
	logs          *ratelog.Log
	log           logr.Logger
}

// NewEnforcer is guard's enforcement (the webhook's name, the guard label),
// with action EnforceDeny, EnforceWarn or EnforceDryRun ("" is deny). m and
// events may be nil (no metrics; no events, as in --landscape mode).
func NewEnforcer(guard, action string, m *metrics.Recorder, events EventRecorder, log logr.Logger) *Enforcer {
	if action == "" {
		action = EnforceDeny
	}
	return &Enforcer{
		guard: guard, action: action, metrics: m, events: events, log: log,
		eventLimit: rate.NewLimiter(rate.Every(guardEventEvery), guardEventBurst),
		logs:       ratelog.New(ratelog.DefaultRate, ratelog.DefaultBurst),
	}
}

// Action is the guard's action ("deny" for a nil Enforcer).
func (e *Enforcer) Action() string {
	if e == nil {
		return EnforceDeny
	}
	return e.action
}

// refuse answers req, which the guard's rules refuse for message (what deny
// tells the user), as the guard's action says. obj is what an event is
// recorded on.
func (e *Enforcer) refuse(req admission.Request, obj runtime.Object, message string) admission.Response {
	return e.refuseAs(e.Action(), req, obj, message)
}

// refuseAs is refuse with another action than the guard's (a resource-size
// limit with an enforcement of its own).
func (e *Enforcer) refuseAs(action string, req admission.Request, obj runtime.Object, message string) admission.Response {
	if e == nil {
		return admission.Denied(message)
	}
	e.metrics.ObserveGuardRefusal(e.guard, action)
	what := strings.TrimPrefix(message, "seedwarden: ")
	if action != EnforceWarn && action != EnforceDryRun {
		return admission.Denied(message)
	}
	e.logs.Info(e.log, "Admitted a request the guard refuses", "enforcement", action, "uid", req.UID, "operation", req.Operation,
		"kind", req.Kind.Kind, "namespace", req.Namespace, "name", req.Name, "user", req.UserInfo.Username, "reason", what)
	if action == EnforceDryRun {
		return admission.Allowed("seedwarden: admitted (enforcement dryrun)")
	}
	e.record(req, obj, what)
	return admission.Allowed("seedwarden: admitted (enforcement warn)").
		WithWarnings(warning(fmt.Sprintf("seedwarden: %s (admitted: %s enforcement is warn; deny would refuse this request)", what, e.guard)))
}

// record records the warn event on obj, within the guard's event budget. A
// dry-run request records nothing: it changes nothing, and the webhooks are
// registered without side effects on dry runs.
func (e *Enforcer) record(req admission.Request, obj runtime.Object, what string) {
	if e.events == nil || obj == nil || (req.DryRun != nil && *req.DryRun) || !e.eventLimit.Allow() {
		return
	}
	note := fmt.Sprintf("%s %s admitted although %s would deny it (enforcement warn): %s", req.Operation, strings.ToLower(req.Kind.Kind), e.guard, what)
	e.events.Eventf(obj, nil, corev1.EventTypeWarning, ReasonWouldBeDenied, actionAdmit, "%s", truncateNote(warning(note)))
}

// truncateNote cuts an event's note to what the events API accepts.
func truncateNote(s string) string {
	if len(s) <= maxEventNote {
		return s
	}
	cut := maxEventNote - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// requestObject is the object a request is about, as an event's regarding
// object: its kind, namespace, name and (where the guard read it) uid.
func requestObject(req admission.Request, namespace, name string, uid types.UID) runtime.Object {
	return &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: schema.GroupVersion{Group: req.Kind.Group, Version: req.Kind.Version}.String(), Kind: req.Kind.Kind},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: uid},
	}
}
