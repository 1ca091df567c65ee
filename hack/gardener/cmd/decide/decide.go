package main

import (
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

// garden is one landscape loaded for Gardener's scheduler.
type garden struct {
	client    client.Client
	order     *listOrder
	scheduler *schedulershoot.Reconciler
	shoot     *gardencorev1beta1.Shoot // as the scheduler reads it
}

// newGarden loads the landscape and the Shoot to place, as the scheduler's
// cache would hold them, with the one field index DetermineSeed selects by.
func newGarden(ctx context.Context, l *landscape) (*garden, error) {
	g := &garden{order: &listOrder{}}
	c, err := fakeClient(append(slices.Clone(l.objects), l.shoot.DeepCopy()), g.order)
	if err != nil {
		return nil, err
	}
	g.client = c
	g.scheduler = &schedulershoot.Reconciler{
		Client:          c,
		Config:          &schedulerconfigv1alpha1.ShootSchedulerConfiguration{Strategy: l.strategy},
		GardenNamespace: gardenNamespace,
	}
	g.shoot = &gardencorev1beta1.Shoot{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(l.shoot), g.shoot); err != nil {
		return nil, fmt.Errorf("reading back the shoot: %w", err)
	}
	return g, nil
}

func fakeClient(objects []client.Object, order *listOrder) (c client.Client, err error) {
	// The builder panics on objects it cannot hold (e.g. two with one name).
	defer func() {
		if r := recover(); r != nil {
			c, err = nil, fmt.Errorf("loading objects: %v", r)
		}
	}()
	return fake.NewClientBuilder().
		WithScheme(kubernetes.GardenScheme).
		WithObjects(objects...).
		WithIndex(&gardencorev1beta1.Project{}, gardencore.ProjectNamespace, indexer.ProjectNamespaceIndexerFunc).
		WithInterceptorFuncs(interceptor.Funcs{List: order.list}).
		Build(), nil
}

// decide runs Gardener's DetermineSeed on the landscape. A scheduling failure
// is a decision (unschedulable). undefined is non-empty when the decision
// depends on list order beyond breaking ties. An error means the scenario
// could not be decided; a *gardenerPanic that Gardener crashed.
func decide(ctx context.Context, l *landscape) (e expect, undefined string, err error) {
	g, err := newGarden(ctx, l)
	if err != nil {
		return expect{}, "", err
	}
	if e, err = g.decideOnce(ctx); err != nil {
		return expect{}, "", err
	}
	undefined, err = g.orderDependence(ctx, e)
	return e, undefined, err
}

// decideOnce decides with the current ConfigMap and Project order, finding
// the tied seeds by listing each winner last until a winner repeats.
func (g *garden) decideOnce(ctx context.Context) (expect, error) {
	g.order.seedsLast = nil
	seed, err := g.determineSeed(ctx)
	if err != nil {
		if crashed(err) {
			return expect{}, err
		}
		return expect{Unschedulable: true, ReferenceError: err.Error()}, nil
	}
	first := seed
	for !slices.Contains(g.order.seedsLast, seed) {
		g.order.seedsLast = append(g.order.seedsLast, seed)
		if seed, err = g.determineSeed(ctx); crashed(err) {
			return expect{}, err
		} else if err != nil {
			return expect{}, fmt.Errorf("with seeds %v listed last: %w (the decision depends on list order)", g.order.seedsLast, err)
		}
	}
	// With every tied seed moved to the end in the order found, the first one
	// found must win again; else the claim that list order only breaks ties is wrong.
	if seed != first {
		return expect{}, fmt.Errorf("with seeds %v listed last %q wins, not %q (the decision depends on list order)", g.order.seedsLast, seed, first)
	}
	if err := g.sameUsage(ctx, g.order.seedsLast); err != nil {
		return expect{}, err
	}
	return expect{Seed: first, Tied: slices.Sorted(slices.Values(g.order.seedsLast))}, nil
}

// determineSeed calls Gardener's DetermineSeed on a copy of the Shoot, turning
// a panic into a *gardenerPanic.
func (g *garden) determineSeed(ctx context.Context) (name string, err error) {
	defer func() {
		if v := recover(); v != nil {
			name, err = "", &gardenerPanic{value: v, stack: debug.Stack()}
		}
	}()
	seed, err := g.scheduler.DetermineSeed(ctx, logr.Discard(), g.shoot.DeepCopy())
	if err != nil {
		return "", err
	}
	return seed.Name, nil
}

// sameUsage checks, with Gardener's own usage count, that the tied seeds all
// manage the same number of Shoots.
func (g *garden) sameUsage(ctx context.Context, tied []string) error {
	shoots := &gardencorev1beta1.ShootList{}
	if err := g.client.List(ctx, shoots); err != nil {
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
