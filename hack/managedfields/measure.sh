#!/usr/bin/env bash
# Measures metadata.managedFields of Shoots written the way a landscape writes
# them, on a real gardener-apiserver (the e2e suite's garden): created by the
# dashboard, status by gardenlet, metadata by gardenlet and
# gardener-controller-manager, edits by kubectl, terraform and an extension,
# then a server-side apply of the whole spec. Prints, after each step, the
# size of the Shoot without status and managedFields, and of managedFields.
# The default of resourceSize.limits[].managedFieldsSize rests on these
# numbers (docs/webhooks.md#managedfields).
#
#   bash hack/managedfields/measure.sh          # shoot.yaml (3 worker pools)
#   POOLS=22 bash hack/managedfields/measure.sh # 19 more worker pools
#
# Needs kubectl, python3, KUBEBUILDER_ASSETS (bash hack/e2e-tools.sh) and the
# garden binary (bash hack/gardener-bins.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
: "${KUBEBUILDER_ASSETS:=$root/.cache/e2e-tools/bin}"
: "${GARDEN_BIN:=$root/.cache/gardener/bin/garden}"
export KUBEBUILDER_ASSETS
work=$(mktemp -d)
export KUBECONFIG=$work/kubeconfig

"$GARDEN_BIN" -kubeconfig "$KUBECONFIG" >"$work/garden.out" 2>"$work/garden.err" &
garden=$!
trap 'kill -TERM $garden 2>/dev/null; wait $garden 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 120); do grep -q '^ready' "$work/garden.out" 2>/dev/null && break; sleep 1; done
grep -q '^ready' "$work/garden.out" || { cat "$work/garden.err" >&2; exit 1; }

kubectl create namespace garden >/dev/null
kubectl create namespace garden-dev >/dev/null
kubectl apply -f "$root/e2e/testdata/gardener/prerequisites.yaml" >/dev/null
python3 - "$root/examples/landscape.yaml" >"$work/landscape.yaml" <<'PY'
import sys
docs = open(sys.argv[1]).read().split('\n---\n')
print('\n---\n'.join(d for d in docs if 'kind: Shoot' not in d))
PY
kubectl apply -f "$work/landscape.yaml" >/dev/null

python3 - "$here/shoot.yaml" "${POOLS:-3}" >"$work/shoot.yaml" <<'PY'
import sys
s, pools = open(sys.argv[1]).read(), int(sys.argv[2])
pool = '''    - name: pool%02d
      machine: {type: m5.large, image: {name: gardenlinux, version: 1877.4.0}, architecture: amd64}
      minimum: 1
      maximum: 10
      maxSurge: 1
      maxUnavailable: 0
      volume: {size: 100Gi}
      zones: [eu-central-1a, eu-central-1b, eu-central-1c]
      labels: {pool: pool%02d, team: team%02d, tier: backend}
      annotations: {cluster-autoscaler.kubernetes.io/scale-down-utilization-threshold: "0.5"}
      taints:
      - {key: dedicated, value: team%02d, effect: NoSchedule}
'''
extra = ''.join(pool % (i, i, i, i) for i in range(3, pools))
print(s.replace('  maintenance:\n', extra + '  maintenance:\n', 1), end='')
PY

S="shoot realistic -n garden-dev"
measure() {
	kubectl get $S -o json --show-managed-fields | python3 -c '
import json, sys
d = json.load(sys.stdin)
mf = d["metadata"].get("managedFields", [])
o = dict(d, metadata={k: v for k, v in d["metadata"].items() if k != "managedFields"})
o.pop("status", None)
c = lambda v: len(json.dumps(v, separators=(",", ":")))
print("%-44s object %6d  managedFields %6d  entries %2d" % (sys.argv[1], c(o), c(mf), len(mf)))' "$1"
}
q() { "$@" >/dev/null 2>&1 || { "$@"; exit 1; }; }

q kubectl create -f "$work/shoot.yaml" --field-manager=dashboard; measure "created (dashboard)"
q kubectl patch $S --subresource=status --type=merge --field-manager=gardenlet -p "$(cat "$here/status.json")"; measure "status (gardenlet)"
q kubectl patch $S --type=merge --field-manager=gardenlet -p '{"metadata":{"finalizers":["gardener"],"labels":{"shoot.gardener.cloud/status":"healthy"},"annotations":{"shoot.gardener.cloud/tasks":"deployInfrastructure,deployDNSRecordInternal"}}}'; measure "metadata (gardenlet)"
q kubectl patch $S --type=merge --field-manager=gardener-controller-manager -p '{"metadata":{"labels":{"reference.gardener.cloud/credentialsbinding":"aws","gardener.cloud/role":"shoot"},"annotations":{"gardener.cloud/last-reconciliation":"2026-11-27T08:00:00Z"}}}'; measure "metadata (gardener-controller-manager)"
q kubectl patch $S --type=merge --field-manager=gardener-controller-manager -p '{"spec":{"kubernetes":{"version":"1.33.4"}},"metadata":{"annotations":{"shoot.gardener.cloud/maintenance-status":"done"}}}'; measure "maintenance (gardener-controller-manager)"
q kubectl patch $S --type=merge --field-manager=kubectl-edit -p '{"spec":{"maintenance":{"timeWindow":{"begin":"010000+0100","end":"020000+0100"}}}}'; measure "edit (kubectl-edit)"
q kubectl patch $S --type=json --field-manager=dashboard -p '[{"op":"replace","path":"/spec/provider/workers/1/maximum","value":30},{"op":"add","path":"/spec/provider/workers/-","value":{"name":"gpu","machine":{"type":"m5.large","image":{"name":"gardenlinux","version":"1877.4.0"}},"minimum":0,"maximum":4,"zones":["eu-central-1b"],"labels":{"pool":"gpu","nvidia.com/gpu":"true"}}}]'; measure "worker pools (dashboard)"
q kubectl annotate $S --field-manager=kubectl-annotate gardener.cloud/operation=reconcile; measure "annotate (kubectl)"
q kubectl label $S --field-manager=terraform cost-center=4711 env=prod; measure "labels (terraform)"
q kubectl patch $S --type=merge --field-manager=gardener-apiserver -p '{"spec":{"hibernation":{"enabled":false}}}'; measure "hibernation"
q kubectl patch $S --type=merge --field-manager=extension-shoot-dns-service -p '{"metadata":{"annotations":{"dns.gardener.cloud/x":"y"}}}'; measure "annotation (extension)"
for i in 1 2 3; do
	q kubectl patch $S --subresource=status --type=merge --field-manager=gardenlet -p '{"status":{"lastOperation":{"progress":'$((i * 30))',"state":"Processing","type":"Reconcile","description":"step '$i'","lastUpdateTime":"2026-11-27T08:1'$i':00Z"},"lastErrors":[{"description":"task failed: quota exceeded in region eu-central-1","taskID":"deployInfrastructure","codes":["ERR_INFRA_QUOTA_EXCEEDED"],"lastUpdateTime":"2026-11-27T08:10:00Z"}]}}'
done
measure "status x3 with lastErrors (gardenlet)"
q kubectl apply --server-side --force-conflicts --field-manager=platform-gitops -f "$work/shoot.yaml"; measure "server-side apply of the spec (gitops)"
