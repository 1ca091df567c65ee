package handlers

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/seedwarden/seedwarden/internal/admissionjson"
	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/placementtoken"
)

// What the Shoot validators (binding, capacity) share, in the order a
// request meets it: shootChangeOf screens the request and decodes it into a
// shootChange, verifyPlacement recognises the webhook's own placement, and
// denied and invalidRequest shape the answer.

// shootChangeOf is what both Shoot validators do first: refuse requests that
// are not about Shoots, let operations other than CREATE and UPDATE through,
// and decode the old and new seed. It also returns base with the request's
// identity for the validator's logs. A non-nil response ends the request.
func shootChangeOf(req admission.Request, base logr.Logger) (*shootChange, logr.Logger, *admission.Response) {
	log := requestLog(base, req)
	if err := checkShootValidationTarget(req); err != nil {
		logRejected(log, err, "Rejecting admission request")
		r := invalidRequest(err)
		return nil, log, &r
	}
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		r := admission.Allowed("seedwarden: nothing to check for operation " + string(req.Operation))
		return nil, log, &r
	}
	c, err := decodeShootChange(req)
	if err != nil {
		logRejected(log, err, "Rejecting admission request")
		r := invalidRequest(err)
		if errors.As(err, new(*admissionjson.CaseVariantError)) {
			// A well-formed request for an object we refuse: a denial, so
			// the user sees why.
			r = admission.Denied(err.Error())
		}
		return nil, log, &r
	}
	return c, log, nil
}

// requestLog is base with the request's identity, which every log line of a
// Shoot guard carries.
func requestLog(base logr.Logger, req admission.Request) logr.Logger {
	return base.WithValues("uid", req.UID, "namespace", req.Namespace, "name", req.Name, "operation", req.Operation, "subResource", req.SubResource)
}

// checkShootValidationTarget rejects requests the validating webhook
// configuration should never send: anything but Shoots through the main
// resource or the binding subresource.
func checkShootValidationTarget(req admission.Request) error {
	t := admissionTarget{api.ShootGVK.Group, api.ShootGVK.Version, api.ShootGVK.Kind, api.ShootGVR.Resource, api.SubresourceBinding}
	return t.check(req.Kind, req.Resource, req.SubResource, req.Operation)
}

// shootChange is what a Shoot request does to spec.seedName.
type shootChange struct {
	op      admissionv1.Operation
	user    string // userInfo.username of the request
	binding bool   // through the shoots/binding subresource
	dryRun  bool
	// checkOnly: the capacity webhook checks and reserves nothing (a dry
	// run, or a namespace of no known Project).
	checkOnly bool
	// shoot is the object after the request, with the namespace filled in.
	shoot *api.Shoot
	// old is the object before an UPDATE, nil on CREATE.
	old              *api.Shoot
	namespace, name  string
	oldSeed, newSeed string
	// raw and oldRaw are the objects as sent, for comparing fields api.Shoot
	// does not hold.
	raw, oldRaw []byte
}

// decodeShootChange reads a CREATE or UPDATE of a Shoot or its binding. An
// UPDATE without an old object is an error (the API server always sends it),
// so a missing one can never hide the seed being changed.
func decodeShootChange(req admission.Request) (*shootChange, error) {
	shoot, err := admissionjson.DecodeShoot(req.Object.Raw)
	if err != nil {
		return nil, err
	}
	if shoot.Namespace == "" {
		shoot.Namespace = req.Namespace
	}
	c := &shootChange{
		op:        req.Operation,
		user:      req.UserInfo.Username,
		binding:   req.SubResource == api.SubresourceBinding,
		dryRun:    req.DryRun != nil && *req.DryRun,
		shoot:     shoot,
		namespace: shoot.Namespace,
		name:      objectName(shoot.Name, req.Name),
		newSeed:   ptr.Deref(shoot.Spec.SeedName, ""),
		raw:       req.Object.Raw,
	}
	if req.Operation == admissionv1.Update {
		old, err := admissionjson.DecodeOldShoot(req.OldObject.Raw)
		if err != nil {
			return nil, err
		}
		c.old, c.oldRaw = old, req.OldObject.Raw
		c.oldSeed = ptr.Deref(old.Spec.SeedName, "")
	}
	return c, nil
}

func (c *shootChange) key() string { return c.namespace + "/" + c.name }

// object is the Shoot as an event's regarding object.
func (c *shootChange) object(req admission.Request) runtime.Object {
	return requestObject(req, c.namespace, c.name, c.shoot.UID)
}

// objectName is the object's name, else the request's. Both are empty only
// for a CREATE with generateName before the name is generated, which a
// validating webhook does not see.
func objectName(object, request string) string {
	if object != "" {
		return object
	}
	return request
}

// errNoToken: the Shoot carries no placement annotation.
var errNoToken = errors.New("no " + placementtoken.Annotation + " annotation")

// verifyPlacement checks that the Shoot is the webhook's own placement on
// seed: a CREATE through the main resource whose placement token verifies
// for its namespace, name, generateName and seed, and that no other Shoot
// used (placementtoken.Signer.Redeem: a generateName token verifies for
// every generated name). Only a CREATE can be: the mutating webhook places
// nothing else, and a token on an UPDATE or binding could only have been
// copied. The binding and capacity webhooks both redeem the token of one
// CREATE, for the same Shoot (uid and generated name), so both accept it.
func verifyPlacement(signer *placementtoken.Signer, c *shootChange) error {
	if c.op != admissionv1.Create || c.binding {
		return errors.New("placement tokens count only when a Shoot is created")
	}
	token := c.shoot.Annotations[placementtoken.Annotation]
	if token == "" {
		return errNoToken
	}
	if signer == nil {
		return errors.New("no placement key is configured")
	}
	return signer.Redeem(token, placementtoken.Subject{
		Namespace:    c.namespace,
		Name:         c.name,
		GenerateName: c.shoot.GenerateName,
		Seed:         c.newSeed,
		DryRun:       c.dryRun,
	}, placementtoken.Holder{UID: string(c.shoot.UID), Namespace: c.namespace, Name: c.name})
}

// denied is a policy denial the user sees: allowed=false, code 403, the
// message as given. Validators deny (rather than error) whenever the answer
// is a decision, including "cannot decide" (fail closed), so the message
// reaches the user unchanged.
func denied(format string, args ...any) admission.Response {
	return admission.Denied(fmt.Sprintf(format, args...))
}

// invalidRequest is an error response for a request the webhook cannot read.
func invalidRequest(err error) admission.Response {
	return admission.Errored(http.StatusBadRequest, err)
}

// statusMessage returns the response's message, for logs.
func statusMessage(r admission.Response) string {
	if r.Result == nil {
		return ""
	}
	return r.Result.Message
}
