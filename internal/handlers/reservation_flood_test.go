package handlers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/metrics"
	"github.com/seedwarden/seedwarden/internal/seedreserve"
)

// Limits that hold without a NetworkPolicy or client
// authentication: anyone reaching the webhook sent ~330 forged CREATE
// reviews for a real Project's namespace to /mutate-shoots; each reserved a
// place, two seeds were full (100/100), and a real Shoot went to a seed in
// another region. Now a namespace holds at most
// reservations.maxPerNamespace unconfirmed reservations, a user
// reservations.maxPerUser and all namespaces reservations.maxTotal; beyond
// them nothing is reserved, and nothing is placed without a place held. A
// reservation whose Shoot never shows up ends with the confirm window, and
// sending the reviews again never keeps a place longer.

// floodStore is a Store of the aws CloudProfile, the Projects whose
// namespaces are given, and the seeds, on clock.
func floodStore(clock *clocktesting.FakeClock, limits cache.Limits, m *metrics.Recorder, namespaces []string, seeds ...*api.Seed) *cache.Store {
	s := cache.NewStore(cache.Options{Now: clock.Now, Limits: limits, Recorder: m})
	s.Apply(&api.CloudProfile{
		TypeMeta:   metav1.TypeMeta{APIVersion: "core.gardener.cloud/v1beta1", Kind: "CloudProfile"},
		ObjectMeta: metav1.ObjectMeta{Name: "aws"},
		Spec:       api.CloudProfileSpec{Type: "aws"},
	})
	for _, ns := range namespaces {
		s.Apply(&api.Project{ObjectMeta: metav1.ObjectMeta{Name: strings.TrimPrefix(ns, "garden-")}, Spec: api.ProjectSpec{Namespace: &ns}})
	}
	for _, sd := range seeds {
		s.Apply(sd)
	}
	return s
}

// inRegion moves a seed to another region.
func inRegion(region string) func(*api.Seed) {
	return func(s *api.Seed) {
		s.Spec.Provider.Region = region
		s.Spec.Provider.Zones = []string{region + "a", region + "b", region + "c"}
	}
}

// forgedReview is review{}.body() (the exact bytes of a real CREATE) with
// its own UID, in namespace ns (request and object).
func forgedReview(uid, ns string) string {
	return strings.ReplaceAll(review{uid: uid}.body(), `"namespace": "garden-dev"`, fmt.Sprintf(`"namespace": %q`, ns))
}

// postReview sends body to h as the API server would.
func postReview(t *testing.T, h http.Handler, body string) *admissionv1.AdmissionResponse {
	t.Helper()
	req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/mutate-shoots", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var out admissionv1.AdmissionReview
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out), rec.Body.String())
	require.NotNil(t, out.Response)
	return out.Response
}

// placedOn returns the seed the response sets, and whether it carries a
// reservation key.
func placedOn(t *testing.T, resp *admissionv1.AdmissionResponse) (seed string, reserved bool) {
	t.Helper()
	require.True(t, resp.Allowed, vMessage(resp))
	require.NotEmpty(t, resp.Patch, "placed")
	obj := applyPatch(t, shootJSON("", ""), resp.Patch)
	seed, _ = obj["spec"].(map[string]any)["seedName"].(string)
	annotations, _ := obj["metadata"].(map[string]any)["annotations"].(map[string]any)
	_, reserved = annotations[cache.AnnotationReservation]
	return seed, reserved
}

// outcome returns the seed the response sets ("" for none), whether the
// Shoot carries a reservation key, and how many unreserved warnings it has.
func outcome(t *testing.T, resp *admissionv1.AdmissionResponse) (seed string, reserved bool, warned int) {
	t.Helper()
	require.True(t, resp.Allowed, vMessage(resp))
	if warned = unreservedWarnings(resp); warned > 0 {
		if len(resp.Patch) > 0 {
			obj := applyPatch(t, shootJSON("", ""), resp.Patch)
			assert.NotContains(t, obj["spec"], "seedName", "no seed without a reservation")
		}
		return "", false, warned
	}
	seed, reserved = placedOn(t, resp)
	return seed, reserved, 0
}

func unreservedWarnings(resp *admissionv1.AdmissionResponse) int {
	n := 0
	for _, w := range resp.Warnings {
		if strings.HasPrefix(w, UnreservedWarningPrefix) {
			n++
		}
	}
	return n
}

// refusedCounts returns seedwarden_reservations_refused_total by
// "store/reason".
func refusedCounts(t *testing.T, reg prometheus.Gatherer) map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	out := map[string]float64{}
	for _, f := range families {
		if f.GetName() != metrics.ReservationsRefusedName {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			out[labels["store"]+"/"+labels["reason"]] = m.GetCounter().GetValue()
		}
	}
	return out
}

// sentBy is body with the request sent by user: forged reviews name any
// user they like.
func sentBy(body, user string) string {
	return strings.Replace(body, `"username": "jane.doe@example.com"`, fmt.Sprintf(`"username": %q`, user), 1)
}

// The flood as reported, 330 forged CREATE reviews in one namespace, from
// one user and from a user per review (a forger names any user): each limit
// bounds the places held to its own value, a real Shoot of another Project
// and user goes where it always went, and every place is free once the
// confirm window has passed, however often the reviews are sent again.
func TestForgedMutatingFloodIsBounded(t *testing.T) {
	perUser := cache.DefaultMaxReservationsPerUser
	perNamespace := cache.DefaultMaxReservationsPerNamespace
	for _, tc := range []struct {
		name        string
		limits      cache.Limits
		userPerSend bool
		// reserved: places the flood holds; realSeeds: where the real
		// Shoot may go.
		reserved  int64
		warned    int
		refused   map[string]float64
		realSeeds []string
	}{
		{"one user", cache.Limits{}, false, int64(perUser), 330 - perUser,
			map[string]float64{"memory/user": float64(330 - perUser)}, []string{"aws-eu1", "aws-eu2"}},
		{"a user per review", cache.Limits{}, true, int64(perNamespace), 330 - perNamespace,
			map[string]float64{"memory/namespace": float64(330 - perNamespace)}, []string{"aws-eu1", "aws-eu2"}},
		// The defect, as reported, when the limits are lifted: this is
		// what the default limits prevent.
		{"limits lifted", cache.Limits{PerNamespace: 1000, PerUser: 1000, Total: 1000}, true, 200, 0,
			map[string]float64{}, []string{"aws-us1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newVClock()
			reg := prometheus.NewPedanticRegistry()
			rec := metrics.New(reg)
			store := floodStore(clock, tc.limits, rec, []string{"garden-dev", "garden-prod"},
				vSeed("aws-eu1", 100), vSeed("aws-eu2", 100), vSeed("aws-us1", 1000, inRegion("us-east-1")))
			m := newMutator(t, &seedreserve.ClusterPlacer{Local: store}, nil)
			m.Projects, m.Metrics, m.Log = store, rec, logr.Discard()
			h := NewMutatingHTTPHandler(m, 0)
			sameRegion := func() int64 { return store.Usage("aws-eu1") + store.Usage("aws-eu2") }

			flood := func() (warned int) {
				for i := range 330 {
					body := forgedReview(fmt.Sprintf("00000000-0000-4000-8000-%012d", i), "garden-dev")
					if tc.userPerSend {
						body = sentBy(body, fmt.Sprintf("forger-%d", i))
					}
					seed, reserved, w := outcome(t, postReview(t, h, body))
					// Within the limit: placed and reserved; beyond it:
					// admitted without a seed, never placed unreserved.
					assert.Equal(t, w == 0, seed != "" && reserved, "review %d", i)
					warned += w
				}
				return warned
			}
			assert.Equal(t, tc.warned, flood())
			assert.Equal(t, tc.reserved, sameRegion())
			assert.Equal(t, tc.refused, refusedCounts(t, reg))

			// A real Shoot of another Project and user goes where it
			// always went, and reserves its place.
			seed, reserved := placedOn(t, postReview(t, h, sentBy(forgedReview("real-1", "garden-prod"), "alice@example.com")))
			assert.Contains(t, tc.realSeeds, seed)
			assert.True(t, reserved)
			_, held := store.Reservation("real-1")
			assert.True(t, held)
			if tc.warned == 0 {
				return
			}

			// The same reviews sent again within the confirm window hold
			// nothing more nor longer: once the window has passed since
			// the first sending every place is free.
			clock.Step(cache.DefaultConfirmWindow - time.Second)
			flood()
			assert.Equal(t, tc.reserved, sameRegion()-1, "the flood holds no more places")
			clock.Step(time.Second)
			assert.Zero(t, sameRegion(), "free one confirm window after the first sending")
			n, total := store.ReservationCounts("garden-dev")
			assert.Zero(t, n)
			assert.Zero(t, total)
		})
	}
}

// Spread over many Projects' namespaces, from a user per review, the flood
// holds at most reservations.maxTotal places and one more per namespace that
// held none when the total was reached. A real Shoot of a Project with
// nothing in flight is still placed; a second one while the first is
// unconfirmed is admitted without a seed, with a warning (the retry
// controller places it), never placed unreserved; once the confirm window
// has passed the next reserves again.
func TestForgedMutatingFloodOverManyNamespaces(t *testing.T) {
	clock := newVClock()
	reg := prometheus.NewPedanticRegistry()
	rec := metrics.New(reg)
	var namespaces []string
	for i := range 22 {
		namespaces = append(namespaces, fmt.Sprintf("garden-p%02d", i))
	}
	limits := cache.Limits{PerNamespace: 50, Total: 1000}
	store := floodStore(clock, limits, rec, append(namespaces, "garden-prod"),
		vSeed("aws-eu1", 1000), vSeed("aws-eu2", 1000), vSeed("aws-us1", 1000, inRegion("us-east-1")))
	m := newMutator(t, &seedreserve.ClusterPlacer{Local: store}, nil)
	m.Projects, m.Metrics, m.Log = store, rec, logr.Discard()
	h := NewMutatingHTTPHandler(m, 0)

	warned := 0
	for i, ns := range namespaces {
		for j := range 50 {
			body := sentBy(forgedReview(fmt.Sprintf("forged-%d-%d", i, j), ns), fmt.Sprintf("forger-%d-%d", i, j))
			_, _, w := outcome(t, postReview(t, h, body))
			warned += w
		}
	}
	// 20 namespaces reach the total; the last two get one place each.
	assert.Equal(t, 2*49, warned, "beyond the total limit: no seed")
	assert.Equal(t, int64(1002), store.Usage("aws-eu1")+store.Usage("aws-eu2"))

	real := func(uid string) *admissionv1.AdmissionResponse {
		return postReview(t, h, sentBy(forgedReview(uid, "garden-prod"), "alice@example.com"))
	}
	seed, reserved, _ := outcome(t, real("real-1"))
	assert.Contains(t, []string{"aws-eu1", "aws-eu2"}, seed)
	assert.True(t, reserved, "a namespace with nothing in flight is not refused by the total")

	resp := real("real-2")
	seed, _, warned = outcome(t, resp)
	assert.Empty(t, seed)
	assert.Equal(t, 1, warned)
	assert.Contains(t, resp.Warnings[0], "the Shoot is admitted without a seed and the retry controller places it")
	assert.Equal(t, map[string]float64{"memory/total": 2*49 + 1}, refusedCounts(t, reg))

	clock.Step(cache.DefaultConfirmWindow)
	assert.Zero(t, store.Usage("aws-eu1")+store.Usage("aws-eu2"))
	seed, reserved, _ = outcome(t, real("real-3"))
	assert.Contains(t, []string{"aws-eu1", "aws-eu2"}, seed)
	assert.True(t, reserved, "once the window has passed the real Shoot reserves again")
}

// Forged /validate-shoot-capacity reviews (a user's own spec.seedName) in a
// Project's namespace, from a user per review, reserve up to the
// namespace's limit; the rest are denied, since a placement admitted without
// a reservation holds no place. In another namespace one user reserves up to
// the per-user limit. All are free once the confirm window has passed.
func TestForgedCapacityFloodIsBounded(t *testing.T) {
	clock := newVClock()
	rec := metrics.New(nil)
	store := floodStore(clock, cache.Limits{}, rec, []string{"garden-dev", "garden-prod"}, vSeed("aws-eu1", 1000))
	v := &ShootCapacityValidator{Store: store, Projects: store, Log: logr.Discard()}
	send := func(ns, name, user string) *admissionv1.AdmissionResponse {
		r := vReview{name: name, namespace: ns, object: namedShoot(name, "aws-eu1"), user: &authenticationv1.UserInfo{Username: user}}
		return vServe(t, v, strings.ReplaceAll(r.body(t), `"namespace":"garden-dev"`, fmt.Sprintf(`"namespace":%q`, ns)))
	}
	for i := range 330 {
		resp := send("garden-dev", fmt.Sprintf("forged-%d", i), fmt.Sprintf("forger-%d", i))
		require.Equal(t, i < cache.DefaultMaxReservationsPerNamespace, resp.Allowed, "review %d: %s", i, vMessage(resp))
		if !resp.Allowed {
			require.Contains(t, vMessage(resp), "reservations.maxPerNamespace")
		}
		require.Zero(t, unreservedWarnings(resp))
	}
	assert.Equal(t, int64(cache.DefaultMaxReservationsPerNamespace), store.Usage("aws-eu1"))

	for i := range cache.DefaultMaxReservationsPerUser + 5 {
		resp := send("garden-prod", fmt.Sprintf("real-%d", i), "alice@example.com")
		require.Equal(t, i < cache.DefaultMaxReservationsPerUser, resp.Allowed, "review %d: %s", i, vMessage(resp))
		if !resp.Allowed {
			require.Contains(t, vMessage(resp), `user "alice@example.com" holds 20 unconfirmed reservations, the limit (reservations.maxPerUser, and 2 more per confirmed one)`)
		}
	}
	_, held := store.Reservation(cache.ManualReservationKey("garden-prod", "real-0"))
	assert.True(t, held, "another namespace reserves")

	clock.Step(cache.DefaultConfirmWindow)
	assert.Zero(t, store.Usage("aws-eu1"))
}

// With capacity.coordination apiserver, the flood writes no more
// reservation ConfigMap entries than the limits allow, whether it goes to
// /mutate-shoots or /validate-shoot-capacity, and a real Shoot of another
// Project still reserves across replicas.
func TestForgedFloodClusterMode(t *testing.T) {
	clock := newVClock()
	rec := metrics.New(nil)
	store := floodStore(clock, cache.Limits{}, rec, []string{"garden-dev", "garden-prod"}, vSeed("aws-eu1", 1000), vSeed("aws-eu2", 1000))
	scheme := runtime.NewScheme()
	require.NoError(t, corev1.AddToScheme(scheme))
	apiServer := fake.NewClientBuilder().WithScheme(scheme).Build()
	r, err := seedreserve.New(apiServer, store, seedreserve.Options{Namespace: "seedwarden", Now: clock.Now, Timeout: time.Minute, Log: logr.Discard()})
	require.NoError(t, err)
	m := newMutator(t, &seedreserve.ClusterPlacer{Local: store, Cluster: r, Timeout: time.Minute}, nil)
	m.Projects, m.Metrics, m.Log = store, rec, logr.Discard()
	h := NewMutatingHTTPHandler(m, 0)
	v := &ShootCapacityValidator{Store: store, Projects: store, Cluster: r, Log: logr.Discard()}
	named := func(body, name string) string {
		return strings.ReplaceAll(body, `"name": "crazy-botany"`, fmt.Sprintf(`"name": %q`, name))
	}
	// entries counts the live entries of the ConfigMaps by namespace.
	entries := func() map[string]int {
		out := map[string]int{}
		for _, seed := range []string{"aws-eu1", "aws-eu2"} {
			cm := &corev1.ConfigMap{}
			if err := apiServer.Get(t.Context(), client.ObjectKey{Namespace: "seedwarden", Name: seedreserve.ConfigMapName(seed)}, cm); err != nil {
				continue
			}
			for k, v := range cm.Data {
				expiry, _, _ := strings.Cut(v, ";") // then the Shoot's identity
				exp, err := time.Parse(time.RFC3339, expiry)
				require.NoError(t, err)
				if ns, _, _ := strings.Cut(k, "."); exp.After(clock.Now()) {
					out[ns]++
				}
			}
		}
		return out
	}

	for i := range 330 {
		body := sentBy(forgedReview(fmt.Sprintf("uid-%d", i), "garden-dev"), fmt.Sprintf("forger-%d", i))
		resp := postReview(t, h, named(body, fmt.Sprintf("forged-%d", i)))
		seed, reserved, warned := outcome(t, resp)
		require.Equal(t, i < cache.DefaultMaxReservationsPerNamespace, seed != "" && reserved && warned == 0, "review %d", i)
	}
	assert.Equal(t, map[string]int{"garden-dev": cache.DefaultMaxReservationsPerNamespace}, entries())

	for i := range 330 {
		name := fmt.Sprintf("forged-capacity-%d", i)
		rv := vReview{name: name, object: namedShoot(name, "aws-eu1"), user: binderUser}
		resp := vServe(t, v, rv.body(t))
		require.False(t, resp.Allowed, "at the limit already: no place can be held")
		require.Contains(t, vMessage(resp), "reservations.maxPerNamespace")
	}
	assert.Equal(t, map[string]int{"garden-dev": cache.DefaultMaxReservationsPerNamespace}, entries())

	seed, reserved := placedOn(t, postReview(t, h, named(forgedReview("real-1", "garden-prod"), "real")))
	assert.Contains(t, []string{"aws-eu1", "aws-eu2"}, seed)
	assert.True(t, reserved)
	assert.Equal(t, map[string]int{"garden-dev": cache.DefaultMaxReservationsPerNamespace, "garden-prod": 1}, entries())

	// Once the confirm window has passed without their Shoots, the flood's
	// slots are free again and the next writer of each seed drops its
	// entries.
	clock.Step(cache.DefaultConfirmWindow)
	for _, seed := range []string{"aws-eu1", "aws-eu2"} {
		name := "later-" + seed
		resp := vServe(t, v, vReview{name: name, object: namedShoot(name, seed), user: binderUser}.body(t))
		require.True(t, resp.Allowed, vMessage(resp))
		assert.Zero(t, unreservedWarnings(resp))
	}
	assert.Equal(t, map[string]int{"garden-dev": 2}, entries())
}
