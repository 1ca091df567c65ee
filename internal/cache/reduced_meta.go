package cache

import (
	"encoding/hex"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// metav1.Object for ReducedShoot. Getters of fields it does not keep return
// zero values and their setters do nothing: nothing writes to a cached Shoot.

var _ client.Object = (*ReducedShoot)(nil)

func (r *ReducedShoot) GetNamespace() string { return str(r.namespace) }

func (r *ReducedShoot) SetNamespace(ns string) { r.namespace = intern(ns) }

func (r *ReducedShoot) GetName() string { return r.name }

func (r *ReducedShoot) SetName(name string) { r.name = name }

func (r *ReducedShoot) GetUID() types.UID {
	if r.uid == ([16]byte{}) {
		if r.extra != nil {
			return r.extra.uid
		}
		return ""
	}
	var b [36]byte
	hex.Encode(b[0:8], r.uid[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], r.uid[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], r.uid[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], r.uid[8:10])
	b[23] = '-'
	hex.Encode(b[24:36], r.uid[10:16])
	return types.UID(b[:])
}

func (r *ReducedShoot) SetUID(uid types.UID) { r.setUID(uid) }

func (r *ReducedShoot) GetResourceVersion() string {
	if r.rv != 0 {
		return strconv.FormatUint(r.rv, 10)
	}
	if r.extra != nil {
		return r.extra.rv
	}
	return ""
}

func (r *ReducedShoot) SetResourceVersion(rv string) { r.setResourceVersion(rv) }

func (r *ReducedShoot) GetGeneration() int64 {
	if r.flags&hasGeneration != 0 || r.extra == nil {
		return int64(r.generation)
	}
	return r.extra.generation
}

func (r *ReducedShoot) SetGeneration(g int64) { r.setGeneration(g) }

func (r *ReducedShoot) GetDeletionTimestamp() *metav1.Time {
	if r.extra == nil {
		return nil
	}
	return r.extra.deletion
}

func (r *ReducedShoot) SetDeletionTimestamp(t *metav1.Time) {
	if t != nil || r.extra != nil {
		r.extraFor().deletion = t
	}
}

// GetAnnotations returns the kept annotations (reservation, live token); a
// copy, so the cached object cannot be changed through it.
func (r *ReducedShoot) GetAnnotations() map[string]string {
	if r.extra == nil || r.extra.annotations == nil {
		return nil
	}
	out := make(map[string]string, len(r.extra.annotations))
	for k, v := range r.extra.annotations {
		out[k] = v
	}
	return out
}

func (r *ReducedShoot) SetAnnotations(a map[string]string) {
	if a != nil || r.extra != nil {
		r.extraFor().annotations = a
	}
}

func (r *ReducedShoot) GetGenerateName() string                       { return "" }
func (r *ReducedShoot) SetGenerateName(string)                        {}
func (r *ReducedShoot) GetSelfLink() string                           { return "" }
func (r *ReducedShoot) SetSelfLink(string)                            {}
func (r *ReducedShoot) GetCreationTimestamp() metav1.Time             { return metav1.Time{} }
func (r *ReducedShoot) SetCreationTimestamp(metav1.Time)              {}
func (r *ReducedShoot) GetDeletionGracePeriodSeconds() *int64         { return nil }
func (r *ReducedShoot) SetDeletionGracePeriodSeconds(*int64)          {}
func (r *ReducedShoot) GetLabels() map[string]string                  { return nil }
func (r *ReducedShoot) SetLabels(map[string]string)                   {}
func (r *ReducedShoot) GetFinalizers() []string                       { return nil }
func (r *ReducedShoot) SetFinalizers([]string)                        {}
func (r *ReducedShoot) GetOwnerReferences() []metav1.OwnerReference   { return nil }
func (r *ReducedShoot) SetOwnerReferences([]metav1.OwnerReference)    {}
func (r *ReducedShoot) GetManagedFields() []metav1.ManagedFieldsEntry { return nil }
func (r *ReducedShoot) SetManagedFields([]metav1.ManagedFieldsEntry)  {}
