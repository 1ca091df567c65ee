// Package install installs seedwarden as docs/install.md says, with the real
// cert-manager (its controller and cainjector, hack/cert-manager-bins.sh),
// and checks what an operator relies on: the Certificates Ready, the serving
// certificate's names, the CA in every webhook configuration, renewals.
//
// It runs only with SEEDWARDEN_E2E=1 (`make e2e` runs it once). The setup
// the tests share, each test with a garden of its own (newEnv):
//
//   - TestMain (main_test.go) finds kube-apiserver and etcd
//     (KUBEBUILDER_ASSETS or hack/e2e-tools.sh), cert-manager's programs and
//     CRDs (SEEDWARDEN_E2E_CERT_MANAGER_BIN and _CRDS, or
//     hack/cert-manager-bins.sh), builds seedwarden and renders the base and
//     the chart (hack/chartcheck's cmd/render) into the tools variables.
//   - newEnv (env_test.go) starts etcd and kube-apiserver as processes
//     (controlplane_test.go: an admin token, RBAC, service-account tokens;
//     restartAPIServer restarts it with other flags on the same data),
//     loads Gardener's CRDs (e2e/crds) and examples/landscape.yaml, the
//     Prometheus Operator's kinds as CRDs that take any spec, and starts
//     cert-manager (certmanager_test.go).
//   - kube-apiserver's cluster egress (webhook calls to Services) and
//     control-plane egress (webhook calls by URL) go through an HTTP CONNECT
//     proxy on a unix socket (egress_test.go) that maps
//     <service>.<namespace>.svc:<port>, the Service's cluster IP and a URL's
//     host to the local port of the process that plays the pod: the API
//     server verifies the serving certificate for that name, as in a cluster.
//   - env.install (steps_test.go) follows docs/install.md: namespace and
//     placement key, all but the webhook configurations, every Certificate
//     Ready, the replica (startPod, pod_test.go: seedwarden as a process with
//     the Deployment's args, the ConfigMap's configuration on local ports,
//     a token of its ServiceAccount, its Secret volumes kept up to date as
//     the kubelet does, volume_test.go), kube-apiserver's webhook client
//     certificate (a restart), the webhook configurations, the CA injected.
//   - checks_test.go reads what the API server holds and what the webhook
//     serves (servedCertificate dials the Service's name through the proxy).
//
// A test of its own starts with need(t), then e := newEnv(t) and
// in := e.install(t, rendering, readRendering(t, rendering)); it has e.c
// and e.cs (the admin's clients), e.cp (restartAPIServer), e.cm (the
// metrics URLs of cert-manager's controller and cainjector), e.proxy, and
// in.pod (the seedwarden process, its local ports by container port name:
// webhook, metrics, health; its serving Secret). Every process (e2e/proc)
// logs into the env's folder, kept and named in the test's log when it fails.
//
// The tests: install_test.go (TestInstall: the base and both chart value
// sets), broken_test.go (a wrong SAN, a missing inject-ca-from),
// renewal_test.go (the serving certificate renewed under load),
// carenewal_test.go (the CA renewed, and the old CA dropped as
// docs/troubleshooting.md says). Prometheus' tests live in
// prometheus_*_test.go.
package install
