package seedreserve

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seedwarden/seedwarden/internal/api"
)

// Reading and writing a seed's reservation ConfigMap: one GET, then an
// update under the resourceVersion read (or a create), so etcd orders the
// replicas.

func (r *Reserver) get(ctx context.Context, seed string) (cm *corev1.ConfigMap, exists bool, err error) {
	cm = &corev1.ConfigMap{}
	key := client.ObjectKey{Namespace: r.namespace, Name: ConfigMapName(seed)}
	switch err := r.client.Get(ctx, key, cm); {
	case err == nil:
		return cm, true, nil
	case apierrors.IsNotFound(err):
		return &corev1.ConfigMap{}, false, nil
	default:
		return nil, false, fmt.Errorf("reading reservations of seed %q (ConfigMap %s/%s): %w", seed, key.Namespace, key.Name, err)
	}
}

// write creates the ConfigMap on first use, else updates it under the
// resourceVersion it was read with. Either way the ConfigMap is owned by the
// Seed (see ownedBySeed).
func (r *Reserver) write(ctx context.Context, seed string, cm *corev1.ConfigMap, exists bool) error {
	if exists {
		cm.OwnerReferences = ownedBySeed(cm.OwnerReferences, r.seedOwner(seed))
		cm.ManagedFields = resetManagedFields()
		if err := r.client.Update(ctx, cm); err != nil {
			return wrapAPIError(err, "updating", r.namespace, seed)
		}
		return nil
	}
	cm.ObjectMeta = metav1.ObjectMeta{
		Namespace:       r.namespace,
		Name:            ConfigMapName(seed),
		Labels:          map[string]string{LabelManagedBy: ManagedBy, LabelComponent: Component},
		Annotations:     map[string]string{AnnotationSeedName: seed},
		OwnerReferences: ownedBySeed(nil, r.seedOwner(seed)),
	}
	if err := r.client.Create(ctx, cm); err != nil {
		return wrapAPIError(err, "creating", r.namespace, seed)
	}
	return nil
}

// resetManagedFields asks kube-apiserver to drop an object's managedFields.
// With one data key per entry they grow with the ledger, and merging and
// storing them at every write costs it more than the rest of an UPDATE at a
// full seed's entries (BENCHMARKS.md §38). Once dropped, later updates skip
// field tracking altogether (it starts again only at a create or a
// server-side apply), an earlier version's too. Nothing applies a ledger, so
// who owns which of its fields is worth nothing. A fresh slice each time: the
// response is decoded into the same object.
func resetManagedFields() []metav1.ManagedFieldsEntry {
	return []metav1.ManagedFieldsEntry{{}}
}

// seedOwner is the ownerReference to seed's Seed as this replica's cache
// knows it, or nil when the cache holds no UID for it. The garbage collector
// deletes the ConfigMap once that Seed is gone. BlockOwnerDeletion stays
// unset: setting it needs update on seeds/finalizers, and a reservation
// ConfigMap has no business delaying a Seed's deletion.
func (r *Reserver) seedOwner(seed string) *metav1.OwnerReference {
	sd, ok := r.local.Seed(seed)
	if !ok || sd.Object == nil || sd.Object.UID == "" {
		return nil
	}
	return &metav1.OwnerReference{
		APIVersion: api.SchemeGroupVersion.String(),
		Kind:       seedKind,
		Name:       seed,
		UID:        sd.Object.UID,
	}
}

const seedKind = "Seed"

// ownedBySeed returns refs with owner as the only Seed owner. A reference to
// an earlier Seed of the same name (deleted and created again) is replaced:
// the garbage collector would otherwise delete the ConfigMap with the new
// seed's reservations in it. A nil owner (the cache does not know the Seed)
// leaves refs as they are.
func ownedBySeed(refs []metav1.OwnerReference, owner *metav1.OwnerReference) []metav1.OwnerReference {
	if owner == nil {
		return refs
	}
	out := make([]metav1.OwnerReference, 0, len(refs)+1)
	for _, ref := range refs {
		if ref.Kind != seedKind || !strings.HasPrefix(ref.APIVersion, api.GroupName+"/") {
			out = append(out, ref)
		}
	}
	return append(out, *owner)
}

// wrapAPIError keeps the API status (apierrors.IsConflict and friends look
// through %w) and names the object.
func wrapAPIError(err error, verb, namespace, seed string) error {
	return fmt.Errorf("%s reservations of seed %q (ConfigMap %s/%s): %w", verb, seed, namespace, ConfigMapName(seed), err)
}
