package server

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authorizationv1 "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// MetricsAuthFilter is the secure metrics server's filter: bearer tokens the
// API server authenticates (TokenReview) and authorizes for the request's
// verb and path (SubjectAccessReview), answered from caches that a slow API
// server does not hold up (metricsReviewer; the durations are
// MetricsReviewRefresh, MetricsAllowTTL and MetricsDenyTTL).
//
// Why not controller-runtime's filters.WithAuthenticationAndAuthorization,
// or k8s.io/apiserver's delegating authenticator and authorizer it is built
// of (this filter used them until issue 37): their caches expire, and the
// scrape after the expiry waits for the review, retries included. A
// TokenReview that took 11.7s then failed a scrape whose timeout is 10s,
// and reset a firing alert's `for` clock; they have no refresh ahead of
// expiry. Their token authenticator also reports a refused token and a
// failed TokenReview alike as an error, so a cache of definite answers only
// cannot be built on it; and controller-runtime answers a refused token
// with 500, not 401.
func MetricsAuthFilter(cfg *rest.Config, hc *http.Client) (metricsserver.Filter, error) {
	authn, err := authenticationv1.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, fmt.Errorf("metrics authentication client: %w", err)
	}
	authz, err := authorizationv1.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, fmt.Errorf("metrics authorization client: %w", err)
	}
	return authFilter(newMetricsReviewer(authn.TokenReviews(), authz.SubjectAccessReviews(), time.Now)), nil
}

// authFilter lets through requests whose bearer token r allows; it answers
// the others with r's status (401, 403 or 500).
func authFilter(r *metricsReviewer) metricsserver.Filter {
	return func(log logr.Logger, next http.Handler) (http.Handler, error) {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			token, ok := bearerToken(req)
			if !ok {
				http.Error(w, "Unauthorized", http.StatusUnauthorized)
				return
			}
			v := r.decide(req.Context(), token, strings.ToLower(req.Method), req.URL.Path)
			switch v.status {
			case http.StatusOK:
				// The token goes no further than the filter.
				req.Header.Del("Authorization")
				next.ServeHTTP(w, req)
			case http.StatusUnauthorized:
				// Not logged above V(1), so a scraper with a stale token
				// cannot flood the log. The reason never holds the token.
				log.V(1).Info("Metrics request not authenticated", "reason", v.reason)
				http.Error(w, "Unauthorized", http.StatusUnauthorized)
			case http.StatusForbidden:
				log.V(1).Info("Metrics request not authorized", "user", v.user, "reason", v.reason)
				http.Error(w, fmt.Sprintf("Authorization denied for user %s", v.user), http.StatusForbidden)
			default:
				log.Error(nil, "Cannot authorize metrics request", "user", v.user, "reason", v.reason)
				http.Error(w, fmt.Sprintf("Authorization for user %s failed", v.user), http.StatusInternalServerError)
			}
		}), nil
	}
}

// bearerToken is the request's bearer token, read as k8s.io/apiserver's
// bearer-token authenticator reads it: "Authorization: Bearer <token>", the
// scheme in any case, the token up to the next space.
func bearerToken(req *http.Request) (string, bool) {
	parts := strings.SplitN(strings.TrimSpace(req.Header.Get("Authorization")), " ", 3)
	if len(parts) < 2 || !strings.EqualFold(parts[0], "bearer") || parts[1] == "" {
		return "", false
	}
	return parts[1], true
}
