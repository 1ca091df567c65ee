#!/usr/bin/env bash
# Sums the side-by-side bench's CPU profiles (make bench-e2e
# BENCH_E2E_PROFILES=DIR) of two binders' phases and prints, per component
# and per placed Shoot, the CPU of the request paths that differ between
# gardener-scheduler and seedwarden (BENCHMARKS.md §34), as a markdown table.
#
# Usage: bash hack/apiserver-profile.sh DIR SHOOTS "G-PHASES" "S-PHASES"
#   DIR       the profiles (phase-<n>-<binder>-<component>.pprof)
#   SHOOTS    Shoots per phase (200 at 20/s for 10 s)
#   G-PHASES  gardener-scheduler's phase numbers, e.g. "1 4"
#   S-PHASES  seedwarden's, e.g. "2 3"
set -euo pipefail

[[ $# -eq 4 ]] || { sed -n '2,12p' "$0" >&2; exit 2; }
dir=$1 shoots=$2 gphases=$3 sphases=$4

# merged COMPONENT PHASES: the phases' profiles of COMPONENT merged into one.
merged() {
  local component=$1 out files=() n
  out=$(mktemp --suffix=.pb.gz)
  for n in $2; do
    files+=("$(ls "${dir}"/phase-"${n}"-*-"${component}".pprof)")
  done
  go tool pprof -proto "${files[@]}" > "${out}" 2>/dev/null
  echo "${out}"
}

# cum PROFILE REGEX: the cumulative seconds of the first function matching.
cum() {
  go tool pprof -top -cum -nodecount=100000 "$1" 2>/dev/null |
    awk -v pat="$2" '$6 ~ pat { v = $4; sub(/s$/, "", v); if (v ~ /m$/) { sub(/m$/, "", v); v /= 1000 } print v; found = 1; exit }
      END { if (!found) print 0 }'
}

total() {
  go tool pprof -top -nodecount=1 "$1" 2>/dev/null |
    sed -n 's/.*Total samples = \([0-9.]*\)\(m\?s\).*/\1 \2/p' | awk '{ print ($2 == "ms") ? $1 / 1000 : $1 }'
}

per_shoot() { awk -v s="$1" -v n="$2" 'BEGIN { printf "%.2f", s * 1000 / n }'; }

# row NAME REGEX: the cumulative CPU per Shoot of the function REGEX matches.
row() {
  local name=$1 regex=$2 g s
  g=$(cum "${gprof}" "${regex}") s=$(cum "${sprof}" "${regex}")
  echo "| ${component} | ${name} | $(per_shoot "${g}" "${count_g}") | $(per_shoot "${s}" "${count_s}") |"
}

count_g=$(( shoots * $(wc -w <<< "${gphases}") ))
count_s=$(( shoots * $(wc -w <<< "${sphases}") ))
echo "| component | path | gardener-scheduler, ms per Shoot | seedwarden, ms per Shoot |"
echo "|---|---|---:|---:|"
for component in gardener-apiserver kube-apiserver; do
  gprof=$(merged "${component}" "${gphases}") sprof=$(merged "${component}" "${sphases}")
  echo "| ${component} | all | $(per_shoot "$(total "${gprof}")" "${count_g}") | $(per_shoot "$(total "${sprof}")" "${count_s}") |"
  row "CREATE (handler)" 'CreateResource\.createHandler\.func1\.2$'
  row "UPDATE (handler)" 'UpdateResource\.func1\.4$'
  row "PATCH (handler)" 'patcher\)\.patchResource\.func2$'
  row "webhook matchConditions (CEL)" 'matchconditions\.\(\*matcher\)\.Match$'
  row "mutating webhook calls" 'callAttrMutatingHook$'
  row "managedFields" 'FieldManager\)\.UpdateNoErrors$'
  row "delegated authorization (SubjectAccessReview)" 'WebhookAuthorizer\)\.Authorize$'
  row "client certificate checks" 'x509\.\(\*Certificate\)\.Verify$'
  row "proxied to gardener-apiserver" 'UpgradeAwareHandler\)\.ServeHTTP$'
  row "garbage collection" 'runtime\.gcBgMarkWorker$'
  rm -f "${gprof}" "${sprof}"
done
