package certwatch

import (
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Recorder is what the Watcher records; *metrics.Recorder implements it
// (registered with metrics.GroupCertificates).
type Recorder interface {
	SetCertificateReady(namespace, name string, ready bool)
	SetCertificateExpiry(namespace, name string, notAfter *time.Time)
}

// recorder records through m, if any.
type recorder struct{ m Recorder }

func (r recorder) setReady(key types.NamespacedName, ready bool) {
	if r.m != nil {
		r.m.SetCertificateReady(key.Namespace, key.Name, ready)
	}
}

// setExpiry records notAfter; nil: the Certificate has none.
func (r recorder) setExpiry(key types.NamespacedName, notAfter *time.Time) {
	if r.m != nil {
		r.m.SetCertificateExpiry(key.Namespace, key.Name, notAfter)
	}
}
