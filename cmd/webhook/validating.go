package main

import (
	"crypto/rand"
	"fmt"

	"github.com/go-logr/logr"
	authorizationv1client "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/config"
	"github.com/seedwarden/seedwarden/internal/handlers"
	"github.com/seedwarden/seedwarden/internal/metrics"
	"github.com/seedwarden/seedwarden/internal/placementtoken"
)

// Paths of the validating webhooks.
const (
	ValidateShootBindingPath  = "/validate-shoot-binding"
	ValidateShootCapacityPath = "/validate-shoot-capacity"
	ValidateResourceSizePath  = "/validate-resource-size"
)

// errKeyRequired is the start-up error of a cluster server without a key.
const errKeyRequired = "invalid configuration: placement.keyFile: required when serving a cluster " +
	"(every replica must verify the others' placements; see deploy/README.md), or set binding.enabled: false"

// placementDeps are what the placing and guarding webhooks share beyond the
// Store: the token signer and the binding authorizer.
type placementDeps struct {
	signer     *placementtoken.Signer // nil: no tokens
	authorizer handlers.Authorizer
}

// newPlacementSigner returns the signer of placement tokens: from
// placement.keyFile when set. Without one, --landscape mode (one process)
// uses a random in-memory key; a cluster server needs the shared key unless
// the binding webhook is disabled, in which case no tokens are issued. The
// key is never logged.
func newPlacementSigner(cfg *config.Config, landscape bool, log logr.Logger) (*placementtoken.Signer, error) {
	ttl := cfg.Placement.TokenTTL.Duration
	switch {
	case cfg.Placement.KeyFile != "":
		key, err := cfg.Placement.ReadKey()
		if err != nil {
			return nil, err
		}
		log.Info("Placement key loaded", "keyFile", cfg.Placement.KeyFile, "tokenTTL", ttl)
		return placementtoken.NewSigner(key, ttl, nil)
	case landscape:
		key := make([]byte, placementtoken.MinKeyBytes)
		if _, err := rand.Read(key); err != nil {
			return nil, fmt.Errorf("placement key: %w", err)
		}
		log.Info("placement.keyFile not set: using a random in-memory placement key; placement tokens verify in this process only, so this works for one replica only")
		return placementtoken.NewSigner(key, ttl, nil)
	case cfg.BindingEnabled():
		return nil, fmt.Errorf("%s", errKeyRequired)
	default:
		log.Info("placement.keyFile not set and the binding webhook is disabled: no placement tokens are issued")
		return nil, nil
	}
}

// clusterAuthorizer asks the API server with SubjectAccessReviews.
func clusterAuthorizer(cfg *config.Config, restCfg *rest.Config) (handlers.Authorizer, error) {
	c, err := authorizationv1client.NewForConfig(restCfg)
	if err != nil {
		return nil, fmt.Errorf("authorization client: %w", err)
	}
	return handlers.NewSARAuthorizer(c.SubjectAccessReviews(),
		cfg.Binding.AuthorizationCacheTTL.Duration, cfg.Binding.AuthorizationTimeout.Duration, nil), nil
}

// landscapeAuthorizer stands in for RBAC without an API server: only
// binding.landscapeAllowedSubjects may bind (nobody by default).
func landscapeAuthorizer(cfg *config.Config) handlers.Authorizer {
	return handlers.SubjectsAuthorizer{Subjects: subjects(cfg.Binding.LandscapeAllowedSubjects)}
}

// registerValidatingWebhooks registers the binding, capacity and
// resource-size webhooks (the first two unless disabled).
func registerValidatingWebhooks(srv webhook.Server, cfg *config.Config, store *cache.Store, deps placementDeps, m *metrics.Metrics, log logr.Logger) {
	register := func(path string, h webhook.AdmissionHandler) {
		srv.Register(path, limitBody(cfg.Server.MaxRequestBytes, &webhook.Admission{Handler: h}))
	}
	if cfg.BindingEnabled() {
		register(ValidateShootBindingPath, &handlers.ShootBindingValidator{
			Landscape:  store,
			Authorizer: deps.authorizer,
			Signer:     deps.signer,
			Metrics:    m,
			Log:        log.WithName("validate-shoot-binding"),
		})
	}
	if cfg.CapacityEnabled() {
		register(ValidateShootCapacityPath, &handlers.ShootCapacityValidator{
			Store:                store,
			Signer:               deps.signer,
			UnrestrictedSubjects: subjects(cfg.Capacity.UnrestrictedSubjects),
			Metrics:              m,
			Log:                  log.WithName("validate-shoot-capacity"),
		})
	}
	register(ValidateResourceSizePath, newResourceSizeValidator(cfg.ResourceSize, store, m, log.WithName("validate-resource-size")))
}

func newResourceSizeValidator(rs config.ResourceSize, store *cache.Store, m *metrics.Metrics, log logr.Logger) *handlers.ResourceSizeValidator {
	v := &handlers.ResourceSizeValidator{
		Mode:                 rs.OperationMode,
		UnrestrictedSubjects: subjects(rs.UnrestrictedSubjects),
		Counter:              store,
		Metrics:              m,
		Log:                  log,
	}
	for _, l := range rs.Limits {
		n, err := l.Bytes()
		if err != nil {
			// Unreachable: config validation parsed it.
			panic(fmt.Sprintf("resourceSize limit %q: %v", l.Size, err))
		}
		v.Limits = append(v.Limits, handlers.SizeLimit{ResourceRule: rule(l.Resources), Size: l.Size, Bytes: n})
	}
	for _, c := range rs.Counts {
		v.Counts = append(v.Counts, handlers.CountLimit{ResourceRule: rule(c.Resources), Count: *c.Count})
	}
	return v
}

func rule(r config.Resources) handlers.ResourceRule {
	return handlers.ResourceRule{APIGroups: r.APIGroups, APIVersions: r.APIVersions, Resources: r.Resources}
}

func subjects(in []config.Subject) handlers.Subjects {
	out := make(handlers.Subjects, len(in))
	for i, s := range in {
		out[i] = handlers.Subject{Kind: s.Kind, Name: s.Name, Namespace: s.Namespace}
	}
	return out
}
