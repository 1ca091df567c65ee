package handlers

import (
	"context"
	"net/http"

	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/seedwarden/seedwarden/internal/metrics"
)

// The webhooks seedwarden serves: each validating webhook's name, the
// "webhook" label of seedwarden_validations_total, beside the path it is
// served at.
const (
	WebhookBinding     = "binding"
	WebhookBindingPath = "/validate-shoot-binding"

	WebhookCapacity     = "capacity"
	WebhookCapacityPath = "/validate-shoot-capacity"

	// WebhookSeedPath serves the binding and the capacity checks together
	// (ShootSeedValidator), each counted under its own name.
	WebhookSeedPath = "/validate-shoot-seed"

	WebhookResourceSize     = "resource-size"
	WebhookResourceSizePath = "/validate-resource-size"

	// WebhookKubeconfigSecret checks kubeconfigs in Secrets.
	WebhookKubeconfigSecret     = "kubeconfig-secret"
	WebhookKubeconfigSecretPath = "/validate-kubeconfig-secret"

	// WebhookNamespaceDeletion guards namespace DELETE.
	WebhookNamespaceDeletion     = "namespace-deletion"
	WebhookNamespaceDeletionPath = "/validate-namespace-deletion"

	// WebhookSeedAutoscaler guards SeedAutoscaler CREATE and UPDATE.
	WebhookSeedAutoscaler     = "seed-autoscaler"
	WebhookSeedAutoscalerPath = "/validate-seed-autoscaler"

	// MutateShootsPath is where the mutating webhook for Shoot CREATE is
	// served; its answers are counted as placement decisions, not
	// validations.
	MutateShootsPath = "/mutate-shoots"
)

// Observed is a validating webhook that counts each answer of h in
// seedwarden_validations_total under the webhook's name. m may be nil.
func Observed(webhook string, m *metrics.Recorder, h admission.Handler) admission.Handler {
	return admission.HandlerFunc(func(ctx context.Context, req admission.Request) admission.Response {
		resp := h.Handle(ctx, req)
		m.ObserveValidation(webhook, validationResult(resp))
		return resp
	})
}

// validationResult maps a response to the result label of
// seedwarden_validations_total: allowed, denied (403), or error (a request
// the handler could not judge).
func validationResult(r admission.Response) string {
	switch {
	case r.Allowed:
		return metrics.ValidationAllowed
	case r.Result != nil && r.Result.Code != 0 && r.Result.Code != http.StatusForbidden:
		return metrics.ValidationError
	default:
		return metrics.ValidationDenied
	}
}
