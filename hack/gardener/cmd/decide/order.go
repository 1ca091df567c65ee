package main

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
)

// listOrder sets the order in which the fake client lists objects. Gardener's
// scheduler reads from an informer cache, whose lists come in no defined
// order; the fake client lists by name. decide varies the order where
// Gardener's answer may depend on it.
type listOrder struct {
	// seedsLast: these Seeds come after all others, in this order. Gardener's
	// filters keep list order and its final step picks the first least-used
	// seed, so moving each winner to the end reveals the next seed tied with it.
	seedsLast []string
	// firstConfigMap and firstProject, when set, name the object listed first:
	// DetermineSeed takes the first region-config ConfigMap and the first
	// Project of the Shoot's namespace.
	firstConfigMap string
	firstProject   string
}

func (o *listOrder) list(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
	if err := c.List(ctx, list, opts...); err != nil {
		return err
	}
	switch l := list.(type) {
	case *gardencorev1beta1.SeedList:
		// Index -1 (not moved) sorts first; the name order is kept.
		slices.SortStableFunc(l.Items, func(a, b gardencorev1beta1.Seed) int {
			return cmp.Compare(slices.Index(o.seedsLast, a.Name), slices.Index(o.seedsLast, b.Name))
		})
	case *corev1.ConfigMapList:
		moveFirst(l.Items, func(cm corev1.ConfigMap) bool { return cm.Name == o.firstConfigMap })
	case *gardencorev1beta1.ProjectList:
		moveFirst(l.Items, func(p gardencorev1beta1.Project) bool { return p.Name == o.firstProject })
	}
	return nil
}

func moveFirst[T any](items []T, first func(T) bool) {
	if i := slices.IndexFunc(items, first); i > 0 {
		item := items[i]
		copy(items[1:i+1], items[:i])
		items[0] = item
	}
}

// orderDependence decides the landscape again with each ConfigMap, then each
// Project, listed first. It returns "" when the decision (placement and tied
// seeds, or unschedulable) stays base's, else a description of how it
// changes: Gardener's own answer then depends on its cache's list order.
func (g *garden) orderDependence(ctx context.Context, base expect) (string, error) {
	configMaps := &corev1.ConfigMapList{}
	projects := &gardencorev1beta1.ProjectList{}
	if err := g.client.List(ctx, configMaps, client.InNamespace(gardenNamespace)); err != nil {
		return "", err
	}
	if err := g.client.List(ctx, projects); err != nil {
		return "", err
	}
	variants := []struct {
		what  string
		names []string
		set   func(string)
	}{
		{"ConfigMap", namesOf(configMaps.Items, func(cm corev1.ConfigMap) string { return cm.Name }),
			func(n string) { g.order.firstConfigMap = n }},
		{"Project", namesOf(projects.Items, func(p gardencorev1beta1.Project) string { return p.Name }),
			func(n string) { g.order.firstProject = n }},
	}
	var changes []string
	for _, v := range variants {
		for _, name := range v.names[min(1, len(v.names)):] {
			v.set(name)
			e, err := g.decideOnce(ctx)
			v.set("")
			if err != nil {
				return "", fmt.Errorf("with %s %s listed first: %w", v.what, name, err)
			}
			if !sameDecision(base, e) {
				changes = append(changes, fmt.Sprintf("with %s %s listed first: %s", v.what, name, summary(e)))
			}
		}
	}
	if len(changes) == 0 {
		return "", nil
	}
	return fmt.Sprintf("Gardener's decision depends on its cache's list order: listed by name: %s; %s",
		summary(base), strings.Join(changes, "; ")), nil
}

func namesOf[T any](items []T, name func(T) string) []string {
	names := make([]string, 0, len(items))
	for _, it := range items {
		names = append(names, name(it))
	}
	return names
}

func sameDecision(a, b expect) bool {
	return a.Unschedulable == b.Unschedulable && slices.Equal(a.Tied, b.Tied)
}

func summary(e expect) string {
	if e.Unschedulable {
		return "unschedulable (" + e.ReferenceError + ")"
	}
	return fmt.Sprintf("seed %s, tied %v", e.Seed, e.Tied)
}
