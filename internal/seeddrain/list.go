package seeddrain

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/api"
	ops "github.com/seedwarden/seedwarden/internal/operationsapi"
)

// listPageSize is how many Shoots one list request asks for.
const listPageSize = 500

// Field selectors of Shoots that gardener-apiserver serves.
var seedFields = []string{"spec.seedName", "status.seedName"}

// listCharged reads the Shoots charged to seed from the API server: with
// gardener-apiserver's field selectors, or, where they are refused (Shoots
// from a CRD), from a list of every Shoot.
func (r *Reconciler) listCharged(ctx context.Context, seed string) (map[string]*api.Shoot, error) {
	out := map[string]*api.Shoot{}
	if !r.noFieldSelectors {
		var err error
		for _, f := range seedFields {
			if err = r.listInto(ctx, out, seed, client.MatchingFields{f: seed}); err != nil {
				break
			}
		}
		if err == nil {
			return out, nil
		}
		if !apierrors.IsBadRequest(err) {
			return nil, err
		}
		r.noFieldSelectors = true
		out = map[string]*api.Shoot{}
	}
	return out, r.listInto(ctx, out, seed)
}

// listInto adds the Shoots of every page charged to seed to out.
func (r *Reconciler) listInto(ctx context.Context, out map[string]*api.Shoot, seed string, opts ...client.ListOption) error {
	cont := ""
	for {
		l := &api.ShootList{}
		page := append([]client.ListOption{client.Limit(listPageSize), client.Continue(cont)}, opts...)
		if err := r.APIReader.List(ctx, l, page...); err != nil {
			return err
		}
		for i := range l.Items {
			s := &l.Items[i]
			if ptr.Deref(s.Spec.SeedName, "") == seed || ptr.Deref(s.Status.SeedName, "") == seed {
				out[keyOf(s.Namespace, s.Name)] = s
			}
		}
		if cont = l.GetContinue(); cont == "" {
			return nil
		}
	}
}

// follow reads again the Shoots this drain started migrating that are no
// longer charged to the seed (their status.seedName moved on): a nil
// value is a deleted Shoot, a missing one a failed read.
func (r *Reconciler) follow(ctx context.Context, prev map[string]ops.ShootStatus, charged map[string]*api.Shoot) map[string]*api.Shoot {
	out := map[string]*api.Shoot{}
	for k, p := range prev {
		if _, ok := charged[k]; ok || p.StartedAt == nil || (p.State != ops.ShootMigrating && p.State != ops.ShootFailed) {
			continue
		}
		s := &api.Shoot{}
		err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: p.Namespace, Name: p.Name}, s)
		switch {
		case apierrors.IsNotFound(err):
			out[k] = nil
		case err == nil:
			out[k] = s
		}
	}
	return out
}
