#!/usr/bin/env bash
# Builds the control-plane binaries that controller-runtime's envtest needs
# (kube-apiserver and etcd) from source, using only the Go module proxy: no
# prebuilt binary is downloaded.
#
# Usage:
#   KUBEBUILDER_ASSETS=$(bash hack/e2e-tools.sh | tail -1)
#
# Output: ${SEEDWARDEN_TOOLS:-<repo>/.cache/e2e-tools}/bin/{kube-apiserver,etcd}.
# The last line on stdout is that bin dir; progress goes to stderr.
# A stamp file records the versions built; when it matches and both binaries
# exist the script returns at once without calling go.
#
# A cold build takes about 5 minutes on 2 idle cores (etcd ~40s, kube-apiserver
# ~4m) and up to 19 on busy ones, plus the module downloads into GOMODCACHE; binaries are ~25 MB (etcd)
# and ~100 MB (kube-apiserver), static (CGO_ENABLED=0) and stripped.
set -euo pipefail

KUBE_VERSION=1.36.3
ETCD_VERSION=3.6.8
# k8s.io/<staging> modules are published as v0.<minor>.<patch> of kubernetes.
KUBE_STAGING_VERSION="0.${KUBE_VERSION#*.}"
# Bump when the way the binaries are built changes, to force a rebuild.
RECIPE=1

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS_DIR="${SEEDWARDEN_TOOLS:-${REPO_ROOT}/.cache/e2e-tools}"
BIN_DIR="${TOOLS_DIR}/bin"
SRC_DIR="${TOOLS_DIR}/src"
STAMP="${BIN_DIR}/.versions"
WANT_STAMP="kube-apiserver=v${KUBE_VERSION} etcd=v${ETCD_VERSION} recipe=${RECIPE}"

log() { printf '[e2e-tools] %s\n' "$*" >&2; }

up_to_date() {
  [[ -x "${BIN_DIR}/kube-apiserver" && -x "${BIN_DIR}/etcd" && -f "${STAMP}" ]] &&
    [[ "$(cat "${STAMP}")" == "${WANT_STAMP}" ]]
}

if up_to_date; then
  echo "${BIN_DIR}"
  exit 0
fi

mkdir -p "${BIN_DIR}" "${SRC_DIR}"

# Serialize concurrent callers (e.g. several test packages at once).
if command -v flock >/dev/null 2>&1; then
  exec 9>"${TOOLS_DIR}/.lock"
  flock 9
  if up_to_date; then
    echo "${BIN_DIR}"
    exit 0
  fi
fi

command -v go >/dev/null 2>&1 || { log "go not found in PATH"; exit 1; }

# Isolate the throwaway builds from the caller's environment: no workspace,
# no -mod=vendor/readonly from GOFLAGS, no VCS stamping, static binaries.
export GOWORK=off
export GOFLAGS=-buildvcs=false
export CGO_ENABLED=0
unset GOOS GOARCH

rm -f "${STAMP}"

# ---------------------------------------------------------------- kube-apiserver
build_kube_apiserver() {
  local dir="${SRC_DIR}/kube-apiserver"
  local start=${SECONDS}
  rm -rf "${dir}"
  mkdir -p "${dir}"

  log "resolving k8s.io/kubernetes@v${KUBE_VERSION}"
  local gomod
  gomod="$(go mod download -json "k8s.io/kubernetes@v${KUBE_VERSION}" |
    sed -n 's/^[[:space:]]*"GoMod":[[:space:]]*"\(.*\)",\{0,1\}$/\1/p')"
  if [[ -z "${gomod}" || ! -f "${gomod}" ]]; then
    log "could not locate go.mod of k8s.io/kubernetes@v${KUBE_VERSION}"
    return 1
  fi

  # Every staging module kubernetes redirects to ./staging/src/k8s.io/X
  # (both "replace ( ... )" blocks and single-line "replace" directives).
  local staging
  staging="$(sed -n 's#^[[:space:]]*\(replace[[:space:]]\{1,\}\)\{0,1\}\(k8s\.io/[A-Za-z0-9._-]*\)[[:space:]]*=>[[:space:]]*\./staging/src/k8s\.io/.*#\2#p' "${gomod}" | sort -u)"
  if [[ -z "${staging}" ]]; then
    log "found no ./staging replace directives in ${gomod}"
    return 1
  fi
  log "replacing $(wc -l <<<"${staging}") staging modules with v${KUBE_STAGING_VERSION}"

  {
    echo "module seedwarden.local/e2e-tools/kube-apiserver"
    echo
    echo "go 1.26.0"
    echo
    echo "require k8s.io/kubernetes v${KUBE_VERSION}"
    echo
    echo "replace ("
    local m
    while read -r m; do
      echo "	${m} => ${m} v${KUBE_STAGING_VERSION}"
    done <<<"${staging}"
    echo ")"
  } >"${dir}/go.mod"

  cat >"${dir}/tools.go" <<'EOF'
//go:build tools

// Package tools pins the kube-apiserver command into this module's graph.
package tools

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
EOF

  log "go mod tidy (kube-apiserver module)"
  (cd "${dir}" && go mod tidy)

  # Same version stamping as kubernetes' hack/lib/version.sh, so that
  # --version and /version report the real release instead of v0.0.0-master.
  local minor="${KUBE_VERSION#*.}"
  minor="${minor%%.*}"
  local ldflags="-s -w"
  local pkg key val
  for pkg in k8s.io/client-go/pkg/version k8s.io/component-base/version; do
    for key in gitVersion=v${KUBE_VERSION} gitMajor=${KUBE_VERSION%%.*} gitMinor=${minor} \
      gitTreeState=clean buildDate=1970-01-01T00:00:00Z; do
      val="${key#*=}"
      ldflags+=" -X ${pkg}.${key%%=*}=${val}"
    done
  done

  log "go build kube-apiserver v${KUBE_VERSION}"
  (cd "${dir}" && go build -trimpath -ldflags="${ldflags}" \
    -o "${BIN_DIR}/kube-apiserver.tmp" k8s.io/kubernetes/cmd/kube-apiserver)
  mv -f "${BIN_DIR}/kube-apiserver.tmp" "${BIN_DIR}/kube-apiserver"
  log "kube-apiserver built in $((SECONDS - start))s"
}

# ------------------------------------------------------------------------- etcd
build_etcd() {
  local dir="${SRC_DIR}/etcd"
  local start=${SECONDS}
  rm -rf "${dir}"
  mkdir -p "${dir}"

  cat >"${dir}/go.mod" <<EOF
module seedwarden.local/e2e-tools/etcd

go 1.26.0

require go.etcd.io/etcd/server/v3 v${ETCD_VERSION}
EOF

  cat >"${dir}/main.go" <<'EOF'
// Command etcd is etcd's server main, built from the go.etcd.io/etcd/server/v3 module.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
EOF

  log "go mod tidy (etcd module)"
  (cd "${dir}" && go mod tidy)

  log "go build etcd v${ETCD_VERSION}"
  (cd "${dir}" && go build -trimpath -ldflags="-s -w" -o "${BIN_DIR}/etcd.tmp" .)
  mv -f "${BIN_DIR}/etcd.tmp" "${BIN_DIR}/etcd"
  log "etcd built in $((SECONDS - start))s"
}

build_etcd
build_kube_apiserver

"${BIN_DIR}/kube-apiserver" --version >&2
"${BIN_DIR}/etcd" --version >&2

echo "${WANT_STAMP}" >"${STAMP}"
log "done: ${BIN_DIR}"
echo "${BIN_DIR}"
