package rollout

import (
	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// reconcileLogger gives each reconcile the logger the builder gives a
// controller For StatefulSets (controller, group, kind and the
// StatefulSet): the watches are raw sources, so that they can be of
// another cluster's cache, and the builder then names only the controller.
func reconcileLogger(base logr.Logger, name string) func(*reconcile.Request) logr.Logger {
	log := base.WithValues("controller", name, "controllerGroup", appsv1.GroupName, "controllerKind", "StatefulSet")
	return func(req *reconcile.Request) logr.Logger {
		if req == nil {
			return log
		}
		return log.WithValues("StatefulSet", klog.KRef(req.Namespace, req.Name), "namespace", req.Namespace, "name", req.Name)
	}
}
