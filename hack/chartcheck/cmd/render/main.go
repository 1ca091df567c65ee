// Command render writes what `helm template` (Go engine) and `kubectl
// kustomize` make of charts/seedwarden and deploy/manifests into a directory,
// for the e2e suite to send to its API server (it cannot import Helm):
//
//	go run ./cmd/render -out DIR
//
// Files: kustomize.yaml (the base), kustomize-components.yaml (the base with
// every Component of deploy/, in name order, the virtual-garden one with
// -webhook-host), helm-default.yaml (default
// values), helm-options.yaml (every optional part on: NetworkPolicy, client
// authentication, an existing issuer, patch mode, labels, the virtual
// garden), helm-virtual-garden.yaml (the virtual garden's values with
// -webhook-host and the resource-size webhooks: what kustomize-components.yaml
// registers).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/seedwarden/seedwarden/hack/chartcheck"
)

func main() {
	out := flag.String("out", "", "directory to write the rendered YAML to (created)")
	host := flag.String("webhook-host", chartcheck.DefaultWebhookHost, "the virtual-garden Component's webhook host[:port] in kustomize-components.yaml")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "render: -out is required")
		os.Exit(2)
	}
	if err := run(*out, *host); err != nil {
		fmt.Fprintln(os.Stderr, "render:", err)
		os.Exit(1)
	}
}

func run(out, host string) error {
	root, err := chartcheck.RepoRoot()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	base, err := chartcheck.RenderKustomize(filepath.Join(root, chartcheck.ManifestsDir))
	if err != nil {
		return err
	}
	comps, err := chartcheck.Components(root)
	if err != nil {
		return err
	}
	all, err := chartcheck.RenderOverlay(root, chartcheck.ComponentInputs(comps, host), comps...)
	if err != nil {
		return err
	}
	ch, err := chartcheck.LoadChart(filepath.Join(root, chartcheck.ChartDir))
	if err != nil {
		return err
	}
	def, err := chartcheck.RenderChart(ch, nil)
	if err != nil {
		return err
	}
	opt, err := chartcheck.RenderChart(ch, chartcheck.OptionValues())
	if err != nil {
		return err
	}
	vg, err := chartcheck.RenderChart(ch, chartcheck.VirtualGardenValues(host))
	if err != nil {
		return err
	}
	for name, objs := range map[string][]chartcheck.Object{
		"helm-virtual-garden.yaml": vg,
		"kustomize.yaml":           base, "kustomize-components.yaml": all, "helm-default.yaml": def, "helm-options.yaml": opt,
	} {
		if err := chartcheck.WriteYAML(filepath.Join(out, name), objs); err != nil {
			return err
		}
	}
	return nil
}
