// Package e2e holds seedwarden's end-to-end tests: a real kube-apiserver and
// etcd (built from the Go module proxy by hack/e2e-tools.sh and driven by
// controller-runtime's envtest) serve the Gardener CRDs in e2e/crds; the
// webhook runs as a separate `webhook serve` process, registered through the
// webhook configurations of deploy/manifests over TLS; the tests talk to the
// API server as kubectl would.
//
// The suite runs only with SEEDWARDEN_E2E=1 (`make e2e`), so `make test`
// stays fast. See README.md in this directory.
package e2e
