package server

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	authenticationv1 "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authorizationv1 "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// MetricsAuthFilter is the secure metrics server's filter: bearer tokens the
// API server authenticates (TokenReview) and authorizes for the request's
// verb and path (SubjectAccessReview), with the caches and retries of
// controller-runtime's filters.WithAuthenticationAndAuthorization. Unlike that
// filter it answers 401, not 500, for a token the API server does not accept:
// k8s.io/apiserver's bearer-token authenticator reports every rejected token
// as an error, which controller-runtime takes for a failure of its own.
func MetricsAuthFilter(cfg *rest.Config, hc *http.Client) (metricsserver.Filter, error) {
	authn, err := authenticationv1.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, err
	}
	authz, err := authorizationv1.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, err
	}
	// kube-apiserver's delegated-authentication backoff.
	backoff := wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 5}
	a, _, err := authenticatorfactory.DelegatingAuthenticatorConfig{
		Anonymous:                &apiserver.AnonymousAuthConfig{Enabled: false},
		CacheTTL:                 time.Minute,
		TokenAccessReviewClient:  authn,
		TokenAccessReviewTimeout: 10 * time.Second,
		WebhookRetryBackoff:      &backoff,
	}.New()
	if err != nil {
		return nil, fmt.Errorf("metrics authenticator: %w", err)
	}
	z, err := authorizerfactory.DelegatingAuthorizerConfig{
		SubjectAccessReviewClient: authz,
		AllowCacheTTL:             5 * time.Minute,
		DenyCacheTTL:              30 * time.Second,
		WebhookRetryBackoff:       &backoff,
	}.New()
	if err != nil {
		return nil, fmt.Errorf("metrics authorizer: %w", err)
	}
	return authFilter(a, z), nil
}

// authFilter answers as kube-apiserver does: 401 for a request it cannot
// authenticate, whatever the reason (no token, a token the TokenReview
// refuses, the TokenReview failing), 403 for one not authorized, 500 when
// authorization cannot be decided.
func authFilter(authn authenticator.Request, authz authorizer.Authorizer) metricsserver.Filter {
	return func(log logr.Logger, next http.Handler) (http.Handler, error) {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			res, ok, err := authn.AuthenticateRequest(req)
			if err != nil || !ok {
				if err != nil {
					// Every rejected token is an error here: not logged
					// above V(1), so a scraper with a stale token cannot
					// flood the log. The message never holds the token.
					log.V(1).Info("Metrics request not authenticated", "reason", err.Error())
				}
				http.Error(w, "Unauthorized", http.StatusUnauthorized)
				return
			}
			attrs := authorizer.AttributesRecord{User: res.User, Verb: strings.ToLower(req.Method), Path: req.URL.Path}
			decision, reason, err := authz.Authorize(req.Context(), attrs)
			user := res.User.GetName()
			if err != nil {
				log.Error(err, "Cannot authorize metrics request", "user", user)
				http.Error(w, fmt.Sprintf("Authorization for user %s failed", user), http.StatusInternalServerError)
				return
			}
			if decision != authorizer.DecisionAllow {
				log.V(1).Info("Metrics request not authorized", "user", user, "reason", reason)
				http.Error(w, fmt.Sprintf("Authorization denied for user %s", user), http.StatusForbidden)
				return
			}
			next.ServeHTTP(w, req)
		}), nil
	}
}
