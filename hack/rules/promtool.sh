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
# Built with -tags remove_all_sd: promtool's rule checks and unit tests need
# none of Prometheus's service discoveries, whose cloud SDKs are most of the
# compile. A cold build (empty GOCACHE) then takes about 5 minutes on 2 busy
# cores (2m40s CPU), against 9 minutes with them, plus the module downloads.
set -euo pipefail

# The one place the version is set (the tests call this script).
PROMETHEUS_VERSION=v0.316.0

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BIN_DIR="${REPO_ROOT}/.cache/tools/bin"
PROMTOOL="${BIN_DIR}/promtool"
export PATH="${PATH}:/usr/local/go/bin"

TAGS=remove_all_sd

built() {
  [[ -x "${PROMTOOL}" ]] || return 1
  local info
  info="$(go version -m "${PROMTOOL}")" || return 1
  awk '$1 == "mod" && $2 == "github.com/prometheus/prometheus" { print $3 }' <<<"${info}" | grep -qx "${PROMETHEUS_VERSION}" &&
    grep -q -- "-tags=${TAGS}\$" <<<"${info}"
}

mkdir -p "${BIN_DIR}"
# Serialize concurrent callers (test packages running at once).
if ! built && command -v flock >/dev/null 2>&1; then
  exec 9>"${BIN_DIR}/.promtool.lock"
  flock 9
fi
if ! built; then
  printf '[promtool] building github.com/prometheus/prometheus/cmd/promtool@%s into %s\n' "${PROMETHEUS_VERSION}" "${BIN_DIR}" >&2
  start=${SECONDS}
  # Outside the module: go install pkg@version ignores go.mod, and a
  # GOFLAGS=-mod=... of the caller would be refused.
  (cd "${BIN_DIR}" && GOFLAGS= GOBIN="${BIN_DIR}" go install -tags "${TAGS}" "github.com/prometheus/prometheus/cmd/promtool@${PROMETHEUS_VERSION}")
  printf '[promtool] built in %ds\n' "$((SECONDS - start))" >&2
fi
echo "${PROMTOOL}"
