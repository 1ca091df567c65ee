#!/usr/bin/env bash
# Regenerates the CustomResourceDefinitions in e2e/crds from internal/api
# (core.gardener.cloud) and internal/seedmanagement (the ManagedSeedSet, with
# its scale subresource): controller-gen writes them, then hack/crds (a small
# Go program) makes them servable by a plain kube-apiserver: Gardener's
# version of each group, unknown fields kept in spec and status, printer
# columns. See hack/crds/main.go for the details.
#
# Usage: hack/crds/generate.sh [OUTPUT_DIR]   (default: e2e/crds)
# `go test ./hack/crds/` fails when the committed files are out of date.
set -euo pipefail

CONTROLLER_GEN_VERSION=v0.23.0

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "${REPO_ROOT}"
OUT="${1:-e2e/crds}"

mkdir -p "${OUT}"
# controller-gen only (re)writes files; drop ours first so a removed type
# does not leave a stale CRD behind.
rm -f "${OUT}"/core.gardener.cloud_*.yaml "${OUT}"/seedmanagement.gardener.cloud_*.yaml
go run "sigs.k8s.io/controller-tools/cmd/controller-gen@${CONTROLLER_GEN_VERSION}" \
  crd paths="./internal/api/...;./internal/seedmanagement/..." output:crd:dir="${OUT}"
go run ./hack/crds -dir "${OUT}"
