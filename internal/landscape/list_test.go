package landscape_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/landscape"
	"github.com/seedwarden/seedwarden/internal/placement"
)

// exampleObjects decodes examples/landscape.yaml and drops the TypeMeta a
// client's typed lists do not carry.
func exampleObjects(t *testing.T) []client.Object {
	t.Helper()
	objs, err := landscape.ReadFile("../../examples/landscape.yaml", nil)
	require.NoError(t, err)
	require.NotEmpty(t, objs)
	return objs
}

func TestEncodeRoundTrip(t *testing.T) {
	objs := exampleObjects(t)
	var buf bytes.Buffer
	require.NoError(t, landscape.Encode(&buf, objs))
	back, err := landscape.Decode(buf.Bytes())
	require.NoError(t, err)
	assert.Equal(t, objs, back)
	assert.Contains(t, buf.String(), "kind: List\n")
}

func TestEncodeSetsTypeMeta(t *testing.T) {
	seed := &api.Seed{ObjectMeta: metav1.ObjectMeta{Name: "s"}}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "rc", Namespace: "garden"}}
	var buf bytes.Buffer
	require.NoError(t, landscape.Encode(&buf, []client.Object{seed, cm}))
	assert.Empty(t, seed.Kind, "the caller's object is not changed")
	back, err := landscape.Decode(buf.Bytes())
	require.NoError(t, err)
	assert.Equal(t, []string{"Seed//s", "ConfigMap/garden/rc"}, kindsAndNames(back))
	assert.Equal(t, "core.gardener.cloud/v1beta1", back[0].GetObjectKind().GroupVersionKind().GroupVersion().String())
}

func TestEncodeRefusesOtherKinds(t *testing.T) {
	err := landscape.Encode(&bytes.Buffer{}, []client.Object{&api.Seed{}, &corev1.Secret{}})
	require.Error(t, err)
	assert.Equal(t, "item 1: *v1.Secret is not a landscape kind", err.Error())
}

// listClient holds the example landscape plus objects List must leave out:
// a ConfigMap without the region-config label, one in another namespace.
func listClient(t *testing.T, funcs interceptor.Funcs) client.Client {
	t.Helper()
	objs := exampleObjects(t)
	stored := make([]client.Object, 0, len(objs)+2)
	for _, o := range objs {
		stored = append(stored, o.DeepCopyObject().(client.Object))
	}
	stored = append(stored,
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "unlabelled", Namespace: "garden"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "elsewhere", Namespace: "other",
			Labels: map[string]string{api.LabelSchedulingPurpose: api.LabelSchedulingPurposeRegionConfig}}})
	return fake.NewClientBuilder().WithScheme(cache.NewScheme()).WithObjects(stored...).WithInterceptorFuncs(funcs).Build()
}

func TestListReadsTheLandscape(t *testing.T) {
	want := exampleObjects(t)
	got, err := landscape.List(context.Background(), listClient(t, interceptor.Funcs{}), "garden")
	require.NoError(t, err)
	assert.ElementsMatch(t, kindsAndNames(want), kindsAndNames(got))
	for _, o := range got {
		assert.NotEmpty(t, o.GetObjectKind().GroupVersionKind().Kind, "%s: kind set", o.GetName())
		assert.Empty(t, o.GetManagedFields())
	}

	// The listed landscape decides as the file does.
	for _, file := range []string{"../../examples/shoot.yaml", "../../examples/shoot-unschedulable.yaml"} {
		objs, err := landscape.ReadFile(file, nil)
		require.NoError(t, err)
		require.Len(t, objs, 1)
		shoot := objs[0].(*api.Shoot)
		fromFile, fromList := loadStore(want), loadStore(got)
		assert.Equal(t, fromFile.Place(shoot, placement.Options{}, ""), fromList.Place(shoot, placement.Options{}, ""), file)
	}
}

func loadStore(objs []client.Object) *cache.Store {
	s := cache.NewStore(cache.Options{GardenNamespace: "garden"})
	s.Load(objs)
	return s
}

func TestListNamesTheRefusedResource(t *testing.T) {
	refused := errors.New("projects.core.gardener.cloud is forbidden")
	c := listClient(t, interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, l client.ObjectList, opts ...client.ListOption) error {
		if _, ok := l.(*api.ProjectList); ok {
			return refused
		}
		return c.List(ctx, l, opts...)
	}})
	_, err := landscape.List(context.Background(), c, "garden")
	require.Error(t, err)
	assert.ErrorIs(t, err, refused)
	var le *landscape.ListError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, "projects", le.Resource)
	assert.Equal(t, "cannot list projects: projects.core.gardener.cloud is forbidden", err.Error())

	_, err = landscape.List(context.Background(), c, "")
	assert.EqualError(t, err, "gardenNamespace: must not be empty")
}

// List follows continue tokens: an API server answering in pages of one
// Seed gives every Seed, each once.
func TestListReadsEveryPage(t *testing.T) {
	pages := 0
	c := listClient(t, interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, l client.ObjectList, opts ...client.ListOption) error {
		seeds, ok := l.(*api.SeedList)
		if !ok {
			return c.List(ctx, l, opts...)
		}
		var o client.ListOptions
		o.ApplyOptions(opts)
		require.Positive(t, o.Limit, "a page size is asked for")
		var all api.SeedList
		if err := c.List(ctx, &all); err != nil {
			return err
		}
		i := 0
		if o.Continue != "" {
			i = int(o.Continue[0] - '0')
		}
		pages++
		seeds.Items = all.Items[i : i+1]
		if i+1 < len(all.Items) {
			seeds.Continue = string(rune('0' + i + 1))
		}
		return nil
	}})
	got, err := landscape.List(context.Background(), c, "garden")
	require.NoError(t, err)
	var names []string
	for _, o := range got {
		if _, ok := o.(*api.Seed); ok {
			names = append(names, o.GetName())
		}
	}
	assert.ElementsMatch(t, []string{"aws-eu1", "aws-eu2", "aws-eu-restricted", "aws-us1", "gcp-eu1", "gcp-us1"}, names)
	assert.Equal(t, 6, pages)
}
