#!/usr/bin/env bash
# Puts Gardener's source tree, at the commit pinned in hack/gardener/PIN, into
# the git-ignored .cache/gardener/src. The Go module proxy does not serve
# github.com/gardener/gardener, so the programs that link Gardener's code
# (hack/gardener: the garden of the e2e suite and the placement oracle) build
# against this tree.
#
# Sources, tried in order:
#   1. $GARDENER_SRC: a Gardener checkout (its HEAD must be the pinned commit
#      when it is a git checkout) or a tarball of the tree;
#   2. the offline tarball ../shared/gardener/gardener-<commit:0:10>.tar.gz
#      beside the repository, its sha256 checked against the pin;
#   3. a shallow git fetch of the pinned commit, where the network allows.
# The first that works wins; when none does, it says what each one lacked and
# exits 1.
#
# Usage: bash hack/gardener-src.sh   (prints the tree's path as its last line)
#        bash hack/gardener-src.sh --check
#          only looks the sources up, in seconds, before any long build: the
#          tree already in place, or $GARDENER_SRC there (a git checkout at the
#          pinned commit), or the offline tarball with the pinned sha256, or the
#          git remote answering (within GARDENER_GIT_CHECK_TIMEOUT, default 15s);
#          when none is, it names all three and exits 1.
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=gardener/PIN
source <(grep -E '^[A-Z0-9_]+=' "${REPO_ROOT}/hack/gardener/PIN")
: "${GARDENER_COMMIT:?hack/gardener/PIN has no GARDENER_COMMIT}"
: "${GARDENER_TARBALL_SHA256:?hack/gardener/PIN has no GARDENER_TARBALL_SHA256}"

CACHE="${REPO_ROOT}/.cache/gardener"
DEST="${CACHE}/src"
STAMP="${DEST}/.seedwarden-commit"
OFFLINE="${REPO_ROOT}/../shared/gardener/gardener-${GARDENER_COMMIT:0:10}.tar.gz"
UPSTREAM="${GARDENER_GIT_URL:-https://github.com/gardener/gardener.git}"

log() { printf '[gardener-src] %s\n' "$*" >&2; }

if [[ -f "${STAMP}" && "$(cat "${STAMP}")" == "${GARDENER_COMMIT}" ]]; then
  [[ "${1:-}" == "--check" ]] || echo "${DEST}"
  exit 0
fi

# check_sources: --check's quick look-up (nothing is unpacked or fetched).
check_sources() {
  local lacks=() head got
  if [[ -z "${GARDENER_SRC:-}" ]]; then
    lacks+=("GARDENER_SRC: not set")
  elif [[ -f "${GARDENER_SRC}" ]]; then
    log "Gardener's source: GARDENER_SRC=${GARDENER_SRC}"
    return 0
  elif [[ -d "${GARDENER_SRC}" ]]; then
    head="$(git -C "${GARDENER_SRC}" rev-parse HEAD 2>/dev/null || echo "${GARDENER_COMMIT}")"
    if [[ "${head}" == "${GARDENER_COMMIT}" ]]; then
      log "Gardener's source: GARDENER_SRC=${GARDENER_SRC}"
      return 0
    fi
    lacks+=("GARDENER_SRC=${GARDENER_SRC}: HEAD is ${head}, pinned ${GARDENER_COMMIT}")
  else
    lacks+=("GARDENER_SRC=${GARDENER_SRC}: no such file or folder")
  fi
  if [[ ! -f "${OFFLINE}" ]]; then
    lacks+=("the tarball beside the clone, ${OFFLINE}: not there")
  elif got="$(sha256sum "${OFFLINE}" | cut -d' ' -f1)" && [[ "${got}" != "${GARDENER_TARBALL_SHA256}" ]]; then
    lacks+=("the tarball beside the clone, ${OFFLINE}: sha256 ${got}, pinned ${GARDENER_TARBALL_SHA256}")
  else
    log "Gardener's source: ${OFFLINE}"
    return 0
  fi
  if ! command -v git >/dev/null; then
    lacks+=("git fetch of ${GARDENER_COMMIT} from ${UPSTREAM}: git not installed")
  elif timeout "${GARDENER_GIT_CHECK_TIMEOUT:-15}" git ls-remote --exit-code "${UPSTREAM}" HEAD >/dev/null 2>&1; then
    log "Gardener's source: git fetch of ${GARDENER_COMMIT} from ${UPSTREAM}"
    return 0
  else
    lacks+=("git fetch of ${GARDENER_COMMIT} from ${UPSTREAM}: the remote does not answer")
  fi
  log "no source of Gardener ${GARDENER_COMMIT} is reachable:"
  local l
  for l in "${lacks[@]}"; do log "  - ${l}"; done
  log "set GARDENER_SRC to a checkout or tarball of that commit, or put gardener-${GARDENER_COMMIT:0:10}.tar.gz into ../shared/gardener beside the clone"
  return 1
}

case "${1:-}" in
--check) check_sources; exit ;;
"") ;;
*) log "usage: $0 [--check]"; exit 2 ;;
esac

mkdir -p "${CACHE}"
if command -v flock >/dev/null 2>&1; then
  exec 9>"${CACHE}/.src.lock"
  flock 9
  if [[ -f "${STAMP}" && "$(cat "${STAMP}")" == "${GARDENER_COMMIT}" ]]; then
    echo "${DEST}"
    exit 0
  fi
fi

TMP="${CACHE}/src.tmp"
rm -rf "${TMP}" "${TMP}.inner"
mkdir -p "${TMP}"
tried=()

untar_checked() { # tarball, expected sha256 (empty: not checked)
  local got
  if [[ -n "$2" ]]; then
    got="$(sha256sum "$1" | cut -d' ' -f1)"
    if [[ "${got}" != "$2" ]]; then
      tried+=("$1: sha256 ${got}, pinned ${2}")
      return 1
    fi
  fi
  tar -xzf "$1" -C "${TMP}" || { tried+=("$1: not a readable .tar.gz"); return 1; }
  # A tarball with one top-level folder holds the tree inside it.
  local entries=("${TMP}"/*)
  if [[ ${#entries[@]} -eq 1 && -d "${entries[0]}" && ! -f "${TMP}/go.mod" ]]; then
    mv "${entries[0]}" "${TMP}.inner" && rm -rf "${TMP}" && mv "${TMP}.inner" "${TMP}"
  fi
}

from_env() {
  [[ -n "${GARDENER_SRC:-}" ]] || { tried+=("GARDENER_SRC: not set"); return 1; }
  if [[ -f "${GARDENER_SRC}" ]]; then
    untar_checked "${GARDENER_SRC}" ""
  elif [[ -d "${GARDENER_SRC}" ]]; then
    if git -C "${GARDENER_SRC}" rev-parse HEAD >/dev/null 2>&1; then
      local head
      head="$(git -C "${GARDENER_SRC}" rev-parse HEAD)"
      if [[ "${head}" != "${GARDENER_COMMIT}" ]]; then
        tried+=("GARDENER_SRC=${GARDENER_SRC}: HEAD is ${head}, pinned ${GARDENER_COMMIT}")
        return 1
      fi
    fi
    cp -a "${GARDENER_SRC}/." "${TMP}/" && rm -rf "${TMP}/.git"
  else
    tried+=("GARDENER_SRC=${GARDENER_SRC}: no such file or folder")
    return 1
  fi
}

from_offline() {
  [[ -f "${OFFLINE}" ]] || { tried+=("${OFFLINE}: not there"); return 1; }
  untar_checked "${OFFLINE}" "${GARDENER_TARBALL_SHA256}"
}

from_git() {
  command -v git >/dev/null || { tried+=("git: not installed"); return 1; }
  if ! { git -C "${TMP}" init -q &&
    timeout 300 git -C "${TMP}" fetch -q --depth 1 "${UPSTREAM}" "${GARDENER_COMMIT}" &&
    git -C "${TMP}" checkout -q FETCH_HEAD; } 2>"${CACHE}/git.err"; then
    tried+=("git fetch ${UPSTREAM} ${GARDENER_COMMIT}: $(tail -1 "${CACHE}/git.err")")
    return 1
  fi
  rm -rf "${TMP}/.git"
}

for source in from_env from_offline from_git; do
  if "${source}"; then
    if [[ ! -f "${TMP}/go.mod" ]] || ! head -1 "${TMP}/go.mod" | grep -q 'module github.com/gardener/gardener$'; then
      tried+=("${source#from_}: the tree has no go.mod of github.com/gardener/gardener")
    else
      rm -rf "${DEST}"
      mv "${TMP}" "${DEST}"
      echo "${GARDENER_COMMIT}" >"${STAMP}"
      log "Gardener ${GARDENER_COMMIT:0:10} from ${source#from_} in ${DEST}"
      echo "${DEST}"
      exit 0
    fi
  fi
  rm -rf "${TMP}"
  mkdir -p "${TMP}"
done

rm -rf "${TMP}"
log "no source of Gardener ${GARDENER_COMMIT} worked:"
for t in "${tried[@]}"; do log "  - ${t}"; done
log "set GARDENER_SRC to a checkout or tarball of that commit"
exit 1
