package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/cache"
	"github.com/seedwarden/seedwarden/internal/landscape"
	"github.com/seedwarden/seedwarden/internal/seedmanagement"
)

// liveListTimeout bounds reading a landscape from a cluster: every list,
// all pages. An unreachable API server fails within it, not after client-go's
// retries.
const liveListTimeout = 30 * time.Second

// liveLandscape lists, once, the landscape of the cluster that kubeconfig
// names (current context; "" is what `serve` uses without the flag:
// $KUBECONFIG, in-cluster, ~/.kube/config) with the region-config ConfigMaps
// of gardenNamespace, for `simulate --kubeconfig` and `plan --kubeconfig`.
// It writes nothing and returns the objects as a landscape file gives them,
// so cache.Store.Load takes them. Errors name the flag, its value, the
// resource and the API server.
func liveLandscape(ctx context.Context, kubeconfig, gardenNamespace string) ([]client.Object, error) {
	restCfg, err := restConfig(kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", kubeconfigFlag(kubeconfig), err)
	}
	c, err := client.New(restCfg, client.Options{Scheme: cache.NewScheme()})
	if err != nil {
		return nil, fmt.Errorf("%s: client for %s: %w", kubeconfigFlag(kubeconfig), restCfg.Host, err)
	}
	ctx, cancel := context.WithTimeout(ctx, liveListTimeout)
	defer cancel()
	objs, err := landscape.List(ctx, c, gardenNamespace)
	if le := (*landscape.ListError)(nil); errors.As(err, &le) {
		return nil, fmt.Errorf("%s: cannot list %s from %s: %w", kubeconfigFlag(kubeconfig), le.Resource, restCfg.Host, le.Err)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", kubeconfigFlag(kubeconfig), err)
	}
	return objs, nil
}

// kubeconfigFlag names where the cluster configuration came from.
func kubeconfigFlag(path string) string {
	if path == "" {
		return "--kubeconfig not given ($KUBECONFIG, in-cluster or ~/.kube/config)"
	}
	return fmt.Sprintf("--kubeconfig %q", path)
}

// liveManagedSeedSets gets, once, the ManagedSeedSets keys name from the
// cluster that kubeconfig names, for `plan --kubeconfig --autoscale` when
// its file does not carry them. Errors name the flag, the set and the API
// server.
func liveManagedSeedSets(ctx context.Context, kubeconfig string, keys []client.ObjectKey) ([]*seedmanagement.ManagedSeedSet, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	restCfg, err := restConfig(kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", kubeconfigFlag(kubeconfig), err)
	}
	scheme := runtime.NewScheme()
	utilruntime.Must(seedmanagement.AddToScheme(scheme))
	c, err := client.New(restCfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("%s: client for %s: %w", kubeconfigFlag(kubeconfig), restCfg.Host, err)
	}
	ctx, cancel := context.WithTimeout(ctx, liveListTimeout)
	defer cancel()
	out := make([]*seedmanagement.ManagedSeedSet, 0, len(keys))
	for _, key := range keys {
		var mss seedmanagement.ManagedSeedSet
		if err := c.Get(ctx, key, &mss); err != nil {
			return nil, fmt.Errorf("%s: cannot get ManagedSeedSet %s from %s: %w", kubeconfigFlag(kubeconfig), key, restCfg.Host, err)
		}
		out = append(out, &mss)
	}
	return out, nil
}
