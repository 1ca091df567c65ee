// Package handlers holds seedwarden's admission handlers, one per webhook. They
// are thin: decode the request (internal/admissionjson), ask the decision
// logic, write the response.
package handlers

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/seedwarden/seedwarden/internal/admissionjson"
	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/metrics"
	"github.com/seedwarden/seedwarden/internal/placement"
	"github.com/seedwarden/seedwarden/internal/placementtoken"
)

// UnschedulableWarningPrefix starts the admission warning of a Shoot no seed fits.
const UnschedulableWarningPrefix = "seedwarden: no seed fits this Shoot; it stays pending: "

// AnnouncedWarningPrefix starts the admission warning naming the seed a Shoot
// will be bound to (placement mode "binding"), followed by the quoted seed.
const AnnouncedWarningPrefix = "seedwarden: will be scheduled to seed "

// UnreservedWarningPrefix starts the admission warning of a Shoot admitted
// without a seed because a limit on live reservations was reached.
const UnreservedWarningPrefix = "seedwarden: no place reserved: "

// ScoresWarningPrefix starts the admission warning explaining a scored
// placement (a scoring profile is configured): placement.Decision's
// ScoreSummary, the chosen seed and the runners-up with each scorer's score
// and weight. A warning of its own, so that the one announcing the seed
// stays exactly as without a profile.
const ScoresWarningPrefix = "seedwarden: seed scores: "

// selfHostedWarning is the admission warning (and allowed message) for a
// self-hosted Shoot, with the name of its control-plane worker pool.
const selfHostedWarning = "seedwarden: self-hosted Shoot (worker pool %q has controlPlane): not scheduled to a seed"

// maxWarningRunes bounds one warning. The API server keeps warnings whole up
// to 4096 runes in total per request (then cuts each to 256), so a longer one
// would only be cut less predictably by it.
const maxWarningRunes = 4096

// Placer decides where a Shoot goes (seedreserve.ClusterPlacer over the
// cache in production).
type Placer interface {
	// Place decides for shoot; reservationKey == "" means dry-run (reserve
	// nothing). It may reserve through the API server
	// (seedreserve.ClusterPlacer), so it takes the request's context.
	// unreserved (a *cache.LimitError) says a schedulable decision holds no
	// reservation: the reservation limits refused one (the mutating webhook
	// then places nothing).
	Place(ctx context.Context, shoot *api.Shoot, opts placement.Options, reservationKey, user string) (d placement.Decision, unreserved error)
}

// ShootMutator is the mutating webhook for Shoot CREATE: it sets
// spec.seedName of Shoots that have none. Self-hosted Shoots (a worker pool
// with controlPlane) are never placed nor claimed: they get a warning.
//
// With a Signer, a placement (dry runs included: the token is no side effect,
// and without it a server-side dry run would need binding permission) also
// gets the placement token annotation (placementtoken.Annotation), by which
// the validating webhooks recognise the webhook's own choice on any replica.
// A placement annotation the webhook did not just write (a user's, on a Shoot
// it skips, cannot place or places without a Signer) is removed on every
// CREATE, so a copied token never survives to the validators through this
// webhook.
//
// Requests for anything but core.gardener.cloud/v1beta1 shoots (main resource)
// are errors, because they mean the webhook configuration is wrong and that
// should be loud. Other operations than CREATE on shoots are admitted
// unchanged: placing only ever happens on CREATE, and blocking updates over a
// configuration slip would be worse than ignoring them.
type ShootMutator struct {
	Placer  Placer
	Options placement.Options
	// SchedulerName is the scheduler seedwarden acts as: Shoots naming it
	// or the default scheduler are placed (api.Claimable), and unless it is
	// the default scheduler it is written into spec.schedulerName of every
	// Shoot the webhook takes on, so a gardener-scheduler running beside
	// seedwarden leaves them alone.
	SchedulerName string
	// Announce is placement mode "binding": the chosen seed is recorded in
	// annotations (placementtoken.SeedAnnotation with a token) and a
	// warning, not in spec.seedName, and the retry controller binds it
	// through shoots/binding. gardener-apiserver refuses a CREATE that sets
	// spec.seedName unless its user may bind, so this is what works there.
	Announce bool
	// Signer signs placement tokens; nil adds none.
	Signer *placementtoken.Signer
	// Projects: a Shoot in a namespace of no known Project is placed
	// without a reservation (inProject). Nil: every namespace reserves.
	Projects ProjectLookup
	// Metrics may be nil.
	Metrics *metrics.Recorder
	Log     logr.Logger
	// StalenessGuard: beyond its bound the Shoot is admitted without a seed,
	// with a warning (see StalenessGuard). Zero: always decide.
	StalenessGuard
}

var _ admission.Handler = (*ShootMutator)(nil)

// Handle implements admission.Handler. NewMutatingHTTPHandler serves the
// same decisions without controller-runtime's decoding.
func (m *ShootMutator) Handle(ctx context.Context, req admission.Request) admission.Response {
	return m.admit(ctx, admissionjson.DecodeShootRequest(req.AdmissionRequest))
}

// admit decides and records the decision's metrics: the one entry point of
// Handle and the fast path, with the request decoded.
func (m *ShootMutator) admit(ctx context.Context, r *admissionjson.ShootRequest) admission.Response {
	start := time.Now()
	resp, result := m.decide(ctx, r)
	m.Metrics.ObserveDecision(result, string(m.Options.Strategy), time.Since(start))
	return resp
}

// logger is the request's logger, naming the Shoot once it is judged, the
// request's object before (shoot nil). Built only where something is
// logged: with zap, WithValues encodes its values at once.
func (m *ShootMutator) logger(r *admissionjson.ShootRequest, shoot *api.Shoot) logr.Logger {
	if shoot == nil {
		return m.Log.WithValues("uid", r.Request.UID, "namespace", r.Request.Namespace, "name", r.Request.Name)
	}
	return m.Log.WithValues("uid", r.Request.UID, "namespace", shoot.Namespace, "name", shootName(shoot, r))
}

// decide screens the request, then places the Shoot or admits it unchanged.
// Nothing can fail between reserving capacity and the answer: the object
// and its patch shape were read before.
func (m *ShootMutator) decide(ctx context.Context, r *admissionjson.ShootRequest) (admission.Response, string) {
	if resp, result, done := m.screen(r); done {
		return resp, result
	}
	if r.ObjectErr != nil {
		return m.fail(r, nil, http.StatusBadRequest, r.ObjectErr)
	}
	patch := newShootPatch(r.Shape)
	if len(patch.own) > 0 {
		// V(1): anyone who may create Shoots can provoke it.
		m.logger(r, r.Shoot).V(1).Info("Removing seedwarden's annotations from the request; the webhook writes its own", "annotations", patch.own)
	}
	if resp, result, skipped := m.skip(r, &patch); skipped {
		return resp, result
	}
	return m.place(ctx, r, patch)
}

// fail answers a request the webhook cannot judge.
func (m *ShootMutator) fail(r *admissionjson.ShootRequest, shoot *api.Shoot, code int32, err error) (admission.Response, string) {
	if code < http.StatusInternalServerError {
		logRejected(m.logger(r, shoot), err, "Rejecting admission request")
	} else {
		m.logger(r, shoot).Error(err, "Rejecting admission request")
	}
	return admission.Errored(code, err), metrics.ResultError
}

// screen answers, before the object is looked at, requests there is nothing
// to place for (done): the wrong target, not a CREATE, no UID.
func (m *ShootMutator) screen(r *admissionjson.ShootRequest) (resp admission.Response, result string, done bool) {
	if err := checkTarget(r); err != nil {
		resp, result = m.fail(r, nil, http.StatusBadRequest, err)
		return resp, result, true
	}
	if r.Request.Operation == admissionv1.Update {
		resp, result = m.revertOwnAnnotations(r)
		return resp, result, true
	}
	if r.Request.Operation != admissionv1.Create {
		return notACreate(r), metrics.ResultSkipped, true
	}
	if r.Request.UID == "" {
		// The reservation is keyed by the UID, and the API server rejects a
		// response whose UID does not match its request anyway.
		resp, result = m.fail(r, nil, http.StatusBadRequest, fmt.Errorf("seedwarden: admission request has no uid"))
		return resp, result, true
	}
	return admission.Response{}, "", false
}

func notACreate(r *admissionjson.ShootRequest) admission.Response {
	return admission.Allowed(fmt.Sprintf("seedwarden: not a create (operation %q); nothing to place", r.Request.Operation))
}

// revertOwnAnnotations answers an UPDATE: seedwarden's own annotations
// (reservation key, placement token, announced seed) are its alone, so what
// the request adds or changes of them is undone; anything else passes.
func (m *ShootMutator) revertOwnAnnotations(r *admissionjson.ShootRequest) (admission.Response, string) {
	if r.ObjectErr != nil {
		return m.fail(r, nil, http.StatusBadRequest, r.ObjectErr)
	}
	if len(r.OwnChanges) == 0 {
		return notACreate(r), metrics.ResultSkipped
	}
	keys := make([]string, len(r.OwnChanges))
	for i, c := range r.OwnChanges {
		keys[i] = c.Key
	}
	m.logger(r, nil).V(1).Info("Reverting seedwarden's annotations an update writes", "annotations", keys, "user", r.Request.UserInfo.Username)
	msg := fmt.Sprintf("seedwarden: annotations %s are written by seedwarden only; the change is undone", strings.Join(keys, ", "))
	return admission.Patched(msg, revertOwnAnnotations(r.OwnChanges)...).WithWarnings(warning(msg)), metrics.ResultSkipped
}

// skip admits unchanged (skipped) the Shoots that are not for this webhook
// to place: with a seed, self-hosted, of another scheduler. Otherwise it
// sets the schedulerName claim on patch where one is needed.
func (m *ShootMutator) skip(r *admissionjson.ShootRequest, patch *shootPatch) (resp admission.Response, result string, skipped bool) {
	shoot := r.Shoot
	if s := ptr.Deref(shoot.Spec.SeedName, ""); s != "" {
		if m.Log.V(2).Enabled() {
			m.logger(r, shoot).V(2).Info("Shoot already has a seed", "seed", s)
		}
		return patch.unchanged(fmt.Sprintf("seedwarden: spec.seedName already set to %q", s)), metrics.ResultSkipped, true
	}
	if pool, ok := api.SelfHostedPool(shoot); ok {
		// Its control plane runs in its own cluster: no scheduler places it
		// (Gardener's API refuses a seedName for it), so it is not claimed.
		if m.Log.V(1).Enabled() {
			m.logger(r, shoot).V(1).Info("Self-hosted Shoot; not placing it", "pool", pool)
		}
		msg := warning(fmt.Sprintf(selfHostedWarning, pool))
		return patch.unchanged(msg).WithWarnings(msg), metrics.ResultSkipped, true
	}
	if !api.Claimable(shoot, m.SchedulerName) {
		s := ptr.Deref(shoot.Spec.SchedulerName, "")
		if m.Log.V(2).Enabled() {
			m.logger(r, shoot).V(2).Info("Shoot belongs to another scheduler", "schedulerName", s)
		}
		return patch.unchanged(fmt.Sprintf("seedwarden: spec.schedulerName %q is not ours (%q)", s, m.SchedulerName)), metrics.ResultSkipped, true
	}
	// From here the Shoot is ours to place, now or by the retry controller.
	if api.NeedsClaim(shoot, m.SchedulerName) {
		patch.claim = m.SchedulerName
	}
	return admission.Response{}, "", false
}

// place decides and reserves (nothing for a dry run), and answers with the
// placement or, when nothing fits or the cache is stale, without one.
func (m *ShootMutator) place(ctx context.Context, r *admissionjson.ShootRequest, patch shootPatch) (admission.Response, string) {
	shoot := r.Shoot
	if err := ctx.Err(); err != nil {
		return m.fail(r, shoot, http.StatusServiceUnavailable, fmt.Errorf("seedwarden: request abandoned before placement: %w", err))
	}
	if m.Placer == nil {
		return m.fail(r, shoot, http.StatusInternalServerError, fmt.Errorf("seedwarden: no placer configured"))
	}

	dryRun := r.Request.DryRun != nil && *r.Request.DryRun
	if d, stale := m.StaleBeyond(time.Now()); stale {
		m.logger(r, shoot).Info("Placement cache is stale; admitting the Shoot without a seed", "staleFor", d.String(), "maxStaleness", m.MaxStaleness.String(), "dryRun", dryRun)
		return patch.unchanged("seedwarden: the placement cache is stale; nothing placed").
			WithWarnings(warning(fmt.Sprintf("%s (watch broken for %s); the Shoot is admitted without a seed and stays pending",
				StaleCacheWarningPrefix, d.Round(time.Second)))), metrics.ResultUnschedulable
	}
	key := string(r.Request.UID)
	if dryRun || !inProject(m.Projects, shoot.Namespace) {
		key = ""
	}
	d, unreserved := m.Placer.Place(ctx, shoot, m.Options, key, r.Request.UserInfo.Username)

	if !d.Schedulable() {
		m.logger(r, shoot).Info("No seed fits Shoot; admitting it unscheduled", "step", d.Step, "message", d.Message, "dryRun", dryRun)
		return patch.unchanged("seedwarden: no seed fits").
			WithWarnings(warning(UnschedulableWarningPrefix + d.Summary())), metrics.ResultUnschedulable
	}
	if unreserved != nil {
		// Placed without a reservation, concurrent placements could
		// overfill the seed. Admitted without a seed instead, the Shoot is
		// placed by the retry controller, one at a time through the
		// binding and its capacity check. V(1): a flood of forged reviews
		// must not flood the log too; seedwarden_reservations_refused_total
		// counts them.
		m.logger(r, shoot).V(1).Info("No place reserved; admitting the Shoot without a seed", "seed", d.Seed, "reason", unreserved.Error())
		return patch.unchanged("seedwarden: no place reserved").
			WithWarnings(warning(fmt.Sprintf("%s%v; the Shoot is admitted without a seed and the retry controller places it", UnreservedWarningPrefix, unreserved))), metrics.ResultUnschedulable
	}

	return m.placed(r, patch, d, key, dryRun), metrics.ResultScheduled
}

// placed is the answer for a Shoot placed on d.Seed (reserved under key, ""
// for none): the seed in spec.seedName or announced, with its token.
func (m *ShootMutator) placed(r *admissionjson.ShootRequest, patch shootPatch, d placement.Decision, key string, dryRun bool) admission.Response {
	shoot := r.Shoot
	token := ""
	if m.Signer != nil {
		// The name as the object has it: empty for generateName, which the
		// validating webhook's verification allows for. The nonce makes the
		// token single-use (placementtoken.Signer.Redeem).
		token = m.Signer.SignRequest(placementtoken.Subject{
			Namespace: shoot.Namespace, Name: shoot.Name, GenerateName: shoot.GenerateName, Seed: d.Seed, DryRun: dryRun,
		}, string(r.Request.UID))
	}
	if m.Log.V(1).Enabled() {
		m.logger(r, shoot).V(1).Info("Placed Shoot", "seed", d.Seed, "tied", d.Tied, "usage", d.Usage, "dryRun", dryRun)
	}
	var warnings []string
	if summary := d.ScoreSummary(); summary != "" {
		warnings = append(warnings, warning(ScoresWarningPrefix+summary))
	}
	ops := patch.patches(placementRecord{seed: d.Seed, reservationKey: key, token: token, announce: m.Announce})
	if m.Announce {
		return admission.Patched("seedwarden: will be scheduled to seed "+strconv.Quote(d.Seed), ops...).
			WithWarnings(append([]string{AnnouncedWarningPrefix + strconv.Quote(d.Seed)}, warnings...)...)
	}
	resp := admission.Patched("seedwarden: scheduled to seed "+strconv.Quote(d.Seed), ops...)
	if len(warnings) > 0 {
		resp = resp.WithWarnings(warnings...)
	}
	return resp
}

// checkTarget rejects requests the mutating webhook configuration should
// never send: anything but Shoots through the main resource.
func checkTarget(r *admissionjson.ShootRequest) error {
	t := admissionTarget{api.ShootGVK.Group, api.ShootGVK.Version, api.ShootGVK.Kind, api.ShootGVR.Resource, ""}
	q := r.Request
	return t.check(q.Kind, q.Resource, q.SubResource, q.Operation)
}

// warning makes s acceptable as an admission warning: the API server drops a
// warning with invalid UTF-8 or control characters (a YAML error message may
// carry newlines), and it cuts long ones.
func warning(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	if utf8.RuneCountInString(s) <= maxWarningRunes {
		return s
	}
	n := 0
	for i := range s {
		if n == maxWarningRunes-1 {
			return s[:i] + "…"
		}
		n++
	}
	return s
}

func shootName(shoot *api.Shoot, r *admissionjson.ShootRequest) string {
	switch {
	case shoot.Name != "":
		return shoot.Name
	case r.Request.Name != "":
		return r.Request.Name
	default:
		// generateName is resolved only after admission.
		return shoot.GenerateName
	}
}
