package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	v1beta1helper "github.com/gardener/gardener/pkg/api/core/v1beta1/helper"
	"github.com/gardener/gardener/pkg/api/indexer"
	schedulerconfigv1alpha1 "github.com/gardener/gardener/pkg/apis/config/scheduler/v1alpha1"
	gardencore "github.com/gardener/gardener/pkg/apis/core"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"github.com/gardener/gardener/pkg/client/kubernetes"
	schedulershoot "github.com/gardener/gardener/pkg/scheduler/controller/shoot"
)

// gardenNamespace is where the scenarios keep their region-config ConfigMaps.
const gardenNamespace = "garden"

// expect is Gardener's decision in the corpus's format.
type expect struct {
	Seed           string   `json:"seed,omitempty"`
	Tied           []string `json:"tied,omitempty"`
	Unschedulable  bool     `json:"unschedulable,omitempty"`
	ReferenceError string   `json:"referenceError,omitempty"`
}

// gardenerPanic is a panic inside Gardener's scheduler: a finding, not an
// error of this program.
type gardenerPanic struct {
	value any
	stack []byte
}

func (p *gardenerPanic) Error() string { return fmt.Sprint(p.value) }

func crashed(err error) bool {
	var p *gardenerPanic
	return errors.As(err, &p)
}

// seedOrder makes the fake client list Seeds in name order, except that the
// seeds in last come after all others, in that order. Gardener's filters keep
// list order and its final step picks the first least-used seed, so moving
// each winner to the end reveals the next seed tied with it.
type seedOrder struct {
	last []string
}

func (o *seedOrder) list(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
	if err := c.List(ctx, list, opts...); err != nil {
		return err
	}
	if seeds, ok := list.(*gardencorev1beta1.SeedList); ok {
		// Index -1 (not moved) sorts first; the fake client's name order is kept.
		slices.SortStableFunc(seeds.Items, func(a, b gardencorev1beta1.Seed) int {
			return cmp.Compare(slices.Index(o.last, a.Name), slices.Index(o.last, b.Name))
		})
	}
	return nil
}

// newGarden loads the landscape and the Shoot to place, as the scheduler's
// cache would hold them, with the one field index DetermineSeed selects by.
func newGarden(l *landscape, order *seedOrder) (c client.Client, err error) {
	// The builder panics on objects it cannot hold (e.g. two with one name).
	defer func() {
		if r := recover(); r != nil {
			c, err = nil, fmt.Errorf("loading objects: %v", r)
		}
	}()
	objects := append(slices.Clone(l.objects), l.shoot.DeepCopy())
	return fake.NewClientBuilder().
		WithScheme(kubernetes.GardenScheme).
		WithObjects(objects...).
		WithIndex(&gardencorev1beta1.Project{}, gardencore.ProjectNamespace, indexer.ProjectNamespaceIndexerFunc).
		WithInterceptorFuncs(interceptor.Funcs{List: order.list}).
		Build(), nil
}

// decide runs Gardener's DetermineSeed on the landscape. A scheduling failure
// is a decision (unschedulable); an error return means the scenario could not
// be decided, a *gardenerPanic that Gardener crashed.
func decide(ctx context.Context, l *landscape) (expect, error) {
	order := &seedOrder{}
	c, err := newGarden(l, order)
	if err != nil {
		return expect{}, err
	}
	r := &schedulershoot.Reconciler{
		Client:          c,
		Config:          &schedulerconfigv1alpha1.ShootSchedulerConfiguration{Strategy: l.strategy},
		GardenNamespace: gardenNamespace,
	}
	// The Shoot as the scheduler reads it from its cache.
	stored := &gardencorev1beta1.Shoot{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(l.shoot), stored); err != nil {
		return expect{}, fmt.Errorf("reading back the shoot: %w", err)
	}
	seed, err := determineSeed(ctx, r, stored)
	if err != nil {
		if crashed(err) {
			return expect{}, err
		}
		return expect{Unschedulable: true, ReferenceError: err.Error()}, nil
	}
	first := seed
	for !slices.Contains(order.last, seed) {
		order.last = append(order.last, seed)
		if seed, err = determineSeed(ctx, r, stored); crashed(err) {
			return expect{}, err
		} else if err != nil {
			return expect{}, fmt.Errorf("with seeds %v listed last: %w (the decision depends on list order)", order.last, err)
		}
	}
	// With every tied seed moved to the end in the order found, the first one
	// found must win again; else the claim that list order only breaks ties is wrong.
	if seed != first {
		return expect{}, fmt.Errorf("with seeds %v listed last %q wins, not %q (the decision depends on list order)", order.last, seed, first)
	}
	if err := sameUsage(ctx, c, order.last); err != nil {
		return expect{}, err
	}
	return expect{Seed: first, Tied: slices.Sorted(slices.Values(order.last))}, nil
}

// determineSeed calls Gardener's DetermineSeed on a copy of the Shoot, turning
// a panic into a *gardenerPanic.
func determineSeed(ctx context.Context, r *schedulershoot.Reconciler, shoot *gardencorev1beta1.Shoot) (name string, err error) {
	defer func() {
		if v := recover(); v != nil {
			name, err = "", &gardenerPanic{value: v, stack: debug.Stack()}
		}
	}()
	seed, err := r.DetermineSeed(ctx, logr.Discard(), shoot.DeepCopy())
	if err != nil {
		return "", err
	}
	return seed.Name, nil
}

// sameUsage checks, with Gardener's own usage count, that the tied seeds all
// manage the same number of Shoots.
func sameUsage(ctx context.Context, c client.Client, tied []string) error {
	shoots := &gardencorev1beta1.ShootList{}
	if err := c.List(ctx, shoots); err != nil {
		return err
	}
	usage := v1beta1helper.CalculateSeedUsage(v1beta1helper.ConvertShootList(shoots.Items))
	for _, name := range tied[1:] {
		if usage[name] != usage[tied[0]] {
			return fmt.Errorf("tied seeds %q (%d shoots) and %q (%d shoots) differ in usage", tied[0], usage[tied[0]], name, usage[name])
		}
	}
	return nil
}
