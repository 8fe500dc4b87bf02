package rollout

import (
	"reflect"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/claimwarden/claimwarden/reconciler/gate"
)

// claimQuotaChanged passes ResourceQuota events that change what the
// policies see: a quota of storage or claims created or deleted, or its
// limits or use of them changed. The rest (cpu, pods, ...) changes with
// every Pod and would re-evaluate every StatefulSet of the namespace.
func claimQuotaChanged() predicate.Predicate {
	countsClaims := func(o any) bool {
		q, ok := o.(*corev1.ResourceQuota)
		return ok && gate.QuotasForPolicies([]corev1.ResourceQuota{*q}) != nil
	}
	return predicate.Funcs{
		CreateFunc: func(e event.CreateEvent) bool { return countsClaims(e.Object) },
		DeleteFunc: func(e event.DeleteEvent) bool { return countsClaims(e.Object) },
		UpdateFunc: func(e event.UpdateEvent) bool {
			old, okOld := e.ObjectOld.(*corev1.ResourceQuota)
			updated, okNew := e.ObjectNew.(*corev1.ResourceQuota)
			if !okOld || !okNew {
				return true
			}
			return !reflect.DeepEqual(
				gate.QuotasForPolicies([]corev1.ResourceQuota{*old}),
				gate.QuotasForPolicies([]corev1.ResourceQuota{*updated}))
		},
		GenericFunc: func(event.GenericEvent) bool { return true },
	}
}
