#!/usr/bin/env bash
# Builds promtool (the Prometheus rule checker and rule unit-test runner)
# or, with the argument "prometheus", the Prometheus server, from the Go
# module proxy, once per machine: no prebuilt binary is downloaded. Both come
# from one version of github.com/prometheus/prometheus with the same tags.
# deploy/prometheusrule_test.go runs the rule unit tests in deploy/rules_test
# with promtool (it calls this script); the e2e install package runs the
# server with the shipped rules and the ServiceMonitor's scrape.
#
# Usage: PROMTOOL=$(bash hack/rules/promtool.sh | tail -1)
#        PROMETHEUS=$(bash hack/rules/promtool.sh prometheus | tail -1)
#
# Output: <repo>/.cache/tools/bin/promtool (or prometheus); the last line on
# stdout is its path, progress goes to stderr. When the binary there was
# built from the wanted version and tags (go version -m) the script returns
# at once.
#
# Built with -tags remove_all_sd: promtool's rule checks and unit tests need
# none of Prometheus's service discoveries, whose cloud SDKs are most of the
# compile, and the server is given static scrape configs only (no Kubernetes
# service discovery: the e2e test translates the ServiceMonitor). A cold
# promtool build (empty GOCACHE) then takes about 5 minutes on 2 busy cores
# (2m40s CPU), against 9 minutes with them, plus the module downloads. The
# server is built without -tags builtinassets: it serves its API but not the
# web UI (whose assets are not in the Go module).
set -euo pipefail

# The one place the version is set (the tests call this script).
PROMETHEUS_VERSION=v0.316.0

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BIN_DIR="${REPO_ROOT}/.cache/tools/bin"
PROGRAM="${1:-promtool}"
case "${PROGRAM}" in
  promtool | prometheus) ;;
  *)
    echo "usage: $0 [promtool|prometheus] (got ${PROGRAM})" >&2
    exit 2
    ;;
esac
BINARY="${BIN_DIR}/${PROGRAM}"
export PATH="${PATH}:/usr/local/go/bin"

TAGS=remove_all_sd

built() {
  [[ -x "${BINARY}" ]] || return 1
  local info
  info="$(go version -m "${BINARY}")" || return 1
  awk '$1 == "mod" && $2 == "github.com/prometheus/prometheus" { print $3 }' <<<"${info}" | grep -qx "${PROMETHEUS_VERSION}" &&
    grep -q -- "-tags=${TAGS}\$" <<<"${info}"
}

mkdir -p "${BIN_DIR}"
# Serialize concurrent callers (test packages running at once).
if ! built && command -v flock >/dev/null 2>&1; then
  exec 9>"${BIN_DIR}/.${PROGRAM}.lock"
  flock 9
fi
if ! built; then
  printf '[%s] building github.com/prometheus/prometheus/cmd/%s@%s into %s\n' "${PROGRAM}" "${PROGRAM}" "${PROMETHEUS_VERSION}" "${BIN_DIR}" >&2
  start=${SECONDS}
  # Outside the module: go install pkg@version ignores go.mod, and a
  # GOFLAGS=-mod=... of the caller would be refused.
  (cd "${BIN_DIR}" && GOFLAGS= GOBIN="${BIN_DIR}" go install -tags "${TAGS}" "github.com/prometheus/prometheus/cmd/${PROGRAM}@${PROMETHEUS_VERSION}")
  printf '[%s] built in %ds\n' "${PROGRAM}" "$((SECONDS - start))" >&2
fi
echo "${BINARY}"
