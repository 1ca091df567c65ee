package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/api"
	"github.com/seedwarden/seedwarden/internal/config"
)

// simulateLive is `simulate --kubeconfig PATH --shoot NAMESPACE/NAME`: live
// explain. Every error is exit 2: the flags name something that cannot be
// read (an unreachable cluster, a Shoot that does not exist).
func simulateLive(ctx context.Context, cfg *config.Config, kubeconfig, shoot, format string, stdout, stderr io.Writer) int {
	out := bufio.NewWriter(stdout)
	encode, err := newEncoder(format, out)
	if err != nil {
		fmt.Fprintf(stderr, "webhook simulate: %v\n", err)
		return exitUsage
	}
	key, err := parseShootKey(shoot)
	if err != nil {
		fmt.Fprintf(stderr, "webhook simulate: %v\n", err)
		return exitUsage
	}
	r, err := explainLive(ctx, cfg, kubeconfig, key)
	if err != nil {
		fmt.Fprintf(stderr, "webhook simulate: %v\n", err)
		return exitUsage
	}
	encode(r)
	if err := out.Flush(); err != nil {
		fmt.Fprintf(stderr, "webhook simulate: %v\n", err)
		return exitError
	}
	return exitOK
}

// parseShootKey reads --shoot NAMESPACE/NAME of live explain.
func parseShootKey(v string) (client.ObjectKey, error) {
	ns, name, ok := strings.Cut(v, "/")
	if !ok || len(validation.IsDNS1123Label(ns)) > 0 || len(validation.IsDNS1123Subdomain(name)) > 0 {
		return client.ObjectKey{}, fmt.Errorf("--shoot %q: with --kubeconfig, want NAMESPACE/NAME of an existing Shoot", v)
	}
	return client.ObjectKey{Namespace: ns, Name: name}, nil
}

// explainLive decides the existing Shoot key against the landscape listed
// from the cluster, with the webhook's options. The Shoot is left out of the
// landscape, so its own seed (or the seed it is moving from) does not count
// it: the decision is the one the Shoot would get if it were created now.
// An error (the cluster cannot be listed, no such Shoot) names the flag and
// its value.
func explainLive(ctx context.Context, cfg *config.Config, kubeconfig string, key client.ObjectKey) (result, error) {
	objs, err := liveLandscape(ctx, kubeconfig, cfg.GardenNamespace)
	if err != nil {
		return result{}, err
	}
	shoot, rest := takeShoot(objs, key)
	if shoot == nil {
		return result{}, fmt.Errorf("--shoot %q: not found", key.String())
	}
	store := newStore(cfg, nil)
	store.Load(rest)
	return placeExplained(shoot.Name, store, shoot, placementOptions(cfg)), nil
}

// takeShoot returns the Shoot key of objs, and objs without it.
func takeShoot(objs []client.Object, key client.ObjectKey) (*api.Shoot, []client.Object) {
	for i, o := range objs {
		if sh, ok := o.(*api.Shoot); ok && client.ObjectKeyFromObject(sh) == key {
			rest := append(append(make([]client.Object, 0, len(objs)-1), objs[:i]...), objs[i+1:]...)
			return sh, rest
		}
	}
	return nil, objs
}
