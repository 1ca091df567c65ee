package seedreserve

import (
	"fmt"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Coordination says how replicas share seed capacity (capacity.coordination).
type Coordination string

const (
	// CoordinationLocal keeps reservations in each replica's memory only:
	// right for one replica and for --landscape (no API server).
	CoordinationLocal Coordination = "local"
	// CoordinationAPIServer reserves through the API server, so any number
	// of replicas never overfill a seed.
	CoordinationAPIServer Coordination = "apiserver"
)

// DefaultCoordination is local: a single replica (and --landscape) needs no
// API round trips. deploy/manifests sets apiserver.
const DefaultCoordination = CoordinationLocal

// PodNamespaceEnv is the environment variable the Deployment sets from the
// downward API (metadata.namespace).
const PodNamespaceEnv = "POD_NAMESPACE"

// serviceAccountNamespaceFile is the pod's namespace as Kubernetes mounts it.
const serviceAccountNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// Config is the part of the capacity section of the configuration file this
// package reads. The configuration package embeds it in its Capacity type:
//
//	capacity:
//	  coordination: apiserver        # or local (default)
//	  reservationNamespace: seedwarden  # default: the pod's namespace
//
// The reservation TTL is the top-level reservationTTL.
type Config struct {
	// Coordination is local or apiserver. Default: local.
	Coordination Coordination `json:"coordination,omitempty"`
	// ReservationNamespace holds the seedwarden-capacity-<seed> ConfigMaps
	// (apiserver only). Default: the pod's namespace ($POD_NAMESPACE, else
	// the service account's namespace file).
	ReservationNamespace string `json:"reservationNamespace,omitempty"`
}

// ApplyDefaults sets Coordination to local when it is empty. The namespace
// is resolved when serving (Namespace), so that parsing a file does not
// depend on the environment.
func (c *Config) ApplyDefaults() {
	if c.Coordination == "" {
		c.Coordination = DefaultCoordination
	}
}

// APIServer reports whether reservations go through the API server.
func (c Config) APIServer() bool { return c.Coordination == CoordinationAPIServer }

// Validate returns one "path: problem" line for each invalid field; path is
// the section's path in the file ("capacity"). It expects defaults applied.
func (c Config) Validate(path string) []string {
	var out []string
	switch c.Coordination {
	case CoordinationLocal, CoordinationAPIServer:
	default:
		out = append(out, fmt.Sprintf("%s.coordination: unsupported value %q (want %s or %s)",
			path, c.Coordination, CoordinationLocal, CoordinationAPIServer))
	}
	if c.ReservationNamespace != "" {
		if errs := validation.IsDNS1123Label(c.ReservationNamespace); len(errs) > 0 {
			out = append(out, fmt.Sprintf("%s.reservationNamespace: invalid value %q: %s",
				path, c.ReservationNamespace, strings.Join(errs, "; ")))
		}
	}
	return out
}

// Namespace returns the namespace of the reservation ConfigMaps:
// ReservationNamespace, else podNamespace() (use PodNamespace). An error
// names the field to set.
func (c Config) Namespace(podNamespace func() string) (string, error) {
	if c.ReservationNamespace != "" {
		return c.ReservationNamespace, nil
	}
	ns := ""
	if podNamespace != nil {
		ns = strings.TrimSpace(podNamespace())
	}
	if ns == "" {
		return "", fmt.Errorf("capacity.reservationNamespace: required with coordination %s when $%s is not set and the pod's namespace is unknown",
			CoordinationAPIServer, PodNamespaceEnv)
	}
	if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
		return "", fmt.Errorf("capacity.reservationNamespace: the pod's namespace %q is not valid: %s", ns, strings.Join(errs, "; "))
	}
	return ns, nil
}

// PodNamespace is $POD_NAMESPACE, else the namespace of the pod's service
// account, else "".
func PodNamespace() string {
	if ns := strings.TrimSpace(os.Getenv(PodNamespaceEnv)); ns != "" {
		return ns
	}
	if b, err := os.ReadFile(serviceAccountNamespaceFile); err == nil {
		return strings.TrimSpace(string(b))
	}
	return ""
}
