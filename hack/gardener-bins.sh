#!/usr/bin/env bash
# Builds the programs that link Gardener's code (module hack/gardener, against
# the tree hack/gardener-src.sh puts into .cache/gardener/src) into
# .cache/gardener/bin:
#   garden              a real garden for the e2e suite (./cmd/garden)
#   gardener-scheduler  Gardener's scheduler, for the coexistence tests
#   decide              the placement oracle, Gardener as it is (AllowIPv4)
#   decide-disjoint     the same with IPv4 shoot networks checked against the
#                       seed's too (Disjoint): built with go build -overlay from
#                       a copy of one Gardener file edited here, never committed
#
# Usage:
#   BIN=$(bash hack/gardener-bins.sh | tail -1)
#   OVERLAY=$(bash hack/gardener-bins.sh --overlay | tail -1)
#     only writes the Disjoint overlay for this checkout and prints its path,
#     for go test -overlay "$OVERLAY" ./cmd/decide in hack/gardener.
#
# The last line on stdout is the bin dir (or the overlay); progress goes to
# stderr. A stamp records the pinned commit and a hash of hack/gardener's
# sources and of this script; when it matches and all binaries exist the
# script returns at once without calling go. A cold build takes ~15 min on 2
# cores; the Go build cache makes later ones a few minutes.
set -euo pipefail

# Bump when the way the binaries are built changes, to force a rebuild.
RECIPE=1
BINARIES=(garden gardener-scheduler decide decide-disjoint)

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MODULE="${REPO_ROOT}/hack/gardener"
CACHE="${REPO_ROOT}/.cache/gardener"
BIN_DIR="${CACHE}/bin"
STAMP="${BIN_DIR}/.stamp"
DISJOINT_DIR="${CACHE}/disjoint"
# The one file the Disjoint build replaces, and the line it changes there.
CIDR_FILE="pkg/utils/validation/cidr/disjoint.go"
IPV4_EXEMPTION='		if NewCIDR(network, fldPath).IsIPv6() {'
NO_EXEMPTION='		{ // seedwarden Disjoint build: IPv4 shoot networks are checked as IPv6 ones are'

log() { printf '[gardener-bins] %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

# shellcheck source=gardener/PIN
source <(grep -E '^[A-Z0-9_]+=' "${MODULE}/PIN")
: "${GARDENER_COMMIT:?hack/gardener/PIN has no GARDENER_COMMIT}"

want_stamp() {
  local sources
  sources="$(cd "${REPO_ROOT}" &&
    { find hack/gardener -type f \( -name go.mod -o -name go.sum -o \( -name '*.go' ! -name '*_test.go' \) \) -print0 |
      LC_ALL=C sort -z | xargs -0 sha256sum; sha256sum hack/gardener-bins.sh; } | sha256sum | cut -d' ' -f1)"
  echo "gardener=${GARDENER_COMMIT} sources=${sources} recipe=${RECIPE}"
}

up_to_date() {
  local b
  for b in "${BINARIES[@]}"; do [[ -x "${BIN_DIR}/${b}" ]] || return 1; done
  # The tree too: go vet and go test of hack/gardener build against it.
  [[ -f "${CACHE}/src/.seedwarden-commit" ]] || return 1
  [[ -f "${STAMP}" && "$(cat "${STAMP}")" == "$(want_stamp)" ]]
}

# write_overlay SRC: the edited copy of CIDR_FILE and an overlay naming it for
# this checkout's path to the tree (and its physical path, should go see that).
# Prints the overlay's path.
write_overlay() {
  local src="$1" orig edited overlay
  orig="${src}/${CIDR_FILE}"
  edited="${DISJOINT_DIR}/disjoint.go"
  overlay="${DISJOINT_DIR}/overlay-$(printf '%s' "${REPO_ROOT}" | sha256sum | cut -c1-12).json"
  mkdir -p "${DISJOINT_DIR}"
  [[ "$(grep -cxF -- "${IPV4_EXEMPTION}" "${orig}")" == 1 ]] ||
    die "${orig}: expected exactly one line '${IPV4_EXEMPTION}' (the IPv4 exemption); Gardener changed, revisit the Disjoint build"
  awk -v old="${IPV4_EXEMPTION}" -v new="${NO_EXEMPTION}" '$0 == old { print new; next } { print }' "${orig}" >"${edited}.tmp"
  [[ "$(grep -cxF -- "${NO_EXEMPTION}" "${edited}.tmp")" == 1 && "$(diff "${orig}" "${edited}.tmp" | grep -c '^[<>]')" == 2 ]] ||
    die "editing ${orig} did not change exactly the one line"
  mv -f "${edited}.tmp" "${edited}"
  local physical
  physical="$(cd "${src}" && pwd -P)/${CIDR_FILE}"
  printf '{"Replace":{"%s":"%s","%s":"%s"}}\n' "${orig}" "${edited}" "${physical}" "${edited}" >"${overlay}.tmp"
  mv -f "${overlay}.tmp" "${overlay}"
  echo "${overlay}"
}

if [[ "${1:-}" == "--overlay" ]]; then
  write_overlay "$(bash "${REPO_ROOT}/hack/gardener-src.sh" | tail -1)"
  exit 0
elif [[ $# -gt 0 ]]; then
  log "usage: $0 [--overlay]"
  exit 2
fi

if up_to_date; then
  echo "${BIN_DIR}"
  exit 0
fi

mkdir -p "${BIN_DIR}"
# Serialize concurrent callers (e.g. several test packages at once).
if command -v flock >/dev/null 2>&1; then
  exec 9>"${CACHE}/.bins.lock"
  flock 9
  if up_to_date; then
    echo "${BIN_DIR}"
    exit 0
  fi
fi

command -v go >/dev/null 2>&1 || die "go not found in PATH"
SRC="$(bash "${REPO_ROOT}/hack/gardener-src.sh" | tail -1)"
OVERLAY="$(write_overlay "${SRC}")"

# The module's own settings, isolated from the caller's workspace and flags.
# -trimpath as everywhere else that builds this tree, so the build cache is shared.
export GOWORK=off
export GOFLAGS="-buildvcs=false -mod=mod"
unset GOOS GOARCH

rm -f "${STAMP}"
NEW="${BIN_DIR}/.new"
rm -rf "${NEW}"
mkdir -p "${NEW}"
start=${SECONDS}
cd "${MODULE}"

log "go build garden, gardener-scheduler, decide (Gardener ${GARDENER_COMMIT:0:10})"
go build -trimpath -ldflags="-s -w" -o "${NEW}/" ./cmd/garden ./cmd/decide github.com/gardener/gardener/cmd/gardener-scheduler
log "go build decide-disjoint (overlay ${OVERLAY})"
go build -trimpath -ldflags="-s -w" -overlay "${OVERLAY}" -o "${NEW}/decide-disjoint" ./cmd/decide

# Each oracle must link the rule it is named for.
[[ "$("${NEW}/decide" -network-overlap)" == AllowIPv4 ]] || die "decide does not decide AllowIPv4"
[[ "$("${NEW}/decide-disjoint" -network-overlap)" == Disjoint ]] || die "decide-disjoint does not decide Disjoint"

# Renamed into place, so a running binary keeps its file.
for b in "${BINARIES[@]}"; do mv -f "${NEW}/${b}" "${BIN_DIR}/${b}"; done
rmdir "${NEW}"
want_stamp >"${STAMP}"
log "built ${BINARIES[*]} in $((SECONDS - start))s: ${BIN_DIR}"
echo "${BIN_DIR}"
