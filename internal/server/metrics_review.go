package server

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilcache "k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/apiserver/pkg/authentication/user"
)

// How long the metrics endpoint trusts a review (docs/metrics.md says the
// same). A scrape whose token and RBAC were reviewed and allowed less than
// MetricsReviewRefresh ago is answered from the cache. After that it is
// still answered from the cache, and the review is asked again in the
// background; its answer replaces the cached one. An allowed answer that
// could not be refreshed (the API server slow or down) is used for
// MetricsAllowTTL at most. Refused answers (a token the API server does not
// authenticate: 401; a user without get on the path: 403) are kept for
// MetricsDenyTTL, so a new token or RoleBinding works within seconds.
//
// So a scrape never waits for the API server while its answer is cached: a
// TokenReview that takes longer than the scrape timeout (10s in the
// ServiceMonitor) no longer fails a scrape every time the cache expires. A
// revoked token or binding stops working at the first refresh after it was
// revoked (within MetricsReviewRefresh and one scrape interval), at the
// latest MetricsAllowTTL after its last successful review.
const (
	MetricsReviewRefresh = time.Minute
	MetricsAllowTTL      = 5 * time.Minute
	MetricsDenyTTL       = 10 * time.Second
)

// metricsReviewTimeout bounds one TokenReview and SubjectAccessReview
// together; a scrape's own context (Prometheus's timeout) may end it first.
const metricsReviewTimeout = 10 * time.Second

// Bounds of the caches. The allowed one holds a few scrapers' tokens; the
// refused one is separate so that a flood of made-up tokens (anyone who
// reaches the port can send them) evicts only other refusals, never the
// scrapers' answers. Keys are hashes: an entry costs the same whatever a
// request sends.
const (
	maxAllowedReviews = 256
	maxRefusedReviews = 4096
)

// TokenReviewCreator creates TokenReviews; client-go's
// AuthenticationV1().TokenReviews() is one.
type TokenReviewCreator interface {
	Create(ctx context.Context, tr *authenticationv1.TokenReview, opts metav1.CreateOptions) (*authenticationv1.TokenReview, error)
}

// SubjectAccessReviewCreator creates SubjectAccessReviews; client-go's
// AuthorizationV1().SubjectAccessReviews() is one.
type SubjectAccessReviewCreator interface {
	Create(ctx context.Context, sar *authorizationv1.SubjectAccessReview, opts metav1.CreateOptions) (*authorizationv1.SubjectAccessReview, error)
}

// verdict is what the reviews of one token for one verb and path decided.
type verdict struct {
	// status is the answer: 200 (serve), 401, 403 or 500.
	status int
	user   string
	// reason is for the log; it never holds the token.
	reason string
	// definite: the API server decided (allowed, not authenticated, not
	// authorized); otherwise a review failed and nothing is cached.
	definite bool
	// reviewed is when the API server answered.
	reviewed time.Time
}

// metricsReviewer answers whether a bearer token may make a request of the
// metrics endpoint, from its caches or by asking the API server (see the
// constants above).
type metricsReviewer struct {
	tokens TokenReviewCreator
	access SubjectAccessReviewCreator
	now    func() time.Time

	allowed, refused *utilcache.LRUExpireCache // of verdict, by reviewKey
	mu               sync.Mutex
	asking           map[string]chan struct{} // reviews under way, by key: closed when done
}

type clockFunc func() time.Time

func (f clockFunc) Now() time.Time { return f() }

func newMetricsReviewer(tokens TokenReviewCreator, access SubjectAccessReviewCreator, now func() time.Time) *metricsReviewer {
	return &metricsReviewer{
		tokens:  tokens,
		access:  access,
		now:     now,
		allowed: utilcache.NewLRUExpireCacheWithClock(maxAllowedReviews, clockFunc(now)),
		refused: utilcache.NewLRUExpireCacheWithClock(maxRefusedReviews, clockFunc(now)),
		asking:  map[string]chan struct{}{},
	}
}

// reviewKey identifies a question: the token (hashed), verb and path.
func reviewKey(token, verb, path string) string {
	h := sha256.Sum256([]byte(token))
	return string(h[:]) + "\x00" + verb + "\x00" + path
}

// decide answers from the caches, refreshing an allowed answer older than
// MetricsReviewRefresh in the background; a question not cached is asked
// now (one review per question at a time: the same question asked
// meanwhile waits for that answer).
func (m *metricsReviewer) decide(ctx context.Context, token, verb, path string) verdict {
	key := reviewKey(token, verb, path)
	if v, ok := m.allowed.Get(key); ok {
		v := v.(verdict)
		if m.now().Sub(v.reviewed) >= MetricsReviewRefresh {
			m.refresh(key, token, verb, path)
		}
		return v
	}
	if v, ok := m.refused.Get(key); ok {
		return v.(verdict)
	}
	m.mu.Lock()
	wait, busy := m.asking[key]
	if !busy {
		wait = make(chan struct{})
		m.asking[key] = wait
	}
	m.mu.Unlock()
	if busy {
		select {
		case <-wait:
			return m.decide(ctx, token, verb, path)
		case <-ctx.Done():
			return verdict{status: http.StatusUnauthorized, reason: "waiting for the review: " + ctx.Err().Error()}
		}
	}
	v := m.review(ctx, token, verb, path)
	m.store(key, v)
	return v
}

// refresh asks the question again in the background, unless it is being
// asked already.
func (m *metricsReviewer) refresh(key, token, verb, path string) {
	m.mu.Lock()
	if _, busy := m.asking[key]; busy {
		m.mu.Unlock()
		return
	}
	m.asking[key] = make(chan struct{})
	m.mu.Unlock()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), metricsReviewTimeout)
		defer cancel()
		m.store(key, m.review(ctx, token, verb, path))
	}()
}

// store caches a definite verdict (an allowed one replacing a refusal and
// the other way round) and ends the question's review. An indefinite one
// changes nothing: a cached allowed answer stays until MetricsAllowTTL.
func (m *metricsReviewer) store(key string, v verdict) {
	switch {
	case v.definite && v.status == http.StatusOK:
		m.allowed.Add(key, v, MetricsAllowTTL)
		m.refused.Remove(key)
	case v.definite:
		m.refused.Add(key, v, MetricsDenyTTL)
		m.allowed.Remove(key)
	}
	m.mu.Lock()
	close(m.asking[key])
	delete(m.asking, key)
	m.mu.Unlock()
}

// review asks the API server: a TokenReview, then a SubjectAccessReview for
// the user it names (with the group system:authenticated, as kube-apiserver
// adds it) on the non-resource path. It answers as kube-apiserver does: 401
// for a token it cannot authenticate, whatever the reason (refused, or the
// TokenReview failing), 403 for a user not authorized, 500 when
// authorization cannot be decided.
func (m *metricsReviewer) review(ctx context.Context, token, verb, path string) verdict {
	ctx, cancel := context.WithTimeout(ctx, metricsReviewTimeout)
	defer cancel()
	tr, err := m.tokens.Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
	if err != nil {
		return verdict{status: http.StatusUnauthorized, reason: "TokenReview failed: " + err.Error()}
	}
	at := m.now()
	if !tr.Status.Authenticated {
		reason := tr.Status.Error
		if reason == "" {
			reason = "token not authenticated"
		}
		return verdict{status: http.StatusUnauthorized, reason: reason, definite: true, reviewed: at}
	}
	u := tr.Status.User
	groups := slices.Clone(u.Groups)
	if !slices.Contains(groups, user.AllAuthenticated) {
		groups = append(groups, user.AllAuthenticated)
	}
	var extra map[string]authorizationv1.ExtraValue
	if len(u.Extra) > 0 {
		extra = make(map[string]authorizationv1.ExtraValue, len(u.Extra))
		for k, v := range u.Extra {
			extra[k] = authorizationv1.ExtraValue(v)
		}
	}
	sar, err := m.access.Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: u.Username, UID: u.UID, Groups: groups, Extra: extra,
		NonResourceAttributes: &authorizationv1.NonResourceAttributes{Verb: verb, Path: path},
	}}, metav1.CreateOptions{})
	if err != nil {
		return verdict{status: http.StatusInternalServerError, user: u.Username, reason: "SubjectAccessReview failed: " + err.Error()}
	}
	at = m.now()
	switch {
	case sar.Status.Allowed:
		return verdict{status: http.StatusOK, user: u.Username, definite: true, reviewed: at}
	case sar.Status.EvaluationError != "":
		// An authorizer failed, maybe for a moment: refused, not cached.
		return verdict{status: http.StatusForbidden, user: u.Username, reason: fmt.Sprintf("%s (evaluation error: %s)", sar.Status.Reason, sar.Status.EvaluationError)}
	default:
		return verdict{status: http.StatusForbidden, user: u.Username, reason: sar.Status.Reason, definite: true, reviewed: at}
	}
}
