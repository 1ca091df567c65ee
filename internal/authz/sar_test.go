package authz

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	authorizationv1client "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"
)

// sarServer is a fake API server answering SubjectAccessReviews with answer,
// recording what it was asked.
type sarServer struct {
	answer func(*authorizationv1.SubjectAccessReview) (int, any)
	delay  atomic.Int64 // nanoseconds

	calls atomic.Int32
	mu    sync.Mutex
	last  *authorizationv1.SubjectAccessReview
	path  string
}

func (s *sarServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.calls.Add(1)
	body, _ := io.ReadAll(r.Body)
	var sar authorizationv1.SubjectAccessReview
	if err := json.Unmarshal(body, &sar); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.last, s.path = &sar, r.Method+" "+r.URL.Path
	s.mu.Unlock()
	if d := time.Duration(s.delay.Load()); d > 0 {
		select {
		case <-time.After(d):
		case <-r.Context().Done():
			return
		}
	}
	code, out := s.answer(&sar)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(out)
}

func reviewed(sar *authorizationv1.SubjectAccessReview, st authorizationv1.SubjectAccessReviewStatus) *authorizationv1.SubjectAccessReview {
	out := sar.DeepCopy()
	out.APIVersion, out.Kind = "authorization.k8s.io/v1", "SubjectAccessReview"
	out.Status = st
	return out
}

func newSARClient(t *testing.T, s *sarServer) authorizationv1client.SubjectAccessReviewInterface {
	t.Helper()
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	// JSON, so the fake server can read it (client-go speaks protobuf to
	// the real API server by default).
	c, err := authorizationv1client.NewForConfig(&rest.Config{Host: srv.URL, ContentConfig: rest.ContentConfig{
		ContentType: "application/json", AcceptContentTypes: "application/json",
	}})
	require.NoError(t, err)
	return c.SubjectAccessReviews()
}

const (
	vUser      = "jane.doe@example.com"
	vNamespace = "garden-dev"
	vName      = "crazy-botany"
)

// binding is the permission asked about in these tests.
var binding = Permission{Verb: "update", Group: "core.gardener.cloud", Resource: "shoots", Subresource: "binding"}

var jane = authenticationv1.UserInfo{
	Username: vUser, UID: "4f1e",
	Groups: []string{"system:authenticated", "garden-dev-admins"},
	Extra:  map[string]authenticationv1.ExtraValue{"scopes": {"all", "more"}},
}

func TestSARAuthorizerAsksTheAPIServer(t *testing.T) {
	s := &sarServer{answer: func(sar *authorizationv1.SubjectAccessReview) (int, any) {
		return http.StatusCreated, reviewed(sar, authorizationv1.SubjectAccessReviewStatus{Allowed: true, Reason: `RBAC: allowed by RoleBinding "binders/garden-dev"`})
	}}
	a := NewSARAuthorizer(newSARClient(t, s), binding, 0, time.Second, nil)
	allowed, reason, err := a.Allowed(t.Context(), jane, vNamespace, vName)
	require.NoError(t, err)
	assert.True(t, allowed)
	assert.Equal(t, `RBAC: allowed by RoleBinding "binders/garden-dev"`, reason)

	assert.Equal(t, "POST /apis/authorization.k8s.io/v1/subjectaccessreviews", s.path)
	assert.Equal(t, authorizationv1.SubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: vNamespace, Verb: "update", Group: "core.gardener.cloud",
			Resource: "shoots", Subresource: "binding", Name: vName,
		},
		User:   vUser,
		Groups: []string{"system:authenticated", "garden-dev-admins"},
		Extra:  map[string]authorizationv1.ExtraValue{"scopes": {"all", "more"}},
		UID:    "4f1e",
	}, s.last.Spec)
}

func TestSARAuthorizerAnswers(t *testing.T) {
	tests := []struct {
		name        string
		code        int
		status      authorizationv1.SubjectAccessReviewStatus
		raw         any // instead of a review
		delay       time.Duration
		wantAllowed bool
		wantReason  string
		wantErr     string
		wantCached  bool
	}{
		{name: "allowed", code: 201, status: authorizationv1.SubjectAccessReviewStatus{Allowed: true}, wantAllowed: true, wantCached: true},
		{name: "denied", code: 201, status: authorizationv1.SubjectAccessReviewStatus{Reason: "no RBAC policy matched"}, wantReason: "no RBAC policy matched", wantCached: true},
		{name: "explicitly denied", code: 201, status: authorizationv1.SubjectAccessReviewStatus{Denied: true, Reason: "webhook says no"}, wantReason: "webhook says no", wantCached: true},
		{name: "denied with evaluation error is not cached", code: 201,
			status:     authorizationv1.SubjectAccessReviewStatus{EvaluationError: "webhook authorizer unreachable"},
			wantReason: "evaluation error: webhook authorizer unreachable"},
		{name: "allowed despite evaluation error is cached", code: 201,
			status:      authorizationv1.SubjectAccessReviewStatus{Allowed: true, Reason: "RBAC", EvaluationError: "one authorizer failed"},
			wantAllowed: true, wantReason: "RBAC; evaluation error: one authorizer failed", wantCached: true},
		{name: "forbidden to ask", code: 403,
			raw:     metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: "Failure", Reason: "Forbidden", Code: 403, Message: `subjectaccessreviews.authorization.k8s.io is forbidden: User "system:serviceaccount:seedwarden:seedwarden" cannot create resource`},
			wantErr: `SubjectAccessReview: subjectaccessreviews.authorization.k8s.io is forbidden`},
		{name: "server error", code: 500, raw: map[string]string{"oops": "x"}, wantErr: "SubjectAccessReview: "},
		{name: "timeout", code: 201, status: authorizationv1.SubjectAccessReviewStatus{Allowed: true}, delay: 5 * time.Second,
			wantErr: "context deadline exceeded"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &sarServer{answer: func(sar *authorizationv1.SubjectAccessReview) (int, any) {
				if tc.raw != nil {
					return tc.code, tc.raw
				}
				return tc.code, reviewed(sar, tc.status)
			}}
			s.delay.Store(int64(tc.delay))
			a := NewSARAuthorizer(newSARClient(t, s), binding, time.Minute, 200*time.Millisecond, nil)
			start := time.Now()
			allowed, reason, err := a.Allowed(t.Context(), jane, vNamespace, vName)
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				assert.Less(t, time.Since(start), 3*time.Second, "the timeout bounds the call")
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tc.wantAllowed, allowed)
			assert.Equal(t, tc.wantReason, reason)

			// Asked again: from the cache, or from the server once more.
			s.delay.Store(0)
			a.Allowed(t.Context(), jane, vNamespace, vName) //nolint:errcheck // only the call count matters
			want := int32(2)
			if tc.wantCached {
				want = 1
			}
			assert.Equal(t, want, s.calls.Load(), "calls to the API server")
		})
	}
}

// countingCreator is a SubjectAccessReviewCreator that allows users in
// allowed and counts calls.
type countingCreator struct {
	allowed map[string]bool
	err     error
	calls   atomic.Int32
}

func (c *countingCreator) Create(_ context.Context, sar *authorizationv1.SubjectAccessReview, _ metav1.CreateOptions) (*authorizationv1.SubjectAccessReview, error) {
	c.calls.Add(1)
	if c.err != nil {
		return nil, c.err
	}
	return reviewed(sar, authorizationv1.SubjectAccessReviewStatus{Allowed: c.allowed[sar.Spec.User]}), nil
}

func TestSARAuthorizerCache(t *testing.T) {
	clock := clocktesting.NewFakeClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	c := &countingCreator{allowed: map[string]bool{vUser: true}}
	a := NewSARAuthorizer(c, binding, 10*time.Second, time.Second, clock.Now)
	ask := func(u authenticationv1.UserInfo, ns, name string) bool {
		t.Helper()
		ok, _, err := a.Allowed(t.Context(), u, ns, name)
		require.NoError(t, err)
		return ok
	}

	assert.True(t, ask(jane, vNamespace, vName))
	assert.True(t, ask(jane, vNamespace, vName))
	assert.Equal(t, int32(1), c.calls.Load(), "cache hit")

	// Every part of the key matters.
	otherGroups := jane
	otherGroups.Groups = []string{"system:authenticated"}
	otherExtra := jane
	otherExtra.Extra = map[string]authenticationv1.ExtraValue{"scopes": {"none"}}
	otherUID := jane
	otherUID.UID = "other"
	for i, q := range []struct {
		u        authenticationv1.UserInfo
		ns, name string
	}{
		{otherGroups, vNamespace, vName},
		{otherExtra, vNamespace, vName},
		{otherUID, vNamespace, vName},
		{jane, "garden-other", vName},
		{jane, vNamespace, "other-shoot"},
	} {
		ask(q.u, q.ns, q.name)
		assert.Equal(t, int32(2+i), c.calls.Load(), "%d: a different key asks again", i)
	}

	// Denials are cached too.
	bob := authenticationv1.UserInfo{Username: "bob"}
	assert.False(t, ask(bob, vNamespace, vName))
	assert.False(t, ask(bob, vNamespace, vName))
	assert.Equal(t, int32(7), c.calls.Load())

	// Until the TTL passes.
	clock.Step(9 * time.Second)
	ask(jane, vNamespace, vName)
	assert.Equal(t, int32(7), c.calls.Load())
	clock.Step(time.Second)
	ask(jane, vNamespace, vName)
	assert.Equal(t, int32(8), c.calls.Load(), "expired")

	// Errors are not cached.
	c.err = errors.New("connection refused")
	for range 2 {
		_, _, err := a.Allowed(t.Context(), bob, "garden-x", vName)
		require.Error(t, err)
	}
	assert.Equal(t, int32(10), c.calls.Load())

	// A zero TTL disables the cache.
	c.err = nil
	a = NewSARAuthorizer(c, binding, 0, time.Second, clock.Now)
	ask(jane, vNamespace, vName)
	ask(jane, vNamespace, vName)
	assert.Equal(t, int32(12), c.calls.Load())
}

func TestSARAuthorizerCacheIsBounded(t *testing.T) {
	c := &countingCreator{allowed: map[string]bool{}}
	a := NewSARAuthorizer(c, binding, time.Minute, time.Second, nil)
	for i := range maxCacheEntries + 5 {
		_, _, err := a.Allowed(t.Context(), authenticationv1.UserInfo{Username: fmt.Sprint("user-", i)}, "ns", "n")
		require.NoError(t, err)
	}
	assert.LessOrEqual(t, len(a.cache.Keys()), maxCacheEntries)
}

func TestCacheKeyIsUnambiguous(t *testing.T) {
	a := cacheKey(authenticationv1.UserInfo{Username: "a", Groups: []string{"b"}}, "c", "d")
	b := cacheKey(authenticationv1.UserInfo{Username: "a\"", Groups: []string{"b"}}, "c", "d")
	c := cacheKey(authenticationv1.UserInfo{Username: "a", Groups: []string{"b", "c"}}, "", "d")
	assert.NotEqual(t, a, b)
	assert.NotEqual(t, a, c)
	x := cacheKey(authenticationv1.UserInfo{Extra: map[string]authenticationv1.ExtraValue{"a": {"1"}, "b": {"2"}}}, "", "")
	y := cacheKey(authenticationv1.UserInfo{Extra: map[string]authenticationv1.ExtraValue{"b": {"2"}, "a": {"1"}}}, "", "")
	assert.Equal(t, x, y, "map order does not matter")
}

// A full cache drops the least recently used answer, not every answer: a
// user asking again and again keeps being served from it.
func TestSARAuthorizerCacheEvictsLeastRecentlyUsed(t *testing.T) {
	c := &countingCreator{allowed: map[string]bool{}}
	a := NewSARAuthorizer(c, binding, time.Minute, time.Second, nil)
	ask := func(user string) {
		t.Helper()
		_, _, err := a.Allowed(t.Context(), authenticationv1.UserInfo{Username: user}, "ns", "n")
		require.NoError(t, err)
	}
	for i := range maxCacheEntries {
		ask(fmt.Sprint("user-", i))
	}
	ask("user-0") // now the most recently used
	ask("one-more")
	calls := c.calls.Load()
	ask("user-0")
	assert.Equal(t, calls, c.calls.Load(), "user-0 is still cached")
	ask("user-1")
	assert.Equal(t, calls+1, c.calls.Load(), "user-1, the least recently used, was evicted")
}

// gatedCreator answers once release is closed, recording the most
// SubjectAccessReviews it was asked at once.
type gatedCreator struct {
	release          chan struct{}
	calls, now, most atomic.Int32
}

func (c *gatedCreator) Create(ctx context.Context, sar *authorizationv1.SubjectAccessReview, _ metav1.CreateOptions) (*authorizationv1.SubjectAccessReview, error) {
	c.calls.Add(1)
	n := c.now.Add(1)
	defer c.now.Add(-1)
	for m := c.most.Load(); n > m && !c.most.CompareAndSwap(m, n); m = c.most.Load() {
	}
	select {
	case <-c.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return reviewed(sar, authorizationv1.SubjectAccessReviewStatus{}), nil
}

// askAll asks the questions concurrently, releases the creator once all
// are waiting or asking, and returns the errors.
func askAll(t *testing.T, a *SARAuthorizer, c *gatedCreator, users []authenticationv1.UserInfo, names []string) []error {
	t.Helper()
	errs := make([]error, len(users))
	var wg sync.WaitGroup
	for i := range users {
		wg.Go(func() { _, _, errs[i] = a.Allowed(t.Context(), users[i], vNamespace, names[i]) })
	}
	time.Sleep(100 * time.Millisecond) // let every question reach the authorizer
	close(c.release)
	wg.Wait()
	return errs
}

// 1,000 copies of one forged question asked at once: one SubjectAccessReview,
// whose answer every copy shares and the cache keeps.
func TestSARAuthorizerAsksAQuestionOnceAtATime(t *testing.T) {
	c := &gatedCreator{release: make(chan struct{})}
	a := NewSARAuthorizer(c, binding, time.Minute, 5*time.Second, nil)
	users, names := make([]authenticationv1.UserInfo, 1000), make([]string, 1000)
	for i := range users {
		users[i], names[i] = jane, vName
	}
	for _, err := range askAll(t, a, c, users, names) {
		require.NoError(t, err)
	}
	assert.Equal(t, int32(1), c.calls.Load())
	_, _, err := a.Allowed(t.Context(), jane, vNamespace, vName)
	require.NoError(t, err)
	assert.Equal(t, int32(1), c.calls.Load(), "cached")
}

// 200 distinct forged questions at once (a random user each) reach the API
// server maxReviewsInFlight at a time.
func TestSARAuthorizerBoundsReviewsInFlight(t *testing.T) {
	c := &gatedCreator{release: make(chan struct{})}
	a := NewSARAuthorizer(c, binding, time.Minute, 5*time.Second, nil)
	users, names := make([]authenticationv1.UserInfo, 200), make([]string, 200)
	for i := range users {
		users[i], names[i] = authenticationv1.UserInfo{Username: fmt.Sprintf("forged-%d", i)}, vName
	}
	for _, err := range askAll(t, a, c, users, names) {
		require.NoError(t, err)
	}
	assert.Equal(t, int32(200), c.calls.Load(), "each distinct question is asked")
	assert.Equal(t, int32(maxReviewsInFlight), c.most.Load(), "never more at once")
}

// A question waiting for a slot gives up at its timeout, with an error
// (callers fail closed) that says why.
func TestSARAuthorizerWaitsForASlotWithinItsTimeout(t *testing.T) {
	c := &gatedCreator{release: make(chan struct{})}
	a := NewSARAuthorizer(c, binding, time.Minute, 0, nil)
	var wg sync.WaitGroup
	for i := range maxReviewsInFlight {
		wg.Go(func() {
			_, _, _ = a.Allowed(t.Context(), authenticationv1.UserInfo{Username: fmt.Sprint("busy-", i)}, vNamespace, vName)
		})
	}
	time.Sleep(20 * time.Millisecond)
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	_, _, err := a.Allowed(ctx, jane, vNamespace, vName)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "8 already being asked")
	assert.Equal(t, int32(maxReviewsInFlight), c.calls.Load(), "it was never asked")
	close(c.release)
	wg.Wait()
}

// A forged review may name a user of any size; the cache key is a hash.
func TestCacheKeyHasAFixedSize(t *testing.T) {
	huge := authenticationv1.UserInfo{Username: strings.Repeat("u", 1<<20), Groups: []string{strings.Repeat("g", 1<<20)}}
	assert.Len(t, cacheKey(huge, vNamespace, vName), sha256.Size)
	assert.Len(t, cacheKey(jane, vNamespace, vName), sha256.Size)
}
