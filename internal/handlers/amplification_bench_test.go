package handlers

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	"sigs.k8s.io/yaml"

	"github.com/seedwarden/seedwarden/internal/placement"
	"github.com/seedwarden/seedwarden/internal/seedreserve"
)

// What one request costs each webhook in allocated bytes, per byte of its
// body: a review at the body limit (server.maxRequestBytes, 3 MiB) whose
// bytes are spent on one repeated element of the object or the request
// (a shape), served as cmd/webhook serves it (less the request guard, which
// only admits or refuses the body).

// ampBodyBytes is the size of the reviews: just under the default body limit
// (server.maxRequestBytes, 3,145,728).
const ampBodyBytes = 3145000

// ampShape spends a review's bytes on element, repeated at marker.
type ampShape struct {
	name, marker, element string
}

// The markers of ampShoot and ampReview, each where a tenant can repeat an
// element: in the object's metadata, its spec, or the request.
const (
	mkManagedFields   = "@managedFields"
	mkOwnerReferences = "@ownerReferences"
	mkFinalizers      = "@finalizers"
	mkLabels          = "@labels"
	mkAnnotations     = "@annotations"
	mkWorkers         = "@workers"
	mkZones           = "@zones"
	mkTolerations     = "@tolerations"
	mkExpressions     = "@matchExpressions"
	mkExtensions      = "@extensions"
	mkGroups          = "@groups"
	mkExtra           = "@extra"
	mkData            = "@data"
)

// ampShapes: the shapes of the Shoot reviews.
var ampShapes = []ampShape{
	{"managedFields", mkManagedFields, `,{}`},
	{"ownerReferences", mkOwnerReferences, `,{}`},
	{"workers", mkWorkers, `,{}`},
	{"zones", mkZones, `,""`},
	{"tolerations", mkTolerations, `,{}`},
	{"matchExpressions", mkExpressions, `,{}`},
	{"extensions", mkExtensions, `,{}`},
	{"finalizers", mkFinalizers, `,""`},
	{"labels", mkLabels, `,"%x":""`},
	{"annotations", mkAnnotations, `,"%x":""`},
	{"groups", mkGroups, `,""`},
	{"extra", mkExtra, `,""`},
	// Elements that differ, which no set makes fewer.
	{"distinct-workers", mkWorkers, `,{"name":"%x"}`},
	{"distinct-zones", mkZones, `,"%x"`},
	{"distinct-tolerations", mkTolerations, `,{"key":"%x"}`},
	{"distinct-groups", mkGroups, `,"%x"`},
}

// ampShoot is a Shoot with every marker in place; each marker is replaced by
// its elements or removed.
const ampShoot = `{"apiVersion":"core.gardener.cloud/v1beta1","kind":"Shoot",` +
	`"metadata":{"name":"big","namespace":"garden-dev","uid":"0b6b8f4e-3c1d-4e2a-9f5b-7a8c9d0e1f2a",` +
	`"annotations":{"a":"b"` + mkAnnotations + `},"labels":{"l":"v"` + mkLabels + `},"finalizers":["f"` + mkFinalizers + `],` +
	`"managedFields":[{"manager":"m"}` + mkManagedFields + `],"ownerReferences":[{"name":"o"}` + mkOwnerReferences + `]},` +
	`"spec":{"cloudProfile":{"name":"aws"},"region":"eu-west-1",` +
	`"provider":{"type":"aws","workers":[{"name":"pool","zones":["eu-west-1a"` + mkZones + `]}` + mkWorkers + `]},` +
	`"tolerations":[{"key":"t"}` + mkTolerations + `],"seedSelector":{"matchExpressions":[{"key":"k","operator":"Exists"}` + mkExpressions + `]},` +
	`"extensions":[{"type":"e"}` + mkExtensions + `],"seedName":"aws-eu1"},"status":{}}`

// ampReview is a CREATE review of object by a binder, in dry-run so that
// no place is held from one iteration to the next.
func ampReview(resource, kind, object string) string {
	return `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d",` +
		`"kind":{"group":"` + kind + `},"resource":{"group":"` + resource + `},` +
		`"name":"big","namespace":"garden-dev","operation":"CREATE",` +
		`"userInfo":{"username":"` + vBinder + `","groups":["system:authenticated"` + mkGroups + `],"extra":{"k":["v"` + mkExtra + `]}},` +
		`"object":` + object + `,"dryRun":true}}`
}

func ampShootReview(object string) string {
	return ampReview(`core.gardener.cloud","version":"v1beta1","resource":"shoots"`, `core.gardener.cloud","version":"v1beta1","kind":"Shoot"`, object)
}

// fillShapes replaces each marker of shapes with as many of its elements as
// share the room left in n bytes (evenly), and removes the other markers.
func fillShapes(t testing.TB, template string, n int, shapes ...ampShape) []byte {
	t.Helper()
	bare := template
	for _, m := range []string{mkManagedFields, mkOwnerReferences, mkFinalizers, mkLabels, mkAnnotations, mkWorkers, mkZones, mkTolerations, mkExpressions, mkExtensions, mkGroups, mkExtra, mkData} {
		bare = strings.ReplaceAll(bare, m, "")
	}
	room := n - len(bare)
	out := template
	for _, s := range shapes {
		var elems strings.Builder
		for i := 0; ; i++ {
			e := s.element
			if strings.Contains(e, "%x") {
				e = strings.ReplaceAll(e, "%x", strconv.FormatInt(int64(i), 36))
			}
			if elems.Len()+len(e) > room/len(shapes) {
				break
			}
			elems.WriteString(e)
		}
		out = strings.Replace(out, s.marker, elems.String()+s.marker, 1)
	}
	for _, m := range []string{mkManagedFields, mkOwnerReferences, mkFinalizers, mkLabels, mkAnnotations, mkWorkers, mkZones, mkTolerations, mkExpressions, mkExtensions, mkGroups, mkExtra, mkData} {
		out = strings.ReplaceAll(out, m, "")
	}
	require.LessOrEqual(t, len(out), n)
	require.Greater(t, len(out), n*99/100)
	return []byte(out)
}

// ampWebhook is a webhook path as cmd/webhook serves it.
type ampWebhook struct {
	name    string
	handler http.Handler
}

func ampValidating(h admission.Handler) http.Handler {
	return RequireAdmissionReviewV1(NewAdmissionWebhook(h))
}

// ampShootWebhooks are the webhooks a Shoot review reaches.
func ampShootWebhooks(t testing.TB) []ampWebhook {
	store := vStore(bindingLandscape()...)
	return []ampWebhook{
		{"mutating", NewMutatingHTTPHandler(&ShootMutator{
			Placer:        &seedreserve.ClusterPlacer{Local: store},
			Options:       placement.Options{Strategy: placement.MinimalDistance, NetworkMode: placement.Disjoint},
			SchedulerName: "default-scheduler",
			Log:           logr.Discard(),
		}, 3145728)},
		{"binding", ampValidating(&ShootBindingValidator{
			Landscape:  store,
			Authorizer: &fakeAuthorizer{allowed: map[string]bool{vBinder: true}},
			Signer:     vSigner(t, newVClock()),
			Log:        logr.Discard(),
		})},
		{"capacity", ampValidating(&ShootCapacityValidator{Store: store, Log: logr.Discard()})},
		{"resource-size", ampValidating(&ResourceSizeValidator{
			Limits: []SizeLimit{{ResourceRule: ResourceRule{APIGroups: []string{"*"}, APIVersions: []string{"*"}, Resources: []string{"shoots", "secrets"}}, Size: "100Ki", Bytes: 100 << 10}},
			Log:    logr.Discard(),
		})},
	}
}

// ampOtherWebhooks are the webhooks of other objects, each with the review
// of its object.
func ampOtherWebhooks(b testing.TB) []struct {
	ampWebhook
	template string
	shapes   []ampShape
} {
	secret := `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","namespace":"garden-dev",` +
		`"managedFields":[{}` + mkManagedFields + `],"ownerReferences":[{}` + mkOwnerReferences + `],"labels":{"l":"v"` + mkLabels + `}},` +
		`"data":{"a":""` + mkData + `}}`
	namespace := `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"garden-dev",` +
		`"managedFields":[{}` + mkManagedFields + `],"ownerReferences":[{}` + mkOwnerReferences + `],"labels":{"l":"v"` + mkLabels + `}}}`
	meta := []ampShape{{"managedFields", mkManagedFields, `,{}`}, {"ownerReferences", mkOwnerReferences, `,{}`}, {"labels", mkLabels, `,"%x":""`}}
	// A binding that moves the Shoot compares the specs member by member.
	moved := strings.Replace(ampShoot, `"seedName":"aws-eu1"`, `"seedName":"aws-eu2"`, 1)
	old := `{"apiVersion":"core.gardener.cloud/v1beta1","kind":"Shoot","metadata":{"name":"big","namespace":"garden-dev"},` +
		`"spec":{"cloudProfile":{"name":"aws"},"region":"eu-west-1","provider":{"type":"aws"},"seedName":"aws-eu1"}}`
	move := strings.Replace(strings.Replace(ampShootReview(moved), `"operation":"CREATE"`, `"operation":"UPDATE","subResource":"binding"`, 1),
		`"dryRun":true`, `"oldObject":`+old+`,"dryRun":true`, 1)
	return []struct {
		ampWebhook
		template string
		shapes   []ampShape
	}{
		{ampWebhook{"kubeconfig-secret", ampValidating(&KubeconfigSecretValidator{Log: logr.Discard()})},
			ampReview(`","version":"v1","resource":"secrets"`, `","version":"v1","kind":"Secret"`, secret),
			append(meta, ampShape{"data", mkData, `,"%x":""`})},
		{ampWebhook{"binding-move", ampShootWebhooks(b)[1].handler}, move,
			[]ampShape{{"extensions", mkExtensions, `,{}`}, {"annotations", mkAnnotations, `,"%x":""`}}},
		{ampWebhook{"namespace-deletion", ampValidating(&NamespaceDeletionValidator{Shoots: vStore(), Projects: vStore(), Log: logr.Discard()})},
			strings.Replace(strings.Replace(ampReview(`","version":"v1","resource":"namespaces"`, `","version":"v1","kind":"Namespace"`, "null"),
				`"operation":"CREATE"`, `"operation":"DELETE"`, 1), `"object":null`, `"oldObject":`+namespace, 1),
			meta},
	}
}

// serveAmp serves body once and returns the bytes allocated meanwhile.
func serveAmp(b *testing.B, h http.Handler, body []byte) uint64 {
	var before, after runtime.MemStats
	r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	runtime.ReadMemStats(&before)
	h.ServeHTTP(w, r)
	runtime.ReadMemStats(&after)
	if w.Code != http.StatusOK || !bytes.Contains(w.Body.Bytes(), []byte(`"uid":"9a8b7c6d`)) {
		b.Fatalf("no review answered: %d %.300s", w.Code, w.Body.String())
	}
	return after.TotalAlloc - before.TotalAlloc
}

// BenchmarkDecodeAmplification reports each webhook's allocated bytes per
// body byte (B/body-B) for a review at the body limit of each shape, and
// of the mix of all shapes. Reproduce (BENCHMARKS.md §26):
//
//	go test ./internal/handlers -run '^$' -bench DecodeAmplification -benchtime 2x
func BenchmarkDecodeAmplification(b *testing.B) {
	logf.SetLogger(logr.Discard())
	run := func(name string, h http.Handler, body []byte) {
		b.Run(name, func(b *testing.B) {
			var total uint64
			for b.Loop() {
				total += serveAmp(b, h, body)
			}
			b.ReportMetric(float64(total)/float64(b.N)/float64(len(body)), "B/body-B")
			b.ReportMetric(float64(total)/float64(b.N)/(1<<20), "MiB/op")
		})
	}
	mix := append([]ampShape{}, ampShapes...)
	for _, wh := range ampShootWebhooks(b) {
		for _, s := range append(ampShapes, ampShape{name: "mix"}) {
			shapes := []ampShape{s}
			if s.name == "mix" {
				shapes = mix
			}
			run(wh.name+"/"+s.name, wh.handler, fillShapes(b, ampShootReview(ampShoot), ampBodyBytes, shapes...))
		}
	}
	for _, wh := range ampOtherWebhooks(b) {
		for _, s := range append(wh.shapes, ampShape{name: "mix"}) {
			shapes := []ampShape{s}
			if s.name == "mix" {
				shapes = wh.shapes
			}
			run(wh.name+"/"+s.name, wh.handler, fillShapes(b, wh.template, ampBodyBytes, shapes...))
		}
	}
}

// shippedMemoryLimit is the container memory limit and GOMEMLIMIT of the
// deployment the project ships.
func shippedMemoryLimit(t testing.TB) (limit int64, goMemLimit string) {
	t.Helper()
	raw, err := os.ReadFile("../../deploy/manifests/deployment.yaml")
	require.NoError(t, err)
	var d appsv1.Deployment
	require.NoError(t, yaml.Unmarshal(raw, &d))
	c := d.Spec.Template.Spec.Containers[0]
	for _, e := range c.Env {
		if e.Name == "GOMEMLIMIT" {
			goMemLimit = e.Value
		}
	}
	return c.Resources.Limits.Memory().Value(), goMemLimit
}

// BenchmarkWorstMixPeakHeap serves what the default request budget
// (server.maxRequestBytesInFlight 4 MiB, 1 MiB of it kept for requests of
// at most 64 KiB) lets in at once: one review of a shape (or of all mixed)
// at the body limit, and 16 of 64,000 bytes, concurrently, to one webhook; it
// reports the peak heap in use ("peak-heap-MiB", heap objects sampled with
// runtime/metrics while the requests run) under the GOMEMLIMIT the
// deployment ships, and fails above half the deployment's memory limit.
// Reproduce (BENCHMARKS.md §26):
//
//	go test ./internal/handlers -run '^$' -bench WorstMixPeakHeap -benchtime 3x
func BenchmarkWorstMixPeakHeap(b *testing.B) {
	logf.SetLogger(logr.Discard())
	limit, goMemLimit := shippedMemoryLimit(b)
	var memLimit resource.Quantity
	if goMemLimit != "" {
		memLimit = resource.MustParse(strings.TrimSuffix(goMemLimit, "B"))
	}
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(memLimit.Value()))
	for _, wh := range ampShootWebhooks(b) {
		for _, s := range append(ampShapes, ampShape{name: "mix"}) {
			shapes := []ampShape{s}
			if s.name == "mix" {
				shapes = ampShapes
			}
			large := fillShapes(b, ampShootReview(ampShoot), ampBodyBytes, shapes...)
			small := fillShapes(b, ampShootReview(ampShoot), 64000, shapes...)
			b.Run(wh.name+"/"+s.name, func(b *testing.B) {
				var peak uint64
				for b.Loop() {
					runtime.GC()
					peak = max(peak, peakHeapWhile(func() {
						var wg sync.WaitGroup
						for i := range 17 {
							body := small
							if i == 0 {
								body = large
							}
							wg.Go(func() { serveAmp(b, wh.handler, body) })
						}
						wg.Wait()
					}))
				}
				b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
				if int64(peak) > limit/2 {
					b.Errorf("peak heap in use %d MiB, over half the shipped memory limit (%d MiB)", peak>>20, limit>>21)
				}
			})
		}
	}
}

// peakHeapWhile runs f and returns the most heap in use (bytes of heap
// objects, live or not yet swept) seen while it ran.
func peakHeapWhile(f func()) uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var peak atomic.Uint64
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-time.After(100 * time.Microsecond):
			}
		}
	}()
	f()
	close(done)
	<-sampled
	return peak.Load()
}
