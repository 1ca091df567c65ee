package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilcache "k8s.io/apimachinery/pkg/util/cache"

	"github.com/seedwarden/seedwarden/internal/api"
)

// Authorizer answers whether a user may bind Shoots: update on
// shoots/binding (core.gardener.cloud) for the Shoot name in namespace.
type Authorizer interface {
	// Allowed returns the decision and the authorizer's reason for it. An
	// error means no decision was made; callers fail closed.
	Allowed(ctx context.Context, user authenticationv1.UserInfo, namespace, name string) (allowed bool, reason string, err error)
}

// SubjectAccessReviewCreator creates SubjectAccessReviews; client-go's
// AuthorizationV1().SubjectAccessReviews() is one.
type SubjectAccessReviewCreator interface {
	Create(ctx context.Context, sar *authorizationv1.SubjectAccessReview, opts metav1.CreateOptions) (*authorizationv1.SubjectAccessReview, error)
}

// maxAuthorizationCacheEntries bounds the SubjectAccessReview cache. Keys are
// per user and Shoot, so a burst of distinct ones (many users, many Shoots)
// must not grow it without limit; when full, the least recently used answer
// goes.
const maxAuthorizationCacheEntries = 10000

// SARAuthorizer asks the API server with a SubjectAccessReview and caches
// definite answers (allowed or denied) for CacheTTL. Errors are never cached,
// and neither is a denial the authorizer reports an evaluation error with
// (that may be transient).
//
// The cache key holds everything the answer depends on: user name, UID,
// groups, extra, namespace and the Shoot's name (RBAC may grant binding for
// some resourceNames only, so one Shoot's answer does not hold for another).
type SARAuthorizer struct {
	client   SubjectAccessReviewCreator
	cacheTTL time.Duration
	timeout  time.Duration
	now      func() time.Time
	cache    *utilcache.LRUExpireCache // of sarAnswer; nil when cacheTTL <= 0
}

type sarAnswer struct {
	allowed bool
	reason  string
	expires time.Time
}

// NewSARAuthorizer returns an authorizer using client. cacheTTL <= 0
// disables caching; timeout <= 0 leaves only the caller's deadline.
func NewSARAuthorizer(client SubjectAccessReviewCreator, cacheTTL, timeout time.Duration, now func() time.Time) *SARAuthorizer {
	if now == nil {
		now = time.Now
	}
	a := &SARAuthorizer{client: client, cacheTTL: cacheTTL, timeout: timeout, now: now}
	if cacheTTL > 0 {
		a.cache = utilcache.NewLRUExpireCacheWithClock(maxAuthorizationCacheEntries, clockFunc(now))
	}
	return a
}

// clockFunc lets a func() time.Time serve as the cache's clock.
type clockFunc func() time.Time

func (f clockFunc) Now() time.Time { return f() }

// Allowed implements Authorizer.
func (a *SARAuthorizer) Allowed(ctx context.Context, user authenticationv1.UserInfo, namespace, name string) (bool, string, error) {
	key := authorizationCacheKey(user, namespace, name)
	if ans, ok := a.cached(key); ok {
		return ans.allowed, ans.reason, nil
	}
	if a.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, a.timeout)
		defer cancel()
	}
	out, err := a.client.Create(ctx, bindingAccessReview(user, namespace, name), metav1.CreateOptions{})
	if err != nil {
		return false, "", fmt.Errorf("SubjectAccessReview: %w", err)
	}
	if out == nil {
		return false, "", fmt.Errorf("SubjectAccessReview: empty response")
	}
	st := out.Status
	reason := st.Reason
	if st.EvaluationError != "" {
		if reason != "" {
			reason += "; "
		}
		reason += "evaluation error: " + st.EvaluationError
	}
	if st.Allowed || st.EvaluationError == "" {
		a.store(key, sarAnswer{allowed: st.Allowed, reason: reason})
	}
	return st.Allowed, reason, nil
}

func (a *SARAuthorizer) cached(key string) (sarAnswer, bool) {
	if a.cache == nil {
		return sarAnswer{}, false
	}
	v, ok := a.cache.Get(key)
	if !ok {
		return sarAnswer{}, false
	}
	ans := v.(sarAnswer)
	// The cache keeps an answer through the instant it expires; an answer is
	// good for strictly less than cacheTTL.
	if !a.now().Before(ans.expires) {
		a.cache.Remove(key)
		return sarAnswer{}, false
	}
	return ans, true
}

func (a *SARAuthorizer) store(key string, ans sarAnswer) {
	if a.cache == nil {
		return
	}
	ans.expires = a.now().Add(a.cacheTTL)
	a.cache.Add(key, ans, a.cacheTTL)
}

// authorizationCacheKey encodes user, namespace and name unambiguously (JSON
// quotes every string; map keys come out sorted).
func authorizationCacheKey(user authenticationv1.UserInfo, namespace, name string) string {
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
	return string(b)
}

// bindingAccessReview asks whether user may update shoots/binding.
func bindingAccessReview(user authenticationv1.UserInfo, namespace, name string) *authorizationv1.SubjectAccessReview {
	var extra map[string]authorizationv1.ExtraValue
	if len(user.Extra) > 0 {
		extra = make(map[string]authorizationv1.ExtraValue, len(user.Extra))
		for k, v := range user.Extra {
			extra[k] = authorizationv1.ExtraValue(v)
		}
	}
	return &authorizationv1.SubjectAccessReview{
		Spec: authorizationv1.SubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace:   namespace,
				Verb:        "update",
				Group:       api.GroupName,
				Resource:    api.ShootGVR.Resource,
				Subresource: api.SubresourceBinding,
				Name:        name,
			},
			User:   user.Username,
			Groups: user.Groups,
			UID:    user.UID,
			Extra:  extra,
		},
	}
}

// SubjectsAuthorizer allows exactly the listed subjects. It stands in for
// RBAC in --landscape mode, where there is no API server to ask; an empty
// list allows nobody.
type SubjectsAuthorizer struct {
	Subjects Subjects
}

// Allowed implements Authorizer.
func (a SubjectsAuthorizer) Allowed(_ context.Context, user authenticationv1.UserInfo, _, _ string) (bool, string, error) {
	if a.Subjects.Match(user) {
		return true, "listed in binding.landscapeAllowedSubjects", nil
	}
	return false, "landscape mode: only binding.landscapeAllowedSubjects may bind Shoots", nil
}
