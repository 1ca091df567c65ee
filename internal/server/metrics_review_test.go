package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// fakeClock is the reviewer's time, moved by the test.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) step(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// fakeReviews is an API server's TokenReviews and SubjectAccessReviews:
// tokens maps a token to its user, readers the users who may get /metrics.
// While gate is set, each review waits for a value on it (a slow API
// server); failing makes every review fail.
type fakeReviews struct {
	mu           sync.Mutex
	tokens       map[string]string
	readers      map[string]bool
	evalErr      string
	failing      error
	gate         chan struct{}
	tokenReviews int
	accessAsked  int
}

func (f *fakeReviews) wait(ctx context.Context) error {
	f.mu.Lock()
	gate, fail := f.gate, f.failing
	f.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return fail
}

func (f *fakeReviews) set(change func(*fakeReviews)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	change(f)
}

func (f *fakeReviews) counts() (tokens, access int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.tokenReviews, f.accessAsked
}

type fakeTokenReviews struct{ *fakeReviews }

func (f fakeTokenReviews) Create(ctx context.Context, tr *authenticationv1.TokenReview, _ metav1.CreateOptions) (*authenticationv1.TokenReview, error) {
	f.mu.Lock()
	f.tokenReviews++
	f.mu.Unlock()
	if err := f.wait(ctx); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	out := tr.DeepCopy()
	if name, ok := f.tokens[tr.Spec.Token]; ok {
		out.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: authenticationv1.UserInfo{Username: name}}
	} else {
		out.Status.Error = "[invalid bearer token, token lookup failed]"
	}
	return out, nil
}

type fakeAccessReviews struct{ *fakeReviews }

func (f fakeAccessReviews) Create(ctx context.Context, sar *authorizationv1.SubjectAccessReview, _ metav1.CreateOptions) (*authorizationv1.SubjectAccessReview, error) {
	f.mu.Lock()
	f.accessAsked++
	f.mu.Unlock()
	if err := f.wait(ctx); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	out := sar.DeepCopy()
	nr := sar.Spec.NonResourceAttributes
	out.Status.Allowed = f.readers[sar.Spec.User] && nr != nil && nr.Verb == "get" && nr.Path == "/metrics" &&
		strings.Contains(strings.Join(sar.Spec.Groups, ","), "system:authenticated")
	if !out.Status.Allowed {
		out.Status.EvaluationError = f.evalErr
	}
	return out, nil
}

// reviewedScrapes is a filter over fake reviews on a fake clock.
type reviewedScrapes struct {
	api   *fakeReviews
	clock *fakeClock
	r     *metricsReviewer
	h     http.Handler
}

func newReviewedScrapes(t *testing.T) *reviewedScrapes {
	t.Helper()
	api := &fakeReviews{tokens: map[string]string{"prometheus-token": "prometheus", "nobody-token": "nobody"}, readers: map[string]bool{"prometheus": true}}
	clock := &fakeClock{t: time.Date(2026, 12, 2, 21, 0, 0, 0, time.UTC)}
	r := newMetricsReviewer(fakeTokenReviews{api}, fakeAccessReviews{api}, clock.now)
	h, err := authFilter(r)(logr.Discard(), http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("seedwarden_up 1\n")) }))
	require.NoError(t, err)
	return &reviewedScrapes{api: api, clock: clock, r: r, h: h}
}

// scrape is one GET /metrics with token; it returns the status and how long
// the answer took.
func (s *reviewedScrapes) scrape(token string) (int, time.Duration) {
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	rec := httptest.NewRecorder()
	start := time.Now()
	s.h.ServeHTTP(rec, req)
	return rec.Code, time.Since(start)
}

// idle waits until no review is under way (a background refresh ended).
func (s *reviewedScrapes) idle(t *testing.T) {
	t.Helper()
	require.Eventually(t, func() bool {
		s.r.mu.Lock()
		defer s.r.mu.Unlock()
		return len(s.r.asking) == 0
	}, 5*time.Second, time.Millisecond)
}

// The API server slow: the first scrape waits for the reviews, the next ones
// are answered at once, also after MetricsReviewRefresh, while the review is
// asked again in the background (before issue 37 the scrape after the
// cache's minute waited for a TokenReview again); that refresh replaces the
// answer, so a revoked token is refused from the next scrape on.
func TestMetricsScrapeFastWhileReviewSlow(t *testing.T) {
	s := newReviewedScrapes(t)
	gate := make(chan struct{})
	s.api.set(func(f *fakeReviews) { f.gate = gate })
	const slow = 300 * time.Millisecond
	go func() { time.Sleep(slow); gate <- struct{}{}; gate <- struct{}{} }()
	code, took := s.scrape("prometheus-token")
	require.Equal(t, http.StatusOK, code)
	assert.GreaterOrEqual(t, took, slow, "the first scrape cannot be answered before the API server")

	for _, after := range []time.Duration{time.Second, MetricsReviewRefresh, 30 * time.Second} {
		s.clock.step(after)
		code, took = s.scrape("prometheus-token")
		assert.Equal(t, http.StatusOK, code)
		assert.Less(t, took, slow/3, "a scrape %s later waited for the API server", after)
	}
	require.Eventually(t, func() bool { n, _ := s.api.counts(); return n == 2 }, 5*time.Second, time.Millisecond,
		"one review at first, one refresh after MetricsReviewRefresh (waiting for the API server)")
	_, access := s.api.counts()
	assert.Equal(t, 1, access)

	// The token is revoked; the refresh under way (answered now) says so.
	s.api.set(func(f *fakeReviews) { delete(f.tokens, "prometheus-token") })
	gate <- struct{}{}
	s.idle(t)
	code, _ = s.scrape("prometheus-token")
	assert.Equal(t, http.StatusUnauthorized, code, "a revoked token still served after its refresh")
}

// The API server down: an allowed answer is used until MetricsAllowTTL after
// its last review, then the scrape is refused (a failed review is 401); a
// revoked binding is refused from the first refresh after
// MetricsReviewRefresh.
func TestMetricsReviewExpiry(t *testing.T) {
	t.Run("API server down", func(t *testing.T) {
		s := newReviewedScrapes(t)
		code, _ := s.scrape("prometheus-token")
		require.Equal(t, http.StatusOK, code)
		s.api.set(func(f *fakeReviews) { f.failing = errors.New("connection refused") })
		for elapsed := 30 * time.Second; elapsed < MetricsAllowTTL; elapsed += 30 * time.Second {
			s.clock.step(30 * time.Second)
			code, _ = s.scrape("prometheus-token")
			require.Equal(t, http.StatusOK, code, "%s after the last review", elapsed)
			s.idle(t)
		}
		s.clock.step(30*time.Second + time.Millisecond)
		code, _ = s.scrape("prometheus-token")
		assert.Equal(t, http.StatusUnauthorized, code, "an answer older than MetricsAllowTTL was used")
	})
	t.Run("binding revoked", func(t *testing.T) {
		s := newReviewedScrapes(t)
		code, _ := s.scrape("prometheus-token")
		require.Equal(t, http.StatusOK, code)
		s.api.set(func(f *fakeReviews) { f.readers = nil })
		s.clock.step(MetricsReviewRefresh - time.Second)
		code, _ = s.scrape("prometheus-token")
		assert.Equal(t, http.StatusOK, code, "within MetricsReviewRefresh the cached answer holds")
		s.clock.step(time.Second)
		code, _ = s.scrape("prometheus-token") // served, and refreshed
		assert.Equal(t, http.StatusOK, code)
		s.idle(t)
		code, _ = s.scrape("prometheus-token")
		assert.Equal(t, http.StatusForbidden, code)
	})
}

// Refusals are kept for MetricsDenyTTL (a new binding works after it);
// failed reviews and denials with an evaluation error are not kept at all.
func TestMetricsReviewRefusals(t *testing.T) {
	for _, tc := range []struct {
		name   string
		token  string
		setup  func(*fakeReviews)
		want   int
		cached bool
	}{
		{"token refused", "made-up", nil, http.StatusUnauthorized, true},
		{"not authorized", "nobody-token", nil, http.StatusForbidden, true},
		{"TokenReview fails", "prometheus-token", func(f *fakeReviews) { f.failing = errors.New("connection refused") }, http.StatusUnauthorized, false},
		{"evaluation error", "nobody-token", func(f *fakeReviews) { f.evalErr = "webhook authorizer timed out" }, http.StatusForbidden, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newReviewedScrapes(t)
			if tc.setup != nil {
				s.api.set(tc.setup)
			}
			code, _ := s.scrape(tc.token)
			require.Equal(t, tc.want, code)
			before, _ := s.api.counts()
			code, _ = s.scrape(tc.token)
			assert.Equal(t, tc.want, code)
			again, _ := s.api.counts()
			assert.Equal(t, tc.cached, again == before, "asked again: %v", again != before)

			// Fixed meanwhile (a new token, a new binding, the API server
			// back): answered anew once the refusal has expired.
			s.api.set(func(f *fakeReviews) {
				f.failing, f.evalErr = nil, ""
				f.tokens["made-up"] = "nobody"
				f.readers["nobody"] = true
			})
			s.clock.step(MetricsDenyTTL + time.Millisecond)
			code, _ = s.scrape(tc.token)
			assert.Equal(t, http.StatusOK, code)
		})
	}
}

// A flood of made-up tokens (anyone who reaches the port) fills the refused
// cache only: the scraper's answer stays cached.
func TestMetricsReviewFloodKeepsScraper(t *testing.T) {
	s := newReviewedScrapes(t)
	code, _ := s.scrape("prometheus-token")
	require.Equal(t, http.StatusOK, code)
	for i := range maxRefusedReviews + 100 {
		code, _ = s.scrape(fmt.Sprintf("made-up-%d", i))
		require.Equal(t, http.StatusUnauthorized, code)
	}
	assert.Equal(t, maxRefusedReviews, len(s.r.refused.Keys()), "the refused cache is bounded")
	before, _ := s.api.counts()
	code, _ = s.scrape("prometheus-token")
	assert.Equal(t, http.StatusOK, code)
	after, _ := s.api.counts()
	assert.Equal(t, before, after, "the scraper's answer was evicted by made-up tokens")
}

// Concurrent scrapes with one token ask the API server once.
func TestMetricsReviewOneQuestionAtATime(t *testing.T) {
	s := newReviewedScrapes(t)
	gate := make(chan struct{})
	s.api.set(func(f *fakeReviews) { f.gate = gate })
	var wg sync.WaitGroup
	codes := make([]int, 8)
	for i := range codes {
		wg.Add(1)
		go func() { defer wg.Done(); codes[i], _ = s.scrape("prometheus-token") }()
	}
	require.Eventually(t, func() bool { n, _ := s.api.counts(); return n == 1 }, 5*time.Second, time.Millisecond)
	time.Sleep(50 * time.Millisecond) // the others reach the wait
	gate <- struct{}{}
	gate <- struct{}{}
	wg.Wait()
	tokens, access := s.api.counts()
	assert.Equal(t, []int{200, 200, 200, 200, 200, 200, 200, 200}, codes)
	assert.Equal(t, 1, tokens)
	assert.Equal(t, 1, access)
}
