package leadership

import (
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller"
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
