package landscape

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/operationsapi"
)

// listPageSize is how many objects one list request asks for: a garden of
// 100k Shoots is read in pages the API server can serve from its watch
// cache, not in one response of hundreds of megabytes.
const listPageSize = 500

// source is one resource List reads.
type source struct {
	resource string // for errors: "seeds"
	newList  func() client.ObjectList
	inGarden bool // region-config ConfigMaps of the garden namespace only
	// optional: a resource the API server does not serve (its CRD is not
	// installed) holds no objects; any other error still ends the list.
	optional bool
}

// sources are the resources a landscape is made of, in the order List
// returns them (the order of the informers of `webhook serve`).
var sources = []source{
	{resource: "seeds", newList: func() client.ObjectList { return &api.SeedList{} }},
	{resource: "shoots", newList: func() client.ObjectList { return &api.ShootList{} }},
	{resource: "cloudprofiles", newList: func() client.ObjectList { return &api.CloudProfileList{} }},
	{resource: "namespacedcloudprofiles", newList: func() client.ObjectList { return &api.NamespacedCloudProfileList{} }},
	{resource: "projects", newList: func() client.ObjectList { return &api.ProjectList{} }},
	{resource: "configmaps", newList: func() client.ObjectList { return &corev1.ConfigMapList{} }, inGarden: true},
	// SeedDrains cordon their seeds: a plan of a live garden must see them.
	{resource: "seeddrains", newList: func() client.ObjectList { return &operationsapi.SeedDrainList{} }, optional: true},
}

// ListError says which resource could not be listed.
type ListError struct {
	Resource string // e.g. "seeds"
	Err      error
}

func (e *ListError) Error() string { return fmt.Sprintf("cannot list %s: %v", e.Resource, e.Err) }
func (e *ListError) Unwrap() error { return e.Err }

// List reads a landscape from a cluster, once: Seeds, Shoots of every
// namespace, CloudProfiles, NamespacedCloudProfiles, Projects and the
// region-config ConfigMaps of gardenNamespace (what `webhook serve` watches),
// and SeedDrains where their CRD is installed.
// It returns them as Decode does, typed with apiVersion and kind set, and
// without managedFields, which nothing here reads. It writes nothing. The
// first list that fails ends it with a *ListError.
func List(ctx context.Context, c client.Reader, gardenNamespace string) ([]client.Object, error) {
	if gardenNamespace == "" {
		return nil, errors.New("gardenNamespace: must not be empty")
	}
	var out []client.Object
	for _, src := range sources {
		var opts []client.ListOption
		if src.inGarden {
			opts = append(opts, client.InNamespace(gardenNamespace),
				client.MatchingLabels{api.LabelSchedulingPurpose: api.LabelSchedulingPurposeRegionConfig})
		}
		objs, err := listAll(ctx, c, src.newList, opts)
		if err != nil && src.optional && unserved(err) {
			continue
		}
		if err != nil {
			return nil, &ListError{Resource: src.resource, Err: err}
		}
		out = append(out, objs...)
	}
	return out, nil
}

// unserved says whether a list failed because the API server does not
// serve the resource at all (no CRD), as opposed to refusing it.
func unserved(err error) bool {
	return meta.IsNoMatchError(err) || apierrors.IsNotFound(err)
}

// listAll lists every page of one resource.
func listAll(ctx context.Context, c client.Reader, newList func() client.ObjectList, opts []client.ListOption) ([]client.Object, error) {
	var out []client.Object
	cont := ""
	for {
		l := newList()
		page := append([]client.ListOption{client.Limit(listPageSize), client.Continue(cont)}, opts...)
		if err := c.List(ctx, l, page...); err != nil {
			return nil, err
		}
		items, err := meta.ExtractList(l)
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			obj, ok := it.(client.Object)
			if !ok {
				return nil, fmt.Errorf("list item %T is not an object", it)
			}
			obj.SetManagedFields(nil)
			if err := setTypeMeta(obj); err != nil {
				return nil, err
			}
			out = append(out, obj)
		}
		if cont = l.GetContinue(); cont == "" {
			return out, nil
		}
	}
}
