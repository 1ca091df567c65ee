package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/seedwarden/seedwarden/internal/admissionjson"
)

// NamespaceDeletionValidator is the validating webhook for v1 Namespace
// DELETE (Gardener's namespace-deletion rule). A namespace may not be deleted
// while
//
//   - it belongs to a Project (the Project's spec.namespace) that is not itself
//     being deleted: namespaces of projects go away by deleting the project; or
//   - it still holds Shoots, even when its Project is being deleted (the
//     project controller deletes the namespace once the Shoots are gone).
//     Unlike Gardener, which only counts Shoots in project namespaces, this
//     holds for every namespace: deleting a namespace would delete its Shoots
//     without their clusters being torn down properly.
//
// A namespace that is already terminating (oldObject has a
// deletionTimestamp) may be deleted again: that changes nothing.
//
// Both answers come from the watch cache, so a DELETE costs no API call.
// While the cache has not synced (Synced reports false) requests fail with
// 503 rather than allow a deletion on an empty cache.
type NamespaceDeletionValidator struct {
	// Shoots counts the Shoots in a namespace (cache.Store, kept
	// incrementally from the Shoot watch).
	Shoots interface{ ShootsInNamespace(ns string) int }
	// Projects finds the Project whose spec.namespace is ns (cache.Store).
	Projects ProjectLookup
	// Synced reports whether the cache is complete; nil means always.
	Synced func() bool
	Log    logr.Logger
	// Enforce answers a deletion the rules refuse: deny, warn or dryrun.
	// A deletion judged on an unsynced cache is refused whatever it says.
	// nil: deny.
	Enforce *Enforcer
}

var _ admission.Handler = (*NamespaceDeletionValidator)(nil)

// Handle implements admission.Handler.
func (v *NamespaceDeletionValidator) Handle(_ context.Context, req admission.Request) admission.Response {
	log := v.Log.WithValues("uid", req.UID, "namespace", req.Name, "operation", req.Operation)
	fail := func(code int32, err error) admission.Response {
		logRejected(log, err, "Rejecting admission request")
		return admission.Errored(code, err)
	}

	if err := checkCoreV1Target(req, "Namespace", "namespaces"); err != nil {
		return fail(http.StatusBadRequest, err)
	}
	if req.Operation != admissionv1.Delete {
		return admission.Allowed(fmt.Sprintf("seedwarden: nothing to validate for operation %q", req.Operation))
	}
	ns := req.Name
	if ns == "" {
		return fail(http.StatusBadRequest, errors.New("seedwarden: namespace DELETE request carries no name"))
	}
	if v.Shoots == nil || v.Projects == nil {
		return fail(http.StatusInternalServerError, errors.New("seedwarden: namespace deletion validator has no cache"))
	}
	if v.Synced != nil && !v.Synced() {
		return fail(http.StatusServiceUnavailable, errors.New("seedwarden: cache has not synced yet; retry the namespace deletion later"))
	}
	if ndTerminating(req.OldObject.Raw) {
		return admission.Allowed(fmt.Sprintf("seedwarden: namespace %q is already terminating", ns))
	}

	var reasons []string
	if project, deleting, ok := v.Projects.ProjectForNamespace(ns); ok && !deleting {
		reasons = append(reasons, fmt.Sprintf("it belongs to project %q, which is not being deleted (delete the project instead)", project))
	}
	if n := v.Shoots.ShootsInNamespace(ns); n > 0 {
		reasons = append(reasons, fmt.Sprintf("it still contains %d Shoot(s)", n))
	}
	if len(reasons) > 0 {
		msg := fmt.Sprintf("deletion of namespace %q is not permitted: %s", ns, strings.Join(reasons, "; "))
		log.Info("Namespace deletion refused", "user", req.UserInfo.Username, "reason", msg, "enforcement", v.Enforce.Action())
		return v.Enforce.refuse(req, requestObject(req, "", ns, ""), msg)
	}
	return admission.Allowed(fmt.Sprintf("seedwarden: namespace %q holds no Shoots and belongs to no live project", ns))
}

// ndTerminating reports whether the namespace in oldObject has a
// deletionTimestamp. An absent or undecodable oldObject counts as not
// terminating: the checks then run, which is the safe side.
func ndTerminating(raw []byte) bool {
	ns, err := admissionjson.DecodeOldNamespace(raw)
	return err == nil && ns.DeletionTimestamp != nil
}
