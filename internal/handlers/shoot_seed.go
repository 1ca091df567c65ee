package handlers

import (
	"context"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/seedwarden/seedwarden/internal/metrics"
)

// ShootSeedValidator serves the binding and the capacity checks of a seed
// choice behind one webhook registration (seed.shoots.seedwarden.io, at
// WebhookSeedPath). Registered apart, the two match the same requests, and
// gardener-apiserver converts the Shoot (and on UPDATE the old one) to
// unstructured for each registration's matchConditions and then calls each:
// together that is half the conversions and one call per request instead of
// two (BENCHMARKS.md §36).
//
// The binding check runs first; a request it refuses is answered at once,
// so the capacity check reserves no place for a seed choice that is not
// admitted. A request the binding check admits (warn and dryrun
// enforcement included) is answered by the capacity check, carrying the
// binding check's warnings too. Each check's answer is counted in
// seedwarden_validations_total under its own name, as when served apart; a
// request the binding check refuses is not counted for capacity, which did
// not judge it.
type ShootSeedValidator struct {
	// Binding is the binding check (nil: binding.enabled false).
	Binding *ShootBindingValidator
	// Capacity is the capacity check (nil: capacity.enabled false).
	Capacity *ShootCapacityValidator
	// Metrics may be nil.
	Metrics *metrics.Recorder
}

var _ admission.Handler = (*ShootSeedValidator)(nil)

// Handle screens and decodes the request once, then asks each check.
func (v *ShootSeedValidator) Handle(ctx context.Context, req admission.Request) admission.Response {
	// log is the first enabled check's, with the request's identity.
	c, log, done := shootChangeOf(req, v.log())
	if done != nil {
		v.observe(WebhookBinding, v.Binding != nil, *done)
		v.observe(WebhookCapacity, v.Capacity != nil, *done)
		return *done
	}
	var warnings []string
	if v.Binding != nil {
		own := *c // judge marks a binding through shoots on its copy
		resp := v.Binding.judge(ctx, req, &own, log)
		v.observe(WebhookBinding, true, resp)
		if !resp.Allowed || v.Capacity == nil {
			return resp
		}
		warnings = resp.Warnings
		log = requestLog(v.Capacity.Log, req)
	}
	if v.Capacity == nil {
		return admission.Allowed("seedwarden: no seed check is enabled")
	}
	resp := v.Capacity.judge(ctx, req, c, log)
	v.observe(WebhookCapacity, true, resp)
	if len(warnings) > 0 {
		resp.Warnings = append(warnings, resp.Warnings...)
	}
	return resp
}

// observe counts resp for the check name when it is enabled.
func (v *ShootSeedValidator) observe(name string, enabled bool, resp admission.Response) {
	if enabled {
		v.Metrics.ObserveValidation(name, validationResult(resp))
	}
}

// log is the logger of a request that fails screening: the binding
// check's, else the capacity check's.
func (v *ShootSeedValidator) log() logr.Logger {
	switch {
	case v.Binding != nil:
		return v.Binding.Log
	case v.Capacity != nil:
		return v.Capacity.Log
	}
	return logr.Logger{}
}
