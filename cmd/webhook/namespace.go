package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/seedwarden/seedwarden/internal/config"
)

// reservationNamespace is the namespace of the cluster-wide capacity
// reservations with capacity.coordination apiserver, or "" when each replica
// reserves in its own memory (local, or no capacity webhook).
func reservationNamespace(cfg *config.Config, podNamespace func() string, log logr.Logger) (string, error) {
	if !cfg.Capacity.APIServer() {
		return "", nil
	}
	if !cfg.CapacityEnabled() {
		log.Info("capacity.coordination is apiserver but the capacity webhook is disabled (capacity.enabled: false): nothing is reserved")
		return "", nil
	}
	if ns := cfg.Capacity.ReservationNamespace; ns != "" {
		return ns, nil
	}
	ns := ""
	if podNamespace != nil {
		ns = strings.TrimSpace(podNamespace())
	}
	if ns == "" {
		return "", fmt.Errorf("capacity.reservationNamespace: required with coordination %s when $%s is not set and the pod's namespace is unknown",
			config.CoordinationAPIServer, config.PodNamespaceEnv)
	}
	if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
		return "", fmt.Errorf("capacity.reservationNamespace: the pod's namespace %q is not valid: %s", ns, strings.Join(errs, "; "))
	}
	return ns, nil
}

// serviceAccountNamespaceFile is the pod's namespace as Kubernetes mounts it.
const serviceAccountNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// podNamespace is $POD_NAMESPACE, else the namespace of the pod's service
// account, else "".
func podNamespace() string {
	if ns := strings.TrimSpace(os.Getenv(config.PodNamespaceEnv)); ns != "" {
		return ns
	}
	if b, err := os.ReadFile(serviceAccountNamespaceFile); err == nil {
		return strings.TrimSpace(string(b))
	}
	return ""
}
