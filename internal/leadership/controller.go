package leadership

import (
	"time"

	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// NewTermController builds an unmanaged controller for one term, with the
// manager's logger and controller defaults. Every term builds its
// controller anew under the same name, so name validation (which refuses a
// second controller of a name in one process) is skipped.
func NewTermController(mgr ctrl.Manager, name string, opts controller.Options) (controller.Controller, error) {
	opts.SkipNameValidation = ptr.To(true)
	opts.Logger = mgr.GetLogger()
	opts.DefaultFromConfig(mgr.GetControllerOptions())
	return controller.NewUnmanaged(name, opts)
}

// NewSpecController is a term's controller of one kind that syncs
// periodically on its own: a spec change or a deletion of an object of
// the kind starts a sync at once, the controller's own status writes do
// not (the next period brings it).
func NewSpecController[T client.Object](mgr ctrl.Manager, c crcache.Cache, name string, obj T, r reconcile.Reconciler, timeout time.Duration) (controller.Controller, error) {
	ctl, err := NewTermController(mgr, name, controller.Options{ReconciliationTimeout: timeout, Reconciler: r})
	if err != nil {
		return nil, err
	}
	src := source.Kind(c, obj, &handler.TypedEnqueueRequestForObject[T]{}, predicate.TypedGenerationChangedPredicate[T]{})
	if err := ctl.Watch(src); err != nil {
		return nil, err
	}
	return ctl, nil
}
