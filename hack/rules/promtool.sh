#!/usr/bin/env bash
# Builds promtool (the Prometheus rule checker and rule unit-test runner)
# from the Go module proxy, once per machine: no prebuilt binary is
# downloaded. deploy/prometheusrule_test.go runs the rule unit tests in
# deploy/rules_test with it (it builds it the same way when this script has
# not run).
#
# Usage: PROMTOOL=$(bash hack/rules/promtool.sh | tail -1)
#
# Output: <repo>/.cache/tools/bin/promtool; the last line on stdout is its
# path, progress goes to stderr. When the binary there was built from the
# wanted version (go version -m) the script returns at once.
#
# A cold build takes about 9 minutes on 2 cores (the prometheus module
# pulls in its service-discovery SDKs), plus the module downloads.
set -euo pipefail

# Keep in step with promtoolVersion in deploy/prometheusrule_test.go.
PROMETHEUS_VERSION=v0.316.0

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BIN_DIR="${REPO_ROOT}/.cache/tools/bin"
PROMTOOL="${BIN_DIR}/promtool"
export PATH="${PATH}:/usr/local/go/bin"

built() {
  [[ -x "${PROMTOOL}" ]] &&
    go version -m "${PROMTOOL}" | awk '$1 == "mod" && $2 == "github.com/prometheus/prometheus" { print $3 }' | grep -qx "${PROMETHEUS_VERSION}"
}

if ! built; then
  mkdir -p "${BIN_DIR}"
  printf '[promtool] building github.com/prometheus/prometheus/cmd/promtool@%s into %s\n' "${PROMETHEUS_VERSION}" "${BIN_DIR}" >&2
  start=${SECONDS}
  # Outside the module: go install pkg@version ignores go.mod, and a
  # GOFLAGS=-mod=... of the caller would be refused.
  (cd "${BIN_DIR}" && GOFLAGS= GOBIN="${BIN_DIR}" go install "github.com/prometheus/prometheus/cmd/promtool@${PROMETHEUS_VERSION}")
  printf '[promtool] built in %ds\n' "$((SECONDS - start))" >&2
fi
echo "${PROMTOOL}"
