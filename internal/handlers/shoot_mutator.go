// Package handlers holds seedwarden's admission handlers, one per webhook. They
// are thin: decode the request, ask the decision logic, write the response.
package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/go-logr/logr"
	"gomodules.xyz/jsonpatch/v2"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	kjson "sigs.k8s.io/json"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/metrics"
	"github.com/seedwarden/seedwarden/internal/placement"
	"github.com/seedwarden/seedwarden/internal/placementtoken"
)

// UnschedulableWarningPrefix starts the admission warning of a Shoot no seed fits.
const UnschedulableWarningPrefix = "seedwarden: no seed fits this Shoot; it stays pending: "

// AnnouncedWarningPrefix starts the admission warning naming the seed a Shoot
// will be bound to (placement mode "binding"), followed by the quoted seed.
const AnnouncedWarningPrefix = "seedwarden: will be scheduled to seed "

// selfHostedWarning is the admission warning (and allowed message) for a
// self-hosted Shoot, with the name of its control-plane worker pool.
const selfHostedWarning = "seedwarden: self-hosted Shoot (worker pool %q has controlPlane): not scheduled to a seed"

// maxWarningRunes bounds one warning. The API server keeps warnings whole up
// to 4096 runes in total per request (then cuts each to 256), so a longer one
// would only be cut less predictably by it.
const maxWarningRunes = 4096

// Placer decides where a Shoot goes (ClusterPlacer over the cache in production).
type Placer interface {
	// Place decides for shoot; reservationKey == "" means dry-run (reserve
	// nothing). It may reserve through the API server (ClusterPlacer), so
	// it takes the request's context.
	Place(ctx context.Context, shoot *api.Shoot, opts placement.Options, reservationKey string) placement.Decision
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
	// Metrics may be nil.
	Metrics *metrics.Metrics
	Log     logr.Logger
	// StalenessGuard: beyond its bound the Shoot is admitted without a seed,
	// with a warning (see StalenessGuard). Zero: always decide.
	StalenessGuard
}

var _ admission.Handler = (*ShootMutator)(nil)

var shootGVK = struct{ group, version, kind, resource string }{
	group: api.GroupName, version: api.SchemeGroupVersion.Version, kind: "Shoot", resource: "shoots",
}

// Handle implements admission.Handler. NewMutatingHTTPHandler serves the
// same decisions without controller-runtime's decoding.
func (m *ShootMutator) Handle(ctx context.Context, req admission.Request) admission.Response {
	return m.admit(ctx, &shootRequest{
		UID: req.UID, Kind: req.Kind, Resource: req.Resource, SubResource: req.SubResource,
		Name: req.Name, Namespace: req.Namespace, Operation: req.Operation, DryRun: req.DryRun,
		raw: req.Object.Raw,
	})
}

// shootRequest is what the mutating decision reads of an admission request.
// Handle fills it from controller-runtime's admission.Request and leaves the
// object raw (decoded only once the request turns out to be a CREATE); the
// fast path (fastpath.go) hands over the object it decoded with the review.
type shootRequest struct {
	UID             types.UID
	Kind            metav1.GroupVersionKind
	Resource        metav1.GroupVersionResource
	SubResource     string
	Name, Namespace string
	Operation       admissionv1.Operation
	DryRun          *bool

	// raw is the object's JSON: the object itself until decoded is set,
	// and for the rare ambiguous object (see inspectObject).
	raw []byte
	// decoded: object holds the decoded object (nil when absent or null)
	// and ambiguous what inspectObject said of raw.
	decoded   bool
	object    *shootObject
	ambiguous bool
}

// admit decides and records the decision's metrics: the one entry point of
// Handle and the fast path.
func (m *ShootMutator) admit(ctx context.Context, r *shootRequest) admission.Response {
	start := time.Now()
	resp, result := m.decide(ctx, r)
	m.Metrics.ObserveDecision(result, string(m.Options.Strategy), time.Since(start))
	return resp
}

// logger is the request's logger. Built only where something is logged:
// with zap, WithValues encodes its values at once.
func (m *ShootMutator) logger(r *shootRequest, shoot *api.Shoot) logr.Logger {
	if shoot == nil {
		return m.Log.WithValues("uid", r.UID, "namespace", r.Namespace, "name", r.Name)
	}
	return m.Log.WithValues("uid", r.UID, "namespace", shoot.Namespace, "name", shootName(shoot, r))
}

func (m *ShootMutator) decide(ctx context.Context, r *shootRequest) (admission.Response, string) {
	if resp, result, done := m.screen(r); done {
		return resp, result
	}
	shoot, shape, err := m.readShoot(r)
	if err != nil {
		return m.fail(r, nil, http.StatusBadRequest, err)
	}
	if resp, result, skipped := m.skip(r, shoot, &shape); skipped {
		return resp, result
	}
	return m.place(ctx, r, shoot, shape)
}

// fail answers a request the webhook cannot judge.
func (m *ShootMutator) fail(r *shootRequest, shoot *api.Shoot, code int32, err error) (admission.Response, string) {
	m.logger(r, shoot).Error(err, "Rejecting admission request")
	return admission.Errored(code, err), metrics.ResultError
}

// screen answers, before the object is read, requests there is nothing to
// place for (done): the wrong target, not a CREATE, no UID.
func (m *ShootMutator) screen(r *shootRequest) (resp admission.Response, result string, done bool) {
	if err := checkTarget(r); err != nil {
		resp, result = m.fail(r, nil, http.StatusBadRequest, err)
		return resp, result, true
	}
	if r.Operation != admissionv1.Create {
		return admission.Allowed(fmt.Sprintf("seedwarden: not a create (operation %q); nothing to place", r.Operation)), metrics.ResultSkipped, true
	}
	if r.UID == "" {
		// The reservation is keyed by the UID, and the API server rejects a
		// response whose UID does not match its request anyway.
		resp, result = m.fail(r, nil, http.StatusBadRequest, fmt.Errorf("seedwarden: admission request has no uid"))
		return resp, result, true
	}
	return admission.Response{}, "", false
}

// readShoot decodes the object and computes the patch shape, before
// placing, so that nothing can fail between reserving capacity and
// admitting the Shoot.
func (m *ShootMutator) readShoot(r *shootRequest) (*api.Shoot, patchShape, error) {
	if !r.decoded {
		obj, err := decodeShootObject(r.raw)
		if err != nil {
			return nil, patchShape{}, err
		}
		r.object, r.ambiguous, r.decoded = obj, inspectObject(r.raw), true
	}
	if err := r.object.check(); err != nil {
		return nil, patchShape{}, err
	}
	shape := r.object.shape()
	if r.ambiguous {
		var err error
		if shape, err = lastWinsShape(r.raw); err != nil {
			// Unreachable: the object decoded from the same bytes.
			return nil, patchShape{}, err
		}
	}
	shoot := r.object.toShoot()
	// The API server fills in the namespace from the URL before admission;
	// this only guards placement (project, NamespacedCloudProfile lookups)
	// against an object that omits it.
	if shoot.Namespace == "" {
		shoot.Namespace = r.Namespace
	}
	if shape.hasPlacementToken {
		m.logger(r, shoot).Info("Removing a placement annotation the webhook did not write", "annotation", placementtoken.Annotation)
	}
	return shoot, shape, nil
}

// skip admits unchanged (skipped) the Shoots that are not for this webhook
// to place: with a seed, self-hosted, of another scheduler. Otherwise it
// sets the schedulerName claim on shape where one is needed.
func (m *ShootMutator) skip(r *shootRequest, shoot *api.Shoot, shape *patchShape) (resp admission.Response, result string, skipped bool) {
	if s := ptr.Deref(shoot.Spec.SeedName, ""); s != "" {
		if m.Log.V(2).Enabled() {
			m.logger(r, shoot).V(2).Info("Shoot already has a seed", "seed", s)
		}
		return shape.unchanged(fmt.Sprintf("seedwarden: spec.seedName already set to %q", s)), metrics.ResultSkipped, true
	}
	if pool, ok := api.SelfHostedPool(shoot); ok {
		// Its control plane runs in its own cluster: no scheduler places it
		// (Gardener's API refuses a seedName for it), so it is not claimed.
		if m.Log.V(1).Enabled() {
			m.logger(r, shoot).V(1).Info("Self-hosted Shoot; not placing it", "pool", pool)
		}
		msg := warning(fmt.Sprintf(selfHostedWarning, pool))
		return shape.unchanged(msg).WithWarnings(msg), metrics.ResultSkipped, true
	}
	if !api.Claimable(shoot, m.SchedulerName) {
		s := ptr.Deref(shoot.Spec.SchedulerName, "")
		if m.Log.V(2).Enabled() {
			m.logger(r, shoot).V(2).Info("Shoot belongs to another scheduler", "schedulerName", s)
		}
		return shape.unchanged(fmt.Sprintf("seedwarden: spec.schedulerName %q is not ours (%q)", s, m.SchedulerName)), metrics.ResultSkipped, true
	}
	// From here the Shoot is ours to place, now or by the retry controller.
	if api.NeedsClaim(shoot, m.SchedulerName) {
		shape.claim = m.SchedulerName
	}
	return admission.Response{}, "", false
}

// place decides and reserves (nothing for a dry run), and answers with the
// placement or, when nothing fits or the cache is stale, without one.
func (m *ShootMutator) place(ctx context.Context, r *shootRequest, shoot *api.Shoot, shape patchShape) (admission.Response, string) {
	if err := ctx.Err(); err != nil {
		return m.fail(r, shoot, http.StatusServiceUnavailable, fmt.Errorf("seedwarden: request abandoned before placement: %w", err))
	}
	if m.Placer == nil {
		return m.fail(r, shoot, http.StatusInternalServerError, fmt.Errorf("seedwarden: no placer configured"))
	}

	dryRun := r.DryRun != nil && *r.DryRun
	if d, stale := m.StaleBeyond(time.Now()); stale {
		m.logger(r, shoot).Info("Placement cache is stale; admitting the Shoot without a seed", "staleFor", d.String(), "maxStaleness", m.MaxStaleness.String(), "dryRun", dryRun)
		return shape.unchanged("seedwarden: the placement cache is stale; nothing placed").
			WithWarnings(warning(fmt.Sprintf("%s (watch broken for %s); the Shoot is admitted without a seed and stays pending",
				StaleCacheWarningPrefix, d.Round(time.Second)))), metrics.ResultUnschedulable
	}
	key := string(r.UID)
	if dryRun {
		key = ""
	}
	d := m.Placer.Place(ctx, shoot, m.Options, key)

	if !d.Schedulable() {
		m.logger(r, shoot).Info("No seed fits Shoot; admitting it unscheduled", "step", d.Step, "message", d.Message, "dryRun", dryRun)
		return shape.unchanged("seedwarden: no seed fits").
			WithWarnings(warning(UnschedulableWarningPrefix + d.Summary())), metrics.ResultUnschedulable
	}

	token := ""
	if m.Signer != nil {
		// The name as the object has it: empty for generateName, which the
		// validating webhook's verification allows for.
		token = m.Signer.Sign(placementtoken.Subject{
			Namespace: shoot.Namespace, Name: shoot.Name, GenerateName: shoot.GenerateName, Seed: d.Seed,
		})
	}
	if m.Log.V(1).Enabled() {
		m.logger(r, shoot).V(1).Info("Placed Shoot", "seed", d.Seed, "tied", d.Tied, "usage", d.Usage, "dryRun", dryRun)
	}
	ops := shape.patches(placementRecord{seed: d.Seed, reservationKey: key, token: token, announce: m.Announce})
	if m.Announce {
		return admission.Patched("seedwarden: will be scheduled to seed "+strconv.Quote(d.Seed), ops...).
			WithWarnings(AnnouncedWarningPrefix + strconv.Quote(d.Seed)), metrics.ResultScheduled
	}
	return admission.Patched("seedwarden: scheduled to seed "+strconv.Quote(d.Seed), ops...), metrics.ResultScheduled
}

// checkTarget rejects requests the mutating webhook configuration should
// never send: anything but Shoots through the main resource.
func checkTarget(r *shootRequest) error {
	t := admissionTarget{shootGVK.group, shootGVK.version, shootGVK.kind, shootGVK.resource, ""}
	return t.check(r.Kind, r.Resource, r.SubResource, r.Operation)
}

// decodeShoot decodes the admitted object. encoding/json ignores the many
// Shoot fields api.Shoot does not model. The validating webhooks use it; the
// mutating webhook decodes less (shootObject).
func decodeShoot(raw []byte) (*api.Shoot, error) {
	// A literal null would decode into an empty Shoot without error.
	if t := bytes.TrimSpace(raw); len(t) == 0 || string(t) == "null" {
		return nil, errNoObject
	}
	shoot := &api.Shoot{}
	if err := json.Unmarshal(raw, shoot); err != nil {
		return nil, fmt.Errorf("seedwarden: cannot decode object as a Shoot: %w", err)
	}
	if shoot.Kind != "" && shoot.Kind != shootGVK.kind {
		return nil, fmt.Errorf("seedwarden: object has kind %q, expected %q", shoot.Kind, shootGVK.kind)
	}
	if want := api.SchemeGroupVersion.String(); shoot.APIVersion != "" && shoot.APIVersion != want {
		return nil, fmt.Errorf("seedwarden: object has apiVersion %q, expected %q", shoot.APIVersion, want)
	}
	return shoot, nil
}

// shootObject is the admitted Shoot as the webhook reads it, decoded once and
// case-sensitively: as the API server decodes, and as JSON pointers match
// keys. Metadata, Spec and Metadata.Annotations are nil exactly when the
// member is absent or null (for an object without duplicate keys; see
// inspectObject), which is what the JSON patch needs to know. Unknown fields
// (most of a real Shoot) are skipped, not decoded.
type shootObject struct {
	APIVersion string          `json:"apiVersion"`
	Kind       string          `json:"kind"`
	Metadata   *shootMetadata  `json:"metadata"`
	Spec       *api.ShootSpec  `json:"spec"`
	Status     api.ShootStatus `json:"status"`
}

// shootMetadata is what the webhook reads of metadata.
type shootMetadata struct {
	Name         string            `json:"name"`
	GenerateName string            `json:"generateName"`
	Namespace    string            `json:"namespace"`
	Annotations  map[string]string `json:"annotations"`
}

var errNoObject = errors.New("seedwarden: admission request carries no object")

// decodeShootObject decodes the admitted object (Handle's path).
func decodeShootObject(raw []byte) (*shootObject, error) {
	// A literal null would decode into an empty Shoot without error.
	if t := bytes.TrimSpace(raw); len(t) == 0 || string(t) == "null" {
		return nil, errNoObject
	}
	obj := &shootObject{}
	if err := kjson.UnmarshalCaseSensitivePreserveInts(raw, obj); err != nil {
		return nil, fmt.Errorf("seedwarden: cannot decode object as a Shoot: %w", err)
	}
	return obj, nil
}

// check accepts a present object of the Shoot's kind and apiVersion (either
// may be left out).
func (o *shootObject) check() error {
	if o == nil {
		return errNoObject
	}
	if o.Kind != "" && o.Kind != shootGVK.kind {
		return fmt.Errorf("seedwarden: object has kind %q, expected %q", o.Kind, shootGVK.kind)
	}
	if o.APIVersion != "" && o.APIVersion != shootAPIVersion {
		return fmt.Errorf("seedwarden: object has apiVersion %q, expected %q", o.APIVersion, shootAPIVersion)
	}
	return nil
}

var shootAPIVersion = api.SchemeGroupVersion.String()

// toShoot is the Shoot placement reads.
func (o *shootObject) toShoot() *api.Shoot {
	shoot := &api.Shoot{Status: o.Status}
	shoot.APIVersion, shoot.Kind = o.APIVersion, o.Kind
	if md := o.Metadata; md != nil {
		shoot.Name, shoot.GenerateName, shoot.Namespace, shoot.Annotations = md.Name, md.GenerateName, md.Namespace, md.Annotations
	}
	if o.Spec != nil {
		shoot.Spec = *o.Spec
	}
	return shoot
}

// patchShape records which parents the placement patch can rely on. A JSON
// pointer needs its parent to exist; the API server always sends metadata
// and spec, but a patch that fails to apply fails the request, so look rather
// than assume.
type patchShape struct {
	hasSpec, hasMetadata, hasAnnotations bool
	// hasPlacementToken: metadata.annotations holds placementtoken.Annotation.
	hasPlacementToken bool
	// claim, when set, is written into spec.schedulerName (api.NeedsClaim).
	claim string
}

// shape reads the patch shape off the decoded object.
func (o *shootObject) shape() patchShape {
	s := patchShape{hasSpec: o.Spec != nil, hasMetadata: o.Metadata != nil}
	if s.hasMetadata && o.Metadata.Annotations != nil {
		s.hasAnnotations = true
		_, s.hasPlacementToken = o.Metadata.Annotations[placementtoken.Annotation]
	}
	return s
}

// lastWinsShape computes the patch shape of an ambiguous object (a duplicate
// or escaped metadata, spec or annotations key; the API server never sends
// one) the way a JSON patch sees it: exact keys, the last duplicate wins.
// Decoding into structs merges duplicates instead, so shape would be wrong.
func lastWinsShape(raw []byte) (patchShape, error) {
	var top, meta map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return patchShape{}, fmt.Errorf("seedwarden: cannot decode object: %w", err)
	}
	shape := patchShape{hasSpec: !isNull(top["spec"]), hasMetadata: !isNull(top["metadata"])}
	if shape.hasMetadata {
		if err := json.Unmarshal(top["metadata"], &meta); err != nil {
			return patchShape{}, fmt.Errorf("seedwarden: cannot decode object metadata: %w", err)
		}
		shape.hasAnnotations = !isNull(meta["annotations"])
		if shape.hasAnnotations {
			var annotations map[string]json.RawMessage
			// Not an object: the decoding refuses that, so no token either.
			if json.Unmarshal(meta["annotations"], &annotations) == nil {
				_, shape.hasPlacementToken = annotations[placementtoken.Annotation]
			}
		}
	}
	return shape, nil
}

// unchanged admits the Shoot without placing it, removing a placement token
// it carries (which the webhook did not write).
func (s patchShape) unchanged(message string) admission.Response {
	var ops []jsonpatch.JsonPatchOperation
	if s.claim != "" {
		ops = append(ops, s.specOp("schedulerName", s.claim))
	}
	if s.hasPlacementToken {
		ops = append(ops, removeTokenOp())
	}
	if len(ops) == 0 {
		return admission.Allowed(message)
	}
	return admission.Patched(message, ops...)
}

// specOp sets one member of spec, creating spec when the object has none.
func (s patchShape) specOp(member, value string) jsonpatch.JsonPatchOperation {
	if s.hasSpec {
		return jsonpatch.NewOperation("add", "/spec/"+member, value)
	}
	return jsonpatch.NewOperation("add", "/spec", map[string]string{member: value})
}

func removeTokenOp() jsonpatch.JsonPatchOperation {
	return jsonpatch.NewOperation("remove", "/metadata/annotations/"+escapeJSONPointer(placementtoken.Annotation), nil)
}

// placementRecord is what a placement writes into the Shoot.
type placementRecord struct {
	seed, reservationKey, token string
	// announce records the seed in placementtoken.SeedAnnotation instead
	// of spec.seedName (ShootMutator.Announce).
	announce bool
}

// patches writes the JSON patch directly instead of diffing a re-marshalled
// object: api.Shoot models only a few fields, so a diff would drop all the
// others. An "add" on an existing member replaces it, so an explicit
// `seedName: ""` or a user-written reservation or placement annotation is
// overwritten too. An empty reservationKey (dry-run) adds no reservation
// annotation; an empty token (no Signer) adds no placement annotation and
// removes one the object carries.
func (s patchShape) patches(p placementRecord) []jsonpatch.JsonPatchOperation {
	ops := make([]jsonpatch.JsonPatchOperation, 0, 5)
	spec := map[string]string{}
	if !p.announce {
		spec["seedName"] = p.seed
	}
	if s.claim != "" {
		spec["schedulerName"] = s.claim
	}
	switch {
	case len(spec) == 0:
	case s.hasSpec:
		for _, member := range []string{"seedName", "schedulerName"} {
			if v, ok := spec[member]; ok {
				ops = append(ops, jsonpatch.NewOperation("add", "/spec/"+member, v))
			}
		}
	default:
		ops = append(ops, jsonpatch.NewOperation("add", "/spec", spec))
	}
	annotations := map[string]string{}
	var keys []string // in a fixed order: reservation, token, seed
	if p.reservationKey != "" {
		annotations[cache.AnnotationReservation] = p.reservationKey
		keys = append(keys, cache.AnnotationReservation)
	}
	if p.token != "" {
		annotations[placementtoken.Annotation] = p.token
		keys = append(keys, placementtoken.Annotation)
	} else if s.hasPlacementToken {
		ops = append(ops, removeTokenOp())
	}
	if p.announce {
		annotations[placementtoken.SeedAnnotation] = p.seed
		keys = append(keys, placementtoken.SeedAnnotation)
	}
	if len(keys) == 0 {
		return ops
	}
	switch {
	case !s.hasMetadata:
		return append(ops, jsonpatch.NewOperation("add", "/metadata", map[string]any{"annotations": annotations}))
	case !s.hasAnnotations:
		// Absent or null: adding the whole map works for both.
		return append(ops, jsonpatch.NewOperation("add", "/metadata/annotations", annotations))
	default:
		for _, k := range keys {
			ops = append(ops, jsonpatch.NewOperation("add", "/metadata/annotations/"+escapeJSONPointer(k), annotations[k]))
		}
		return ops
	}
}

// isNull reports whether a member is absent or JSON null.
func isNull(v json.RawMessage) bool {
	return len(v) == 0 || string(v) == "null"
}

var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// escapeJSONPointer escapes one reference token (RFC 6901).
func escapeJSONPointer(s string) string { return pointerEscaper.Replace(s) }

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

func shootName(shoot *api.Shoot, r *shootRequest) string {
	switch {
	case shoot.Name != "":
		return shoot.Name
	case r.Name != "":
		return r.Name
	default:
		// generateName is resolved only after admission.
		return shoot.GenerateName
	}
}
