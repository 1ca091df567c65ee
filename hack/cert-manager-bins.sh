#!/usr/bin/env bash
# Builds cert-manager's controller and cainjector, at the version pinned in
# hack/cert-manager/PIN, into the git-ignored .cache/cert-manager/bin, for the
# e2e package that installs seedwarden with the real programs (e2e/install).
#
# The Go module proxy serves cert-manager's root module but not the modules of
# its programs (cmd/controller, cmd/cainjector), and it refuses the vcert
# version the controller needs; two pinned tarballs hold those trees. Sources
# of the tarballs, tried in order:
#   1. $CERT_MANAGER_SRC: a folder holding both tarballs;
#   2. ../shared/cert-manager beside the repository.
# Each tarball's sha256 is checked against the pin. When neither folder has
# both, it says what each one lacked and exits 1.
#
# Usage:
#   BIN=$(bash hack/cert-manager-bins.sh | tail -1)
#   bash hack/cert-manager-bins.sh --check   only looks the sources up (or finds
#                                             the build done); fast, builds nothing
#   CRDS=$(bash hack/cert-manager-bins.sh --crds | tail -1)
#                                             cert-manager's CRDs (root module's
#                                             deploy/crds, from the module proxy)
#
# The last line on stdout is the bin dir; progress goes to stderr. A stamp
# records the pin, this script's hash and what `go version -m` says of each
# binary; when it matches the script returns at once. A cold build takes ~8 min
# on 2 idle cores (the controller links ~1,355 packages); the Go build cache
# makes a rebuild about a minute of linking.
set -euo pipefail

# Bump when the way the binaries are built changes, to force a rebuild.
RECIPE=1
BINARIES=(cert-manager-controller cert-manager-cainjector)

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${REPO_ROOT}/.cache/cert-manager"
BIN_DIR="${CACHE}/bin"
SRC_DIR="${CACHE}/src"
STAMP="${BIN_DIR}/.stamp"
OFFLINE="${REPO_ROOT}/../shared/cert-manager"
ROOT_MODULE=github.com/cert-manager/cert-manager

log() { printf '[cert-manager-bins] %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

# shellcheck source=cert-manager/PIN
source <(grep -E '^[A-Z0-9_]+=' "${REPO_ROOT}/hack/cert-manager/PIN")
for v in CERT_MANAGER_VERSION CERT_MANAGER_CMD_TARBALL CERT_MANAGER_CMD_SHA256 VCERT_TARBALL VCERT_SHA256; do
  [[ -n "${!v:-}" ]] || die "hack/cert-manager/PIN has no ${v}"
done

want_stamp() {
  echo "cert-manager=${CERT_MANAGER_VERSION} cmd=${CERT_MANAGER_CMD_SHA256} vcert=${VCERT_SHA256} recipe=${RECIPE} script=$(sha256sum "${BASH_SOURCE[0]}" | cut -d' ' -f1)"
}

up_to_date() {
  local b
  for b in "${BINARIES[@]}"; do [[ -x "${BIN_DIR}/${b}" ]] || return 1; done
  [[ -f "${STAMP}" && "$(head -1 "${STAMP}")" == "$(want_stamp)" ]]
}

# find_sources: sets SOURCE to the first folder holding both tarballs with the
# pinned checksums; on failure leaves what each candidate lacked in tried.
tried=()
SOURCE=""
check_folder() { # label, folder
  local label="$1" dir="$2" name sum got ok=0
  if [[ ! -d "${dir}" ]]; then
    tried+=("${label}: no such folder")
    return 1
  fi
  for pair in "${CERT_MANAGER_CMD_TARBALL}:${CERT_MANAGER_CMD_SHA256}" "${VCERT_TARBALL}:${VCERT_SHA256}"; do
    name="${pair%%:*}" sum="${pair#*:}"
    if [[ ! -f "${dir}/${name}" ]]; then
      tried+=("${label}: no ${name}")
      ok=1
      continue
    fi
    got="$(sha256sum "${dir}/${name}" | cut -d' ' -f1)"
    if [[ "${got}" != "${sum}" ]]; then
      tried+=("${label}: ${name} has sha256 ${got}, pinned ${sum}")
      ok=1
    fi
  done
  return "${ok}"
}

find_sources() {
  if [[ -z "${CERT_MANAGER_SRC:-}" ]]; then
    tried+=("CERT_MANAGER_SRC: not set")
  elif check_folder "CERT_MANAGER_SRC=${CERT_MANAGER_SRC}" "${CERT_MANAGER_SRC}"; then
    SOURCE="${CERT_MANAGER_SRC}"
    return 0
  fi
  if check_folder "${OFFLINE}" "${OFFLINE}"; then
    SOURCE="${OFFLINE}"
    return 0
  fi
  log "no source of cert-manager ${CERT_MANAGER_VERSION}'s programs worked:"
  local t
  for t in "${tried[@]}"; do log "  - ${t}"; done
  log "set CERT_MANAGER_SRC to a folder holding ${CERT_MANAGER_CMD_TARBALL} and ${VCERT_TARBALL} (checksums in hack/cert-manager/PIN)"
  return 1
}

root_module_dir() {
  local dir
  dir="$(GOWORK=off GOFLAGS=-mod=mod go mod download -json "${ROOT_MODULE}@${CERT_MANAGER_VERSION}" |
    sed -n 's/^[[:space:]]*"Dir":[[:space:]]*"\(.*\)",\{0,1\}$/\1/p')"
  [[ -n "${dir}" && -d "${dir}" ]] || die "could not download ${ROOT_MODULE}@${CERT_MANAGER_VERSION}"
  echo "${dir}"
}

case "${1:-}" in
--check)
  up_to_date && exit 0
  find_sources || exit 1
  log "cert-manager's program sources: ${SOURCE}"
  exit 0
  ;;
--crds)
  command -v go >/dev/null 2>&1 || die "go not found in PATH"
  dir="$(root_module_dir)/deploy/crds"
  [[ -f "${dir}/cert-manager.io_certificates.yaml" ]] || die "${dir}: no cert-manager.io_certificates.yaml"
  echo "${dir}"
  exit 0
  ;;
"") ;;
*)
  log "usage: $0 [--check|--crds]"
  exit 2
  ;;
esac

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
find_sources || exit 1

# Untar into a fresh tree: cmd/{controller,cainjector} and vcert beside them.
rm -rf "${SRC_DIR}"
mkdir -p "${SRC_DIR}/vcert"
tar -xzf "${SOURCE}/${CERT_MANAGER_CMD_TARBALL}" -C "${SRC_DIR}" cmd/controller cmd/cainjector ||
  die "${SOURCE}/${CERT_MANAGER_CMD_TARBALL}: no cmd/controller and cmd/cainjector in it"
tar -xzf "${SOURCE}/${VCERT_TARBALL}" -C "${SRC_DIR}/vcert" || die "${SOURCE}/${VCERT_TARBALL}: not a readable .tar.gz"
head -1 "${SRC_DIR}/vcert/go.mod" | grep -q '^module github.com/Venafi/vcert/v5$' ||
  die "${VCERT_TARBALL}: its go.mod is not github.com/Venafi/vcert/v5's"

# The module's own settings, isolated from the caller's workspace and flags.
# -mod=mod lets go add the sums that the edited requirements need; go mod tidy
# is not run: it also wants vcert's test-only versions, which the proxy refuses.
export GOWORK=off
export GOFLAGS="-buildvcs=false -mod=mod"
export CGO_ENABLED=0
unset GOOS GOARCH

rm -f "${STAMP}"
NEW="${BIN_DIR}/.new"
rm -rf "${NEW}"
mkdir -p "${NEW}"
start=${SECONDS}
ldflags="-s -w -X ${ROOT_MODULE}/pkg/util.AppVersion=${CERT_MANAGER_VERSION}"

# build PROGRAM: cmd/PROGRAM against the pinned root module and the vcert tree.
build() {
  local program="$1" dir="${SRC_DIR}/cmd/$1" t=${SECONDS}
  (cd "${dir}" && go mod edit -dropreplace "${ROOT_MODULE}" \
    -require "${ROOT_MODULE}@${CERT_MANAGER_VERSION}" \
    -replace "github.com/Venafi/vcert/v5=${SRC_DIR}/vcert")
  log "go build ${program} (cert-manager ${CERT_MANAGER_VERSION})"
  (cd "${dir}" && go build -trimpath -ldflags="${ldflags}" -o "${NEW}/cert-manager-${program}" .)
  log "${program} built in $((SECONDS - t))s"
}
build controller
build cainjector

# Each binary must link the pinned root module (go version -m reads what the
# linker recorded), and the controller the vcert tree.
info=""
for b in "${BINARIES[@]}"; do
  mod="$(go version -m "${NEW}/${b}")"
  grep -qE "^[[:space:]]+dep[[:space:]]+${ROOT_MODULE}[[:space:]]+${CERT_MANAGER_VERSION}([[:space:]]|$)" <<<"${mod}" ||
    die "${b} does not link ${ROOT_MODULE} ${CERT_MANAGER_VERSION}"
  info+="${b}: $(head -1 <<<"${mod}" | cut -d' ' -f2) $(grep -E "^[[:space:]]+dep[[:space:]]+${ROOT_MODULE}[[:space:]]" <<<"${mod}" | awk '{print $3}')"$'\n'
done
go version -m "${NEW}/cert-manager-controller" | grep -qE '^[[:space:]]+=>[[:space:]]+.*vcert' ||
  die "cert-manager-controller does not link the vcert tree of ${VCERT_TARBALL}"

# Renamed into place, so a running binary keeps its file.
for b in "${BINARIES[@]}"; do mv -f "${NEW}/${b}" "${BIN_DIR}/${b}"; done
rmdir "${NEW}"
{ want_stamp; printf '%s' "${info}"; } >"${STAMP}"
log "built ${BINARIES[*]} in $((SECONDS - start))s: ${BIN_DIR}"
echo "${BIN_DIR}"
