// Package authz asks the API server whether a user holds a permission, with
// SubjectAccessReviews and a cache that keeps definite answers only.
//
// k8s.io/apiserver's delegating authorizer (authorizerfactory, used for the
// metrics endpoint) is not used here because it drops seedwarden's second
// rule. In k8s.io/apiserver v0.37.0, plugin/pkg/authorizer/webhook/webhook.go
// caches every status it receives, by status.allowed alone (lines 274-281),
// so a denial carrying an evaluationError (an authorizer that failed, maybe
// for a moment) would be served from the cache for the whole deny TTL; and it
// returns status.reason only (lines 283-291), so the evaluation error would
// vanish from the binding webhook's denial message. Its first rule does hold:
// a failed request returns before the cache is written (lines 263-272).
package authz

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"time"

	"golang.org/x/sync/singleflight"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilcache "k8s.io/apimachinery/pkg/util/cache"
)

// Permission is a verb on a resource (and subresource) of an API group; the
// namespace and object name come with each question.
type Permission struct {
	Verb, Group, Resource, Subresource string
}

// SubjectAccessReviewCreator creates SubjectAccessReviews; client-go's
// AuthorizationV1().SubjectAccessReviews() is one.
type SubjectAccessReviewCreator interface {
	Create(ctx context.Context, sar *authorizationv1.SubjectAccessReview, opts metav1.CreateOptions) (*authorizationv1.SubjectAccessReview, error)
}

// maxCacheEntries bounds the cache. Keys are per user and object, so a burst
// of distinct ones (many users, many objects) must not grow it without limit;
// when full, the least recently used answer goes. Keys are hashes, so an
// entry costs the same whatever a (forged) review names.
const maxCacheEntries = 10000

// maxReviewsInFlight bounds the SubjectAccessReviews asked at once, so that
// a flood of distinct questions (forged reviews naming random users or
// objects) reaches the API server at this concurrency at most. A question
// waits for a slot within its timeout; the same question asked meanwhile
// waits for the one answer instead of asking again.
const maxReviewsInFlight = 8

// SARAuthorizer asks the API server with a SubjectAccessReview whether a user
// holds one Permission, and caches definite answers (allowed or denied) for
// CacheTTL. Errors are never cached, and neither is a denial the API server
// reports an evaluation error with (that may be transient).
//
// The cache key holds everything the answer depends on: user name, UID,
// groups, extra, namespace and the object's name (RBAC may grant a
// permission for some resourceNames only, so one object's answer does not
// hold for another).
type SARAuthorizer struct {
	client     SubjectAccessReviewCreator
	permission Permission
	cacheTTL   time.Duration
	timeout    time.Duration
	now        func() time.Time
	cache      *utilcache.LRUExpireCache // of answer; nil when cacheTTL <= 0
	asking     singleflight.Group        // by cache key
	inFlight   chan struct{}             // a slot per review being asked
}

type answer struct {
	allowed bool
	reason  string
	expires time.Time
}

// NewSARAuthorizer returns an authorizer asking client about permission.
// cacheTTL <= 0 disables caching; timeout <= 0 leaves only the caller's
// deadline; now nil is time.Now.
func NewSARAuthorizer(client SubjectAccessReviewCreator, permission Permission, cacheTTL, timeout time.Duration, now func() time.Time) *SARAuthorizer {
	if now == nil {
		now = time.Now
	}
	a := &SARAuthorizer{client: client, permission: permission, cacheTTL: cacheTTL, timeout: timeout, now: now,
		inFlight: make(chan struct{}, maxReviewsInFlight)}
	if cacheTTL > 0 {
		a.cache = utilcache.NewLRUExpireCacheWithClock(maxCacheEntries, clockFunc(now))
	}
	return a
}

// clockFunc lets a func() time.Time serve as the cache's clock.
type clockFunc func() time.Time

func (f clockFunc) Now() time.Time { return f() }

// Allowed returns whether user holds the permission on the object name in
// namespace, and the API server's reason (with its evaluation error, if
// any). An error means no decision was made; callers fail closed.
func (a *SARAuthorizer) Allowed(ctx context.Context, user authenticationv1.UserInfo, namespace, name string) (bool, string, error) {
	key := cacheKey(user, namespace, name)
	if ans, ok := a.cached(key); ok {
		return ans.allowed, ans.reason, nil
	}
	if a.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, a.timeout)
		defer cancel()
	}
	// Who joins a question being asked waits for its answer: at most the
	// asker's timeout.
	v, err, _ := a.asking.Do(key, func() (any, error) { return a.ask(ctx, key, user, namespace, name) })
	if err != nil {
		return false, "", err
	}
	ans := v.(answer)
	return ans.allowed, ans.reason, nil
}

// ask asks the API server (within a slot of inFlight) and caches a definite
// answer. The cache is read again first: the same question may have been
// answered while this one waited.
func (a *SARAuthorizer) ask(ctx context.Context, key string, user authenticationv1.UserInfo, namespace, name string) (answer, error) {
	if ans, ok := a.cached(key); ok {
		return ans, nil
	}
	select {
	case a.inFlight <- struct{}{}:
		defer func() { <-a.inFlight }()
	case <-ctx.Done():
		return answer{}, fmt.Errorf("SubjectAccessReview: %d already being asked: %w", maxReviewsInFlight, ctx.Err())
	}
	out, err := a.client.Create(ctx, a.accessReview(user, namespace, name), metav1.CreateOptions{})
	if err != nil {
		return answer{}, fmt.Errorf("SubjectAccessReview: %w", err)
	}
	if out == nil {
		return answer{}, fmt.Errorf("SubjectAccessReview: empty response")
	}
	st := out.Status
	ans := answer{allowed: st.Allowed, reason: st.Reason}
	if st.EvaluationError != "" {
		if ans.reason != "" {
			ans.reason += "; "
		}
		ans.reason += "evaluation error: " + st.EvaluationError
	}
	if st.Allowed || st.EvaluationError == "" {
		a.store(key, ans)
	}
	return ans, nil
}

func (a *SARAuthorizer) cached(key string) (answer, bool) {
	if a.cache == nil {
		return answer{}, false
	}
	v, ok := a.cache.Get(key)
	if !ok {
		return answer{}, false
	}
	ans := v.(answer)
	// The cache keeps an answer through the instant it expires; an answer is
	// good for strictly less than cacheTTL.
	if !a.now().Before(ans.expires) {
		a.cache.Remove(key)
		return answer{}, false
	}
	return ans, true
}

func (a *SARAuthorizer) store(key string, ans answer) {
	if a.cache == nil {
		return
	}
	ans.expires = a.now().Add(a.cacheTTL)
	a.cache.Add(key, ans, a.cacheTTL)
}

// cacheKey is the SHA-256 of user, namespace and name encoded unambiguously
// (JSON quotes every string; map keys come out sorted).
func cacheKey(user authenticationv1.UserInfo, namespace, name string) string {
	b, err := json.Marshal(struct {
		User      string                                 `json:"u"`
		UID       string                                 `json:"i"`
		Groups    []string                               `json:"g"`
		Extra     map[string]authenticationv1.ExtraValue `json:"e"`
		Namespace string                                 `json:"n"`
		Name      string                                 `json:"s"`
	}{user.Username, user.UID, user.Groups, user.Extra, namespace, name})
	if err != nil {
		// Unreachable: strings, slices and maps of strings always marshal.
		return fmt.Sprintf("%q", err)
	}
	sum := sha256.Sum256(b)
	return string(sum[:])
}

// accessReview asks whether user holds the permission on the object.
func (a *SARAuthorizer) accessReview(user authenticationv1.UserInfo, namespace, name string) *authorizationv1.SubjectAccessReview {
	var extra map[string]authorizationv1.ExtraValue
	if len(user.Extra) > 0 {
		extra = make(map[string]authorizationv1.ExtraValue, len(user.Extra))
		for k, v := range user.Extra {
			extra[k] = authorizationv1.ExtraValue(v)
		}
	}
	p := a.permission
	return &authorizationv1.SubjectAccessReview{
		Spec: authorizationv1.SubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace:   namespace,
				Verb:        p.Verb,
				Group:       p.Group,
				Resource:    p.Resource,
				Subresource: p.Subresource,
				Name:        name,
			},
			User:   user.Username,
			Groups: user.Groups,
			UID:    user.UID,
			Extra:  extra,
		},
	}
}
