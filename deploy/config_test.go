package manifests_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/seedwarden/seedwarden/internal/config"
)

func TestShippedConfig(t *testing.T) {
	cfg := shippedConfig(t)
	if cfg.Server.Port != 9443 || cfg.Server.CertDir != "/etc/seedwarden/certs" {
		t.Errorf("server = %+v", cfg.Server)
	}
	if cfg.Health.BindAddress != ":8081" {
		t.Errorf("health.bindAddress = %q", cfg.Health.BindAddress)
	}
	if portOf(t, cfg.Metrics.BindAddress) != 8443 {
		t.Errorf("metrics.bindAddress = %q", cfg.Metrics.BindAddress)
	}
	// Prometheus scrapes from another pod: HTTPS with authentication and
	// authorization (servicemonitor.yaml, the metrics-reader ClusterRole).
	if !cfg.MetricsSecure() {
		t.Error("metrics.secure is false: the ServiceMonitor could not scrape a loopback address")
	}
	// Two replicas: capacity is reserved through the API server.
	if !cfg.CapacityEnabled() || !cfg.Capacity.APIServer() {
		t.Errorf("capacity = %+v: two replicas need coordination apiserver, or together they can overfill a seed", cfg.Capacity)
	}
	// The Certificate watched is the one whose Secret is mounted at certDir
	// (TestDeployment checks the mount).
	if cfg.Certificate.Namespace != namespace || cfg.Certificate.Name != certificate {
		t.Errorf("certificate = %s/%s, want %s/%s", cfg.Certificate.Namespace, cfg.Certificate.Name, namespace, certificate)
	}
	if cfg.GardenNamespace != gardenNS {
		t.Errorf("gardenNamespace %q: rbac-garden.yaml grants %s", cfg.GardenNamespace, gardenNS)
	}
	// Against a cluster the server refuses to start without the key; it is
	// the Secret the Deployment mounts.
	if cfg.Placement.KeyFile != "/etc/seedwarden/placement-key/key" {
		t.Errorf("placement.keyFile = %q, want the mounted Secret %s (key \"key\")", cfg.Placement.KeyFile, placementKey)
	}
	// Real Gardener serves shoots/binding; update is for CRD test clusters.
	if !cfg.PendingShootsEnabled() || cfg.PendingShoots.BindMode != "binding" {
		t.Errorf("pendingShoots = %+v, want enabled with bindMode binding", cfg.PendingShoots)
	}
	// The Lease goes to the pod's namespace, which the Deployment passes in.
	dep := find[*appsv1.Deployment](t, manifests(t), "Deployment", namespace, "seedwarden")
	podNS := false
	for _, e := range dep.Spec.Template.Spec.Containers[0].Env {
		if e.Name == config.PodNamespaceEnv && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace" {
			podNS = true
		}
	}
	if cfg.LeaderElection.Namespace == "" && !podNS {
		t.Errorf("leaderElection.namespace is empty but the Deployment does not set %s from metadata.namespace", config.PodNamespaceEnv)
	}
	data, err := os.ReadFile(filepath.Join(manifestsDir, configFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte("apiVersion: "+config.APIVersion)) || !bytes.Contains(data, []byte("kind: "+config.Kind)) {
		t.Errorf("%s does not name apiVersion %s, kind %s", configFile, config.APIVersion, config.Kind)
	}
}
