package seedreserve

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/cache"
)

const (
	testNS  = "seedwarden"
	testTTL = 30 * time.Second
)

// newClock is a settable clock (Now, Step, SetTime).
func newClock() *clocktesting.FakeClock {
	return clocktesting.NewFakeClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
}

func testScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := corev1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}

// newFake returns a fake API server client, optionally with interceptors.
func newFake(funcs *interceptor.Funcs, objs ...client.Object) client.WithWatch {
	c := fake.NewClientBuilder().WithScheme(testScheme()).WithObjects(objs...).Build()
	if funcs != nil {
		return interceptor.NewClient(c, *funcs)
	}
	return c
}

// seedObj is a Seed with status.allocatable.shoots (none when alloc < 0).
func seedObj(name string, alloc int64) *api.Seed {
	s := &api.Seed{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if alloc >= 0 {
		s.Status.Allocatable = corev1.ResourceList{api.ResourceShoots: *resource.NewQuantity(alloc, resource.DecimalSI)}
	}
	return s
}

func shootObj(namespace, name, seed string) *api.Shoot {
	s := &api.Shoot{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	s.Spec.SeedName = &seed
	return s
}

// landscape is a replica's cache: the seeds and, on each, n Shoots
// "garden-old/<seed>-<i>".
func landscape(seeds map[string]int64, shoots map[string]int) *cache.Store {
	s := cache.NewStore(cache.Options{})
	for name, alloc := range seeds {
		s.Apply(seedObj(name, alloc))
	}
	for seed, n := range shoots {
		for i := range n {
			s.Apply(shootObj("garden-old", fmt.Sprintf("%s-%d", seed, i), seed))
		}
	}
	return s
}

func newTestReserver(t testing.TB, c client.Client, local LocalShoots, clk *clocktesting.FakeClock, mod ...func(*Options)) *Reserver {
	t.Helper()
	o := Options{Namespace: testNS, TTL: testTTL, Log: testr.New(t.(*testing.T))}
	if clk != nil {
		o.Now = clk.Now
	}
	for _, m := range mod {
		m(&o)
	}
	r, err := New(c, local, o)
	require.NoError(t, err)
	return r
}

// noLimits lifts Options.Limits above what a test reserves, for tests of
// something else.
func noLimits(o *Options) {
	o.Limits = cache.Limits{PerNamespace: 1 << 20, PerUser: 1 << 20, Total: 1 << 20}
}

// windowIsTTL makes the confirm window as long as the TTL, for tests of the
// TTL: an entry whose Shoot never shows up then counts until it expires.
func windowIsTTL(o *Options) { o.ConfirmWindow = o.TTL }

// entries returns the data of seed's reservation ConfigMap (nil if absent).
func entries(t testing.TB, c client.Client, seed string) map[string]string {
	t.Helper()
	cm := &corev1.ConfigMap{}
	err := c.Get(context.Background(), client.ObjectKey{Namespace: testNS, Name: ConfigMapName(seed)}, cm)
	if err != nil {
		require.True(t, isNotFound(err), "%v", err)
		return nil
	}
	if cm.Data == nil {
		return map[string]string{}
	}
	return cm.Data
}

func resourceVersion(t testing.TB, c client.Client, seed string) string {
	t.Helper()
	cm := &corev1.ConfigMap{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: testNS, Name: ConfigMapName(seed)}, cm); err != nil {
		return ""
	}
	return cm.ResourceVersion
}

func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }
