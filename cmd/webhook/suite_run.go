package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/autoscaleplan"
	"github.com/seedwarden/seedwarden/internal/config"
	"github.com/seedwarden/seedwarden/internal/handlers"
	"github.com/seedwarden/seedwarden/internal/placement"
	"github.com/seedwarden/seedwarden/internal/seedscale"
)

// Every case is decided by the code that decides it in the webhook: a
// Shoot by the Store's Place (as simulate), a seed change by the binding
// and capacity webhooks' handlers (as serve --landscape), a SeedAutoscaler
// by autoscaleplan (as plan --autoscale). Each case gets a fresh Store, so
// no case sees another's reservations.

// caseResult is the outcome of one case.
type caseResult struct {
	Name     string `json:"name"`
	Kind     string `json:"kind"`
	Passed   bool   `json:"passed"`
	Expected string `json:"expected"`
	Actual   string `json:"actual"`
	// Detail says why, where the webhook gives a reason: the refusal's
	// message, the seeds' reasons.
	Detail string `json:"detail,omitempty"`
}

// suiteRun decides the cases of a suite on one landscape.
type suiteRun struct {
	ctx  context.Context
	cfg  *config.Config
	objs []client.Object
	ls   *loadedSuite
	// kubeconfig is the cluster the landscape was listed from; nil for a
	// file. A ManagedSeedSet the autoscalers file lacks is read from it,
	// as plan --autoscale does.
	kubeconfig *string
	// autoscale is plan --autoscale's report, computed once when a case
	// needs it.
	autoscale *autoscaleplan.Report
}

// run decides every case in the suite's order. An error is bad input (a
// Shoot or SeedAutoscaler the landscape does not have), named by field.
func (r *suiteRun) run() ([]caseResult, error) {
	out := make([]caseResult, 0, len(r.ls.suite.Cases))
	for i := range r.ls.suite.Cases {
		c := &r.ls.suite.Cases[i]
		res := caseResult{Name: c.Name, Kind: c.kind()}
		var err error
		switch res.Kind {
		case kindShoot:
			r.shootCase(r.ls.shoots[i], c.Expect, &res)
		case kindSeedChange:
			err = r.seedChangeCase(c, &res)
		case kindSeedAutoscaler:
			err = r.autoscalerCase(c, &res)
		}
		if err != nil {
			return nil, &suiteError{fmt.Sprintf("%s: cases[%d].%s: %v", r.ls.at.of(&i, res.Kind), i, res.Kind, err)}
		}
		res.Passed = res.Expected == res.Actual
		out = append(out, res)
	}
	return out, nil
}

// decideOnLandscape places shoot on the landscape objs as simulate
// --landscape does: a Shoot the landscape holds already is decided without
// its own charge.
func decideOnLandscape(cfg *config.Config, objs []client.Object, shoot *api.Shoot) placement.Decision {
	_, objs = takeShoot(objs, client.ObjectKeyFromObject(shoot))
	store := newStore(cfg, nil)
	store.Load(objs)
	return store.Place(shoot, placementOptions(cfg), "")
}

func (r *suiteRun) shootCase(shoot *api.Shoot, e suiteExpect, res *caseResult) {
	d := decideOnLandscape(r.cfg, r.objs, shoot)
	if e.Seed != "" {
		res.Expected = "seed " + e.Seed
	} else {
		res.Expected = unschedulableText(e.Unschedulable)
	}
	if d.Schedulable() {
		res.Actual = "seed " + d.Seed
		return
	}
	res.Actual = unschedulableText(decisionCodes(d))
	res.Detail = d.Summary()
}

// decisionCodes are the reason codes of an unschedulable decision: the
// decision's and every seed's (unschedulableText makes them a set).
func decisionCodes(d placement.Decision) []string {
	var codes []string
	if d.Code != "" {
		codes = append(codes, string(d.Code))
	}
	for _, c := range d.Codes {
		codes = append(codes, string(c))
	}
	return codes
}

// unschedulableText is how expected and actual codes are compared: as a
// set.
func unschedulableText(codes []string) string {
	sorted := slices.Clone(codes)
	slices.Sort(sorted)
	return "unschedulable " + strings.Join(slices.Compact(sorted), ", ")
}

func (r *suiteRun) seedChangeCase(c *suiteCase, res *caseResult) error {
	ns, name, _ := strings.Cut(c.SeedChange.Shoot, "/")
	old, _ := takeShoot(r.objs, client.ObjectKey{Namespace: ns, Name: name})
	if old == nil {
		return fmt.Errorf("shoot %q: no such Shoot in the landscape", c.SeedChange.Shoot)
	}
	moved := old.DeepCopy()
	moved.Spec.SeedName = &c.SeedChange.Seed
	req, err := bindingRequest(old, moved)
	if err != nil {
		return err
	}
	var want, got, why []string
	judge := func(guard, expected string, enabled bool, h admission.Handler) {
		if expected == "" {
			return
		}
		want = append(want, guard+" "+expected)
		if !enabled {
			got = append(got, guard+" "+verdictAllowed)
			why = append(why, guard+": the guard is disabled in the configuration")
			return
		}
		resp := h.Handle(r.ctx, req)
		if resp.Allowed {
			got = append(got, guard+" "+verdictAllowed)
			return
		}
		got = append(got, guard+" "+verdictDenied)
		if resp.Result != nil {
			why = append(why, guard+": "+resp.Result.Message)
		}
	}
	store := newStore(r.cfg, nil)
	store.Load(r.objs)
	judge(handlers.WebhookBinding, c.Expect.Binding, r.cfg.BindingEnabled(), &handlers.ShootBindingValidator{
		Landscape: store, Authorizer: mayBind{}, NetworkMode: placementOptions(r.cfg).NetworkMode,
		Policies: placementOptions(r.cfg).Policies, BindThroughShoots: false, Log: logr.Discard(), Projects: store,
	})
	judge(handlers.WebhookCapacity, c.Expect.Capacity, r.cfg.CapacityEnabled(), &handlers.ShootCapacityValidator{
		Store: store, Projects: store, Log: logr.Discard(),
	})
	res.Expected, res.Actual, res.Detail = strings.Join(want, ", "), strings.Join(got, ", "), strings.Join(why, "; ")
	return nil
}

// mayBind grants the permission to bind: a seed change case asks what the
// guards' rules say of the seed, for a user RBAC lets bind.
type mayBind struct{}

func (mayBind) Allowed(context.Context, authenticationv1.UserInfo, string, string) (bool, string, error) {
	return true, "webhook test: the user may bind", nil
}

// testUser is the user of a seed change case's request.
var testUser = authenticationv1.UserInfo{Username: "webhook-test", Groups: []string{"system:authenticated"}}

// bindingRequest is the shoots/binding UPDATE that moves old to moved's seed.
func bindingRequest(old, moved *api.Shoot) (admission.Request, error) {
	raw := func(s *api.Shoot) ([]byte, error) {
		s = s.DeepCopy()
		s.APIVersion, s.Kind = api.ShootGVK.GroupVersion().String(), api.ShootGVK.Kind
		return json.Marshal(s)
	}
	oldRaw, err := raw(old)
	if err != nil {
		return admission.Request{}, err
	}
	newRaw, err := raw(moved)
	if err != nil {
		return admission.Request{}, err
	}
	return admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		UID:         "webhook-test",
		Kind:        metav1.GroupVersionKind(api.ShootGVK),
		Resource:    metav1.GroupVersionResource(api.ShootGVR),
		SubResource: api.SubresourceBinding,
		Name:        old.Name, Namespace: old.Namespace,
		Operation: admissionv1.Update,
		UserInfo:  testUser,
		Object:    runtime.RawExtension{Raw: newRaw},
		OldObject: runtime.RawExtension{Raw: oldRaw},
	}}, nil
}

func (r *suiteRun) autoscalerCase(c *suiteCase, res *caseResult) error {
	if r.autoscale == nil {
		file := r.ls.rel(r.ls.suite.Autoscalers)
		in, err := autoscaleInput(r.cfg, r.objs, file)
		if err != nil {
			return err
		}
		if r.kubeconfig != nil {
			sets, err := liveManagedSeedSets(r.ctx, *r.kubeconfig, missingSets(in))
			if err != nil {
				return err
			}
			in.Sets = append(in.Sets, sets...)
		}
		in.Budget = recommendationBudget(r.ctx, r.cfg.Autoscaler.SyncBudget.Duration)
		in.Hold = seedscale.DrainHold(time.Now(), seedscale.NoMoveWindow)
		if r.autoscale, err = autoscaleplan.Run(in); err != nil {
			return fmt.Errorf("autoscalers %q: %w", file, err)
		}
	}
	key := c.SeedAutoscaler
	if !strings.Contains(key, "/") {
		key = r.cfg.GardenNamespace + "/" + key
	}
	for _, e := range r.autoscale.Autoscalers {
		if e.Autoscaler == key {
			res.Expected = fmt.Sprintf("replicas %d", *c.Expect.Replicas)
			res.Actual = fmt.Sprintf("replicas %d", e.Desired)
			res.Detail = fmt.Sprintf("set %s: %d now, floor %d", e.Set, e.Current, e.Floor)
			return nil
		}
	}
	return fmt.Errorf("%q: no such SeedAutoscaler in %s", c.SeedAutoscaler, r.ls.suite.Autoscalers)
}
