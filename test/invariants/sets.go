package invariants

import (
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// setHandler remembers every StatefulSet seen: each must exist at the end
// (Check). One absent for a while is what a re-create looks like.
func (r *Recorder) setHandler() cache.ResourceEventHandlerFuncs {
	seen := func(obj any) {
		sts, ok := finalState(obj).(*appsv1.StatefulSet)
		if !ok {
			return
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		r.counts.SetEvents++
		r.sets[types.NamespacedName{Namespace: sts.Namespace, Name: sts.Name}] = true
	}
	return cache.ResourceEventHandlerFuncs{AddFunc: seen, UpdateFunc: func(_, n any) { seen(n) }, DeleteFunc: seen}
}

// revisionHandler flags every ControllerRevision deleted or being deleted:
// losing one loses the StatefulSet's rollout history (and its current
// revision, which makes the controller restart Pods).
func (r *Recorder) revisionHandler() cache.ResourceEventHandlerFuncs {
	lost := func(cr *appsv1.ControllerRevision, how string) {
		r.violate(RevisionLost, "ControllerRevision "+cr.Namespace+"/"+cr.Name, string(cr.UID), "%s (revision %d)", how, cr.Revision)
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { r.count() },
		UpdateFunc: func(_, n any) {
			r.count()
			if cr := n.(*appsv1.ControllerRevision); cr.DeletionTimestamp != nil {
				lost(cr, "being deleted")
			}
		},
		DeleteFunc: func(obj any) {
			r.count()
			if cr, ok := finalState(obj).(*appsv1.ControllerRevision); ok {
				lost(cr, "deleted")
			}
		},
	}
}

func (r *Recorder) count() {
	r.mu.Lock()
	r.counts.RevisionEvents++
	r.mu.Unlock()
}
