#!/usr/bin/env bash
# Runs the e2e suites for `make e2e`: every target's runs (one per placement
# mode) and the install package. Each target's runs form a lane and the
# install package is a lane of its own; the lanes run at the same time
# (E2E_LANES=sequential runs them one after another). Most of an e2e run is
# waiting (leases, retry intervals, the 5 minutes TestPrometheus waits for
# an alert's `for`), not CPU, so on 2 cores three lanes take about as long
# as the longest one (docs/testing.md has the measurement).
#
# Each lane writes its own log, printed whole (in lane order) once the lane
# ended, so the output of concurrent runs never interleaves; a line on
# stdout marks each lane's start and end, so a long run is never silent.
#
# Environment (the Makefile sets it): GO, E2E_TARGETS, E2E_PLACEMENT_MODES,
# E2E_GARDENER_PATCH_RUN, E2E_LANES (parallel | sequential).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

GO=${GO:-go}
E2E_LANES=${E2E_LANES:-parallel}
case "$E2E_LANES" in
parallel | sequential) ;;
*)
	echo "E2E_LANES: unsupported value \"$E2E_LANES\" (want parallel or sequential)" >&2
	exit 2
	;;
esac

# The programs every lane needs are built (or found in .cache) before any
# lane starts, so a build failure stops everything at once and concurrent
# lanes never build the same program twice.
assets=$(bash hack/e2e-tools.sh) || exit 1
assets=$(printf '%s\n' "$assets" | tail -1)
echo "KUBEBUILDER_ASSETS=$assets"
gardener_bins=
for target in $E2E_TARGETS; do
	if [ "$target" = gardener ]; then
		gardener_bins=$(bash hack/gardener-bins.sh) || exit 1
		gardener_bins=$(printf '%s\n' "$gardener_bins" | tail -1)
	fi
done
cm=$(bash hack/cert-manager-bins.sh) && crds=$(bash hack/cert-manager-bins.sh --crds) || exit 1
cm=$(printf '%s\n' "$cm" | tail -1)
crds=$(printf '%s\n' "$crds" | tail -1)

logs=$(mktemp -d "${TMPDIR:-/tmp}/seedwarden-e2e-lanes-XXXXXX") || exit 1
trap 'rm -rf "$logs"' EXIT

# lane_target runs one target's suite once per placement mode; a failed run
# is appended to the lane's .failed file. A subshell, so the gardener
# target's variables stay in its lane.
lane_target() (
	local target=$1 mode run
	if [ "$target" = gardener ]; then
		export SEEDWARDEN_E2E_GARDEN_BIN="$gardener_bins/garden" SEEDWARDEN_E2E_GARDENER_SCHEDULER_BIN="$gardener_bins/gardener-scheduler"
	fi
	for mode in $E2E_PLACEMENT_MODES; do
		if [ "$target" = gardener ] && [ "$mode" = patch ]; then run=$E2E_GARDENER_PATCH_RUN; else run=.; fi
		echo "== e2e suite, target $target, placement mode $mode (-run '$run'), started $(date -u +%T)"
		KUBEBUILDER_ASSETS="$assets" SEEDWARDEN_E2E=1 SEEDWARDEN_E2E_GARDEN=$target SEEDWARDEN_E2E_PLACEMENT=$mode \
			"$GO" test -count=1 -v -timeout 20m -run "$run" ./e2e/ || echo "$target/$mode" >>"$logs/$target.failed"
	done
)

lane_install() {
	echo "== e2e install package (cert-manager's controller and cainjector, once), started $(date -u +%T)"
	KUBEBUILDER_ASSETS="$assets" SEEDWARDEN_E2E=1 SEEDWARDEN_E2E_CERT_MANAGER_BIN="$cm" SEEDWARDEN_E2E_CERT_MANAGER_CRDS="$crds" \
		"$GO" test -count=1 -v -timeout 20m ./e2e/install/ || echo install >>"$logs/install.failed"
}

lanes=()
for target in $E2E_TARGETS; do lanes+=("$target"); done
lanes+=(install)

start_lane() {
	local lane=$1
	echo "== lane $lane started $(date -u +%T)"
	if [ "$lane" = install ]; then lane_install; else lane_target "$lane"; fi >"$logs/$lane.log" 2>&1
	echo "== lane $lane ended $(date -u +%T)" | tee -a "$logs/$lane.log"
}

pids=()
for lane in "${lanes[@]}"; do
	if [ "$E2E_LANES" = parallel ]; then
		start_lane "$lane" &
		pids+=($!)
	else
		start_lane "$lane"
		cat "$logs/$lane.log"
	fi
done
if [ "$E2E_LANES" = parallel ]; then
	for i in "${!lanes[@]}"; do
		wait "${pids[$i]}"
		cat "$logs/${lanes[$i]}.log"
	done
fi

failed=$(cat "$logs"/*.failed 2>/dev/null | tr '\n' ' ')
if [ -n "$failed" ]; then
	echo "e2e failed in (target/placement mode, or install): $failed"
	exit 1
fi
