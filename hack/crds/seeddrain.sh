#!/usr/bin/env bash
# Regenerates the SeedDrain CustomResourceDefinition from
# internal/operationsapi with controller-gen, into the kustomize base, the
# chart's crds/ directory (Helm installs it before the templates); the e2e
# tests install it from deploy/, as they do the SeedAutoscaler's.
#
# Usage: hack/crds/seeddrain.sh [OUTPUT_ROOT]   (default: the repository)
# `go test ./hack/crds/` fails when the committed files are out of date.
set -euo pipefail

CONTROLLER_GEN_VERSION=v0.23.0

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "${REPO_ROOT}"
OUT="${1:-.}"

mkdir -p "${OUT}/deploy/manifests" "${OUT}/charts/seedwarden/crds"
go run "sigs.k8s.io/controller-tools/cmd/controller-gen@${CONTROLLER_GEN_VERSION}" \
  crd paths=./internal/operationsapi/... output:crd:stdout |
  # The labels every object of the base carries (deploy/kustomization_test.go).
  awk '!labelled && /^  name: / {
    print "  labels:"; print "    app.kubernetes.io/name: seedwarden"; print "    app.kubernetes.io/part-of: seedwarden"; labelled = 1
  } { print }' \
  > "${OUT}/deploy/manifests/crd-seeddrains.yaml"
cp "${OUT}/deploy/manifests/crd-seeddrains.yaml" "${OUT}/charts/seedwarden/crds/seeddrains.yaml"
