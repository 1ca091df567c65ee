package main

import (
	"crypto/rand"
	"fmt"
	"net/http"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/resource"
	authorizationv1client "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/seedwarden/seedwarden/internal/authz"
	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/config"
	"github.com/seedwarden/seedwarden/internal/handlers"
	"github.com/seedwarden/seedwarden/internal/metrics"
	"github.com/seedwarden/seedwarden/internal/pending"
	"github.com/seedwarden/seedwarden/internal/placementtoken"
	"github.com/seedwarden/seedwarden/internal/server"
)

// errKeyRequired is the start-up error of a cluster server without a key.
const errKeyRequired = "invalid configuration: placement.keyFile: required when serving a cluster " +
	"(every replica must verify the others' placements; see deploy/README.md), or set binding.enabled: false"

// placementDeps are what the placing and guarding webhooks share beyond the
// Store: the token signer, the binding authorizer, and whether the Store is
// complete.
type placementDeps struct {
	signer     *placementtoken.Signer // nil: no tokens
	authorizer handlers.Authorizer
	// synced reports whether the informers have filled the Store (cluster
	// mode); nil means always (a landscape is loaded before serving).
	synced func() bool
	// cluster reserves seed capacity across replicas (capacity.coordination
	// apiserver); nil: in the Store alone. Never a typed nil.
	cluster handlers.ClusterReserver
	// staleness bounds deciding from a cache whose watch is broken
	// (cluster mode, cache.maxStaleness); zero: no bound.
	staleness handlers.StalenessGuard
	// drain closes connections while shutting down; nil: never.
	drain *server.Drainer
	// limits guard every handler; they share one budget (newLimits).
	limits server.Limits
	// events records the guards' warn events (cluster mode); nil: none.
	events handlers.EventRecorder
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
		keys, err := placementtoken.ReadKeyFile(cfg.Placement.KeyFile)
		if err != nil {
			return nil, err
		}
		log.Info("Placement key loaded", "keyFile", cfg.Placement.KeyFile, "keys", len(keys), "tokenTTL", ttl)
		return placementtoken.NewSigner(keys, ttl, nil)
	case landscape:
		key := make([]byte, placementtoken.MinKeyBytes)
		if _, err := rand.Read(key); err != nil {
			return nil, fmt.Errorf("placement key: %w", err)
		}
		log.Info("placement.keyFile not set: using a random in-memory placement key; placement tokens verify in this process only, so this works for one replica only")
		return placementtoken.NewSigner([][]byte{key}, ttl, nil)
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
	return authz.NewSARAuthorizer(c.SubjectAccessReviews(), handlers.BindingPermission,
		cfg.Binding.AuthorizationCacheTTL.Duration, cfg.Binding.AuthorizationTimeout.Duration, nil), nil
}

// landscapeAuthorizer stands in for RBAC without an API server: only
// binding.landscapeAllowedSubjects may bind (nobody by default).
func landscapeAuthorizer(cfg *config.Config) handlers.Authorizer {
	return handlers.SubjectsAuthorizer{Subjects: subjects(cfg.Binding.LandscapeAllowedSubjects)}
}

// registerValidatingWebhooks registers the binding and capacity webhooks
// (each unless disabled, apart and together), the resource-size webhook, and
// the kubeconfig Secret and namespace-deletion webhooks. All share the body
// limit and the budget of request bytes in flight.
func registerValidatingWebhooks(srv webhook.Server, cfg *config.Config, store *cache.Store, deps placementDeps, m *metrics.Recorder, log logr.Logger) {
	register := func(name, path string, h webhook.AdmissionHandler) { registerValidating(srv, deps, m, name, path, h) }
	enforce := func(guard, action string) *handlers.Enforcer {
		return handlers.NewEnforcer(guard, action, m, deps.events, log.WithName("enforcement").WithValues("guard", guard))
	}
	// The size webhook answers every review with a verdict, never with the
	// budget's 429 (its Shoot entry fails open): what the budget does not
	// hold is measured as it arrives.
	registerSize := func(h webhook.AdmissionHandler) {
		c := validatingChain(m, handlers.WebhookResourceSize, h)
		srv.Register(handlers.WebhookResourceSizePath, server.GuardOrStream(deps.limits, deps.drain, c, handlers.StreamSizeReviews(c)))
	}
	seed := newSeedValidator(cfg, store, deps, m, enforce, log)
	if seed.Binding != nil {
		register(handlers.WebhookBinding, handlers.WebhookBindingPath, seed.Binding)
	}
	if seed.Capacity != nil {
		register(handlers.WebhookCapacity, handlers.WebhookCapacityPath, seed.Capacity)
	}
	// Both checks at one path, for the one registration the manifests
	// ship; the paths of each stay served for registrations made apart
	// (and for a rolling upgrade from a version that registered them so).
	if seed.Binding != nil || seed.Capacity != nil {
		srv.Register(handlers.WebhookSeedPath, server.Guard(deps.limits, deps.drain,
			handlers.RequireAdmissionReviewV1(handlers.NewAdmissionWebhook(seed))))
	}
	rsLog := log.WithName("validate-resource-size")
	if ra := cfg.ResourceAdmission; ra != nil {
		registerSize(newResourceAdmissionValidator(ra, store, m, enforce(handlers.WebhookResourceSize, ra.Enforcement()), rsLog))
	} else {
		registerSize(newResourceSizeValidator(cfg.ResourceSize, store, m, enforce(handlers.WebhookResourceSize, cfg.ResourceSize.Enforcement), rsLog))
	}
	register(handlers.WebhookKubeconfigSecret, handlers.WebhookKubeconfigSecretPath, &handlers.KubeconfigSecretValidator{
		AllowedFields: cfg.KubeconfigSecret.AllowedFields,
		Log:           log.WithName("validate-kubeconfig-secret"),
		Enforce:       enforce(handlers.WebhookKubeconfigSecret, cfg.KubeconfigSecret.Enforcement),
	})
	register(handlers.WebhookNamespaceDeletion, handlers.WebhookNamespaceDeletionPath, &handlers.NamespaceDeletionValidator{
		Shoots:   store,
		Projects: store,
		// Until the informers have synced, deletions are refused (503)
		// rather than judged on an empty cache.
		Synced:  deps.synced,
		Log:     log.WithName("validate-namespace-deletion"),
		Enforce: enforce(handlers.WebhookNamespaceDeletion, cfg.NamespaceDeletion.Enforcement),
	})
}

// newSeedValidator builds the binding and the capacity checks, each unless
// disabled.
func newSeedValidator(cfg *config.Config, store *cache.Store, deps placementDeps, m *metrics.Recorder,
	enforce func(guard, action string) *handlers.Enforcer, log logr.Logger) *handlers.ShootSeedValidator {
	seed := &handlers.ShootSeedValidator{Metrics: m}
	if cfg.BindingEnabled() {
		seed.Binding = &handlers.ShootBindingValidator{
			Landscape:   store,
			Authorizer:  deps.authorizer,
			Signer:      deps.signer,
			NetworkMode: placementOptions(cfg).NetworkMode,
			Policies:    placementOptions(cfg).Policies,
			// Shoots from a CRD have no binding subresource; the retry
			// controller's bindMode says so.
			BindThroughShoots: pendingConfig(cfg).Mode == pending.BindThroughUpdate,
			Log:               log.WithName("validate-shoot-binding"),
			Projects:          store,
			StalenessGuard:    deps.staleness,
			Enforce:           enforce(handlers.WebhookBinding, cfg.Binding.Enforcement),
		}
	}
	if cfg.CapacityEnabled() {
		seed.Capacity = &handlers.ShootCapacityValidator{
			Store:                store,
			Projects:             store,
			Cluster:              deps.cluster,
			Signer:               deps.signer,
			UnrestrictedSubjects: subjects(cfg.Capacity.UnrestrictedSubjects),
			Log:                  log.WithName("validate-shoot-capacity"),
			StalenessGuard:       deps.staleness,
			Enforce:              enforce(handlers.WebhookCapacity, cfg.Capacity.Enforcement),
		}
	}
	return seed
}

// registerValidating serves validating webhook name at path: its answers
// counted, behind the shared body limit and budget of request bytes.
func registerValidating(srv webhook.Server, deps placementDeps, m *metrics.Recorder, name, path string, h webhook.AdmissionHandler) {
	srv.Register(path, server.Guard(deps.limits, deps.drain, validatingChain(m, name, h)))
}

// validatingChain is how every validating webhook reads a review and
// answers: the review type check, controller-runtime's decoding, the count
// of its answers, the handler.
func validatingChain(m *metrics.Recorder, name string, h webhook.AdmissionHandler) http.Handler {
	return handlers.RequireAdmissionReviewV1(handlers.NewAdmissionWebhook(handlers.Observed(name, m, h)))
}

func newResourceSizeValidator(rs config.ResourceSize, store *cache.Store, m *metrics.Recorder, enforce *handlers.Enforcer, log logr.Logger) *handlers.ResourceSizeValidator {
	v := &handlers.ResourceSizeValidator{
		Enforce:              enforce,
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
		mf, err := l.ManagedFieldsBytes()
		if err != nil {
			panic(fmt.Sprintf("resourceSize managedFieldsSize %q: %v", l.ManagedFieldsSize, err))
		}
		v.Limits = append(v.Limits, handlers.SizeLimit{ResourceRule: rule(l.Resources), Size: l.Size, Bytes: n,
			ManagedFieldsSize: quantityText(l.ManagedFieldsSize, mf), ManagedFieldsBytes: mf, Enforcement: l.Enforcement})
	}
	for _, c := range rs.Counts {
		v.Counts = append(v.Counts, handlers.CountLimit{ResourceRule: rule(c.Resources), Count: *c.Count, Enforcement: c.Enforcement})
	}
	return v
}

// newResourceAdmissionValidator is the resource-size webhook configured by
// Gardener's resourceAdmission section. Each entry becomes a size and a count
// rule; the half it does not set limits nothing but still ends the search, so
// the first matching entry decides both, as in Gardener.
func newResourceAdmissionValidator(ra *config.ResourceAdmission, store *cache.Store, m *metrics.Recorder, enforce *handlers.Enforcer, log logr.Logger) *handlers.ResourceSizeValidator {
	v := &handlers.ResourceSizeValidator{
		Enforce: enforce,
		Counter: store,
		Metrics: m,
		Log:     log,
	}
	for _, s := range ra.UnrestrictedSubjects {
		v.UnrestrictedSubjects = append(v.UnrestrictedSubjects, handlers.Subject{Kind: s.Kind, Name: s.Name, Namespace: s.Namespace})
	}
	for _, l := range ra.Limits {
		r := handlers.ResourceRule{APIGroups: l.APIGroups, APIVersions: l.APIVersions, Resources: l.Resources}
		size := handlers.SizeLimit{ResourceRule: r, None: l.Size == nil}
		if l.Size != nil {
			size.Size, size.Bytes = l.Size.String(), l.Size.Value()
			configured := ""
			if l.ManagedFieldsSize != nil {
				configured = l.ManagedFieldsSize.String()
			}
			size.ManagedFieldsBytes = l.ManagedFieldsBytes()
			size.ManagedFieldsSize = quantityText(configured, size.ManagedFieldsBytes)
		}
		count := handlers.CountLimit{ResourceRule: r, None: l.Count == nil}
		if l.Count != nil {
			count.Count = *l.Count
		}
		v.Limits = append(v.Limits, size)
		v.Counts = append(v.Counts, count)
	}
	return v
}

// quantityText is a limit as configured, or for a default of n bytes n in
// binary units ("16Ki"), for messages.
func quantityText(configured string, n int64) string {
	if configured != "" {
		return configured
	}
	return resource.NewQuantity(n, resource.BinarySI).String()
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
