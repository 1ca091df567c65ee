package handlers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/seedwarden/seedwarden/internal/admissionjson"
	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/authz"
	"github.com/seedwarden/seedwarden/internal/placement"
	"github.com/seedwarden/seedwarden/internal/placementtoken"
)

// SnapshotSource provides the landscape (the cache.Store in production).
type SnapshotSource interface {
	Snapshot() *placement.Snapshot
}

// Authorizer answers whether a user holds BindingPermission for the Shoot
// name in namespace: authz.SARAuthorizer against a cluster,
// SubjectsAuthorizer in landscape mode.
type Authorizer interface {
	// Allowed returns the decision and the authorizer's reason for it. An
	// error means no decision was made; callers fail closed.
	Allowed(ctx context.Context, user authenticationv1.UserInfo, namespace, name string) (allowed bool, reason string, err error)
}

// BindingPermission is what a user needs to choose a seed by hand: update on
// shoots/binding, as in Gardener.
var BindingPermission = authz.Permission{Verb: "update", Group: api.ShootGVR.Group, Resource: api.ShootGVR.Resource, Subresource: api.SubresourceBinding}

// selfHostedSeedName is Gardener's validation message for a spec.seedName on
// a self-hosted Shoot.
const selfHostedSeedName = "cannot set seedName for self-hosted shoots"

// ShootBindingValidator is the validating webhook guarding spec.seedName on
// shoots CREATE/UPDATE and the shoots/binding subresource, following
// Gardener's ShootValidator:
//
//   - Through the main resource a seed may only be set on CREATE; on UPDATE
//     setting or changing it needs shoots/binding (but see
//     BindThroughShoots), and unsetting it is never allowed. A binding must
//     change the seed, and a binding that moves the Shoot to another seed
//     may change nothing else in the spec.
//   - Setting or changing the seed needs update on shoots/binding
//     (SubjectAccessReview for the requesting user), except on a CREATE whose
//     placement token verifies: the webhook's own placement.
//   - A self-hosted Shoot (a worker pool with controlPlane) may not get a
//     seed at all, as in Gardener.
//   - A seed chosen by a user must exist and take the Shoot, and moving to
//     another seed has rules of its own (placement.CheckSeedChange); a seed
//     set or changed, by a user or by placement, must not break a Required
//     seed pool (Policies).
//   - While the Shoot has a seed, a changed spec.seedSelector must still
//     select it and changed spec.controlPlane.zones must be offered by it
//     (placement.CheckSeedKept).
//
// Requests for other kinds or subresources are errors (the webhook
// configuration is wrong); operations other than CREATE and UPDATE are
// admitted.
type ShootBindingValidator struct {
	Landscape  SnapshotSource
	Authorizer Authorizer
	// Signer verifies placement tokens; nil treats every seed choice as a
	// user's.
	Signer *placementtoken.Signer
	// NetworkMode is the network overlap rule a seed chosen by a user must
	// pass (placement's; zero: Disjoint).
	NetworkMode placement.NetworkMode
	// BindThroughShoots stands in for the binding subresource where Shoots
	// are served from a CRD, which has none (pendingShoots.bindMode update):
	// an UPDATE of shoots that sets or changes spec.seedName is then judged
	// as a binding, so it needs the same update permission on
	// shoots/binding and passes the same rules.
	BindThroughShoots bool
	Log               logr.Logger
	// Projects: a seed chosen by a user for a Shoot in a namespace of no
	// known Project is denied before the Authorizer is asked (inProject).
	// Nil: every namespace is asked about.
	Projects ProjectLookup
	// StalenessGuard: beyond its bound a seed chosen by a user is denied
	// (see StalenessGuard); the webhook's own placement (verified token)
	// needs no cache and is still admitted. Zero: always check.
	StalenessGuard
	// Policies are the placement policies the webhooks decide with
	// (placement.Options.Policies): a seed set or changed must not break a
	// Required seed pool (requiredPoolProblem). Nil: none.
	Policies *placement.Policies
	// Enforce answers a request the binding rules refuse (the way the
	// seed changes, the user's permission, the seed's fit): deny, warn or
	// dryrun. A request the webhook cannot judge (stale cache, no answer
	// from the authorizer) is denied whatever it says. nil: deny.
	Enforce *Enforcer
}

var _ admission.Handler = (*ShootBindingValidator)(nil)

// Handle reads a request top to bottom: shootChangeOf (validating.go)
// screens and decodes it; classifySeedChange and bindingSpecChange
// (shoot_binding_checks.go) refuse what the request's shape decides; then
// judgeSeedKept or judgeSeedChoice ask placement once whether the seed
// suits the Shoot.
func (v *ShootBindingValidator) Handle(ctx context.Context, req admission.Request) admission.Response {
	c, log, done := shootChangeOf(req, v.Log)
	if done != nil {
		return *done
	}
	return v.judge(ctx, req, c, log)
}

// judge decides a screened and decoded request (shootChangeOf).
func (v *ShootBindingValidator) judge(ctx context.Context, req admission.Request, c *shootChange, log logr.Logger) admission.Response {
	if v.BindThroughShoots && c.op == admissionv1.Update && c.newSeed != "" && c.newSeed != c.oldSeed {
		c.binding = true
	}

	needsCheck, denial := classifySeedChange(c)
	if denial == "" {
		var err error
		if denial, err = bindingSpecChange(c); err != nil {
			logRejected(log, err, "Rejecting admission request")
			return denied("seedwarden: %v", err)
		}
	}
	if denial != "" {
		log.Info("Seed change refused", "from", c.oldSeed, "to", c.newSeed, "reason", denial, "enforcement", v.Enforce.Action())
		return v.refuse(req, c, "seedwarden: "+denial)
	}
	if !needsCheck {
		return v.judgeSeedKept(req, c, log)
	}
	return v.judgeSeedChoice(ctx, req, c, log)
}

// judgeSeedKept: a request that keeps the seed (or sets none) passes,
// unless it changes the Shoot's own seed constraints, which the current seed
// must then still meet.
func (v *ShootBindingValidator) judgeSeedKept(req admission.Request, c *shootChange, log logr.Logger) admission.Response {
	problems, checked := placement.CheckSeedKept(v.Landscape.Snapshot(), c.old, c.shoot)
	if !checked {
		return admission.Allowed("seedwarden: spec.seedName unchanged")
	}
	if d, stale := v.StaleBeyond(time.Now()); stale {
		log.Info("Denied change on the current seed: the placement cache is stale", "seed", c.newSeed, "staleFor", d.String())
		return admission.Denied(staleDenial(c.newSeed, d, v.MaxStaleness))
	}
	if len(problems) > 0 {
		log.Info("Change on the current seed refused", "seed", c.newSeed, "problems", problems, "enforcement", v.Enforce.Action())
		return v.refuse(req, c, fmt.Sprintf("seedwarden: Shoot %q cannot stay on seed %q: %s", c.key(), c.newSeed, strings.Join(problems, "; ")))
	}
	return admission.Allowed("seedwarden: spec.seedName unchanged")
}

// judgeSeedChoice: a request that sets or changes the seed passes as the
// webhook's own placement, or when the user may bind and the seed takes the
// Shoot.
func (v *ShootBindingValidator) judgeSeedChoice(ctx context.Context, req admission.Request, c *shootChange, log logr.Logger) admission.Response {
	if pool, ok := api.SelfHostedPool(c.shoot); ok {
		// Gardener's API refuses this too; no token or permission makes
		// a seed right for a Shoot whose control plane runs in itself.
		log.Info("Seed choice for a self-hosted Shoot refused", "to", c.newSeed, "pool", pool, "enforcement", v.Enforce.Action())
		return v.refuse(req, c, fmt.Sprintf("seedwarden: spec.seedName: Invalid value: %q: %s (worker pool %q has controlPlane)", c.newSeed, selfHostedSeedName, pool))
	}

	// The webhook's own placement (a verified token) needs no binding
	// permission nor a fresh cache, but the token names only the Shoot and
	// the seed: a Shoot whose spec was changed after placing (or that
	// skipped the mutating webhook, failurePolicy Ignore, carrying a copied
	// token) must still suit the seed. TestCheckSeedForShootAcceptsDecide:
	// these checks never refuse what placement chose.
	by := placement.ChosenByPlacement
	tokenErr := verifyPlacement(v.Signer, c)
	if tokenErr != nil {
		by = placement.ChosenByUser
		if d, stale := v.StaleBeyond(time.Now()); stale {
			log.Info("Denied seed choice: the placement cache is stale", "from", c.oldSeed, "to", c.newSeed, "staleFor", d.String(), "maxStaleness", v.MaxStaleness.String())
			return admission.Denied(staleDenial(c.newSeed, d, v.MaxStaleness))
		}
		if resp, ok := v.authorize(ctx, req, c, tokenErr, log); !ok {
			return resp
		}
	}
	snap := v.Landscape.Snapshot()
	problems := placement.CheckSeedChange(snap, c.old, c.shoot, by, v.NetworkMode)
	if why := requiredPoolProblem(snap, v.Policies, c.shoot); why != "" {
		problems = append(problems, why)
	}
	if len(problems) > 0 {
		log.Info("Seed choice refused: the Shoot does not suit the seed", "from", c.oldSeed, "to", c.newSeed, "ownPlacement", by == placement.ChosenByPlacement, "problems", problems, "enforcement", v.Enforce.Action())
		return v.refuse(req, c, fmt.Sprintf("seedwarden: Shoot %q cannot be placed on seed %q: %s", c.key(), c.newSeed, strings.Join(problems, "; ")))
	}
	if by == placement.ChosenByPlacement {
		log.V(1).Info("Own placement", "seed", c.newSeed)
		return admission.Allowed(fmt.Sprintf("seedwarden: placed on seed %q by seedwarden", c.newSeed))
	}
	log.V(1).Info("Allowed seed choice", "from", c.oldSeed, "to", c.newSeed, "user", req.UserInfo.Username)
	return admission.Allowed(fmt.Sprintf("seedwarden: seed %q may be chosen", c.newSeed))
}

// authorizedByAPIServer reports a PUT to shoots/binding: the API server
// authorized it, before admission, as exactly BindingPermission (update
// shoots/binding) for this user, so a SubjectAccessReview would ask the
// same question again. A PATCH (PatchOptions) was authorized for patch, not
// update, and is asked. A forged review that claims one gains nothing: the
// webhook's answer writes nothing.
func authorizedByAPIServer(req admission.Request) bool {
	return req.SubResource == api.SubresourceBinding && admissionjson.DecodeOptionsKind(req.Options.Raw) == "UpdateOptions"
}

// authorize checks the user's binding permission; it fails closed.
func (v *ShootBindingValidator) authorize(ctx context.Context, req admission.Request, c *shootChange, tokenErr error, log logr.Logger) (admission.Response, bool) {
	user := req.UserInfo
	if !inProject(v.Projects, c.namespace) {
		// Gardener keeps Shoots in Project namespaces only, so no user
		// can be allowed a seed here: answered without asking the API
		// server, which a flood of forged reviews would otherwise do.
		err := fmt.Errorf("user %q may not set spec.seedName to %q: namespace %q belongs to no Project", user.Username, c.newSeed, c.namespace)
		logRejected(log, err, "Seed choice outside any Project refused")
		return v.refuse(req, c, fmt.Sprintf("seedwarden: %v; Shoots are placed in Project namespaces only", err)), false
	}
	if authorizedByAPIServer(req) {
		return admission.Response{}, true
	}
	if v.Authorizer == nil {
		err := errors.New("no authorizer configured")
		log.Error(err, "Cannot verify binding permission")
		return denied("seedwarden: cannot verify binding permission: %v", err), false
	}
	allowed, reason, err := v.Authorizer.Allowed(ctx, user, c.namespace, c.name)
	if err != nil {
		log.Error(err, "Cannot verify binding permission", "user", user.Username)
		return denied("seedwarden: cannot verify binding permission: %v", err), false
	}
	if allowed {
		return admission.Response{}, true
	}
	var b strings.Builder
	fmt.Fprintf(&b, "seedwarden: user %q may not set spec.seedName to %q: that needs permission to %s %s/%s (%s) in namespace %q",
		user.Username, c.newSeed, BindingPermission.Verb, BindingPermission.Resource, BindingPermission.Subresource, BindingPermission.Group, c.namespace)
	if reason != "" {
		fmt.Fprintf(&b, " (%s)", reason)
	}
	if c.op == admissionv1.Create && !c.binding && !errors.Is(tokenErr, errNoToken) {
		fmt.Fprintf(&b, "; the %s annotation was not accepted: %v", placementtoken.Annotation, tokenErr)
	}
	log.Info("Seed choice without binding permission refused", "user", user.Username, "to", c.newSeed, "reason", reason, "token", tokenErr, "enforcement", v.Enforce.Action())
	return v.refuse(req, c, b.String()), false
}

// refuse answers a request the binding rules refuse, as Enforce says.
func (v *ShootBindingValidator) refuse(req admission.Request, c *shootChange, message string) admission.Response {
	return v.Enforce.refuse(req, c.object(req), message)
}
