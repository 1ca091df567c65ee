package main

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	authorizationv1client "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/seedwarden/seedwarden/internal/authz"
	"github.com/seedwarden/seedwarden/internal/autoscalingapi"
	"github.com/seedwarden/seedwarden/internal/config"
	"github.com/seedwarden/seedwarden/internal/handlers"
	"github.com/seedwarden/seedwarden/internal/metrics"
)

// registerSeedAutoscalerWebhook serves the SeedAutoscaler webhook when
// serving a cluster, on every replica and whether or not the controller
// runs here: the CRD is installed either way, and a SeedAutoscaler stored
// unchecked would act once the controller is enabled. It asks
// SubjectAccessReviews with the binding webhook's cache TTL and timeout,
// and lists SeedAutoscalers from the API server (reader uncached: a second
// one for a set must be seen as soon as it is stored).
func registerSeedAutoscalerWebhook(srv webhook.Server, cfg *config.Config, restCfg *rest.Config, reader client.Reader, deps placementDeps, m *metrics.Recorder, log logr.Logger) error {
	c, err := authorizationv1client.NewForConfig(restCfg)
	if err != nil {
		return fmt.Errorf("authorization client: %w", err)
	}
	registerValidating(srv, deps, m, handlers.WebhookSeedAutoscaler, handlers.WebhookSeedAutoscalerPath, &handlers.SeedAutoscalerValidator{
		Authorizer: authz.NewSARAuthorizer(c.SubjectAccessReviews(), handlers.ScalePermission,
			cfg.Binding.AuthorizationCacheTTL.Duration, cfg.Binding.AuthorizationTimeout.Duration, nil),
		Autoscalers: listSeedAutoscalers(reader),
		Log:         log.WithName("validate-seed-autoscaler"),
	})
	return nil
}

// listSeedAutoscalers lists a namespace's SeedAutoscalers through reader.
func listSeedAutoscalers(reader client.Reader) handlers.SeedAutoscalerLister {
	return func(ctx context.Context, namespace string) ([]autoscalingapi.SeedAutoscaler, error) {
		var list autoscalingapi.SeedAutoscalerList
		if err := reader.List(ctx, &list, client.InNamespace(namespace)); err != nil {
			return nil, err
		}
		return list.Items, nil
	}
}
