package storagesim

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
)

// FailResize makes resizes of the claim fail with msg (ControllerResizeError,
// ControllerResizeInfeasible) until ClearFailure.
func (s *Simulator) FailResize(namespace, name, msg string) {
	s.inject(namespace, name, func() { s.failures[types.NamespacedName{Namespace: namespace, Name: name}] = msg })
}

// FailModify makes VolumeAttributesClass changes of the claim fail with msg
// (modifyVolumeStatus Infeasible, ModifyVolumeError) until ClearFailure.
func (s *Simulator) FailModify(namespace, name, msg string) {
	s.inject(namespace, name, func() { s.modifyFailures[types.NamespacedName{Namespace: namespace, Name: name}] = msg })
}

// ClearFailure undoes FailResize and FailModify; the next attempt succeeds
// (unless the claim still carries a failure annotation).
func (s *Simulator) ClearFailure(namespace, name string) {
	key := types.NamespacedName{Namespace: namespace, Name: name}
	s.inject(namespace, name, func() {
		delete(s.failures, key)
		delete(s.modifyFailures, key)
	})
}

// inject changes the injected failures under the lock, once init has made
// the maps, and wakes the claim up.
func (s *Simulator) inject(namespace, name string, change func()) {
	s.init()
	s.mu.Lock()
	change()
	s.mu.Unlock()
	s.poke(types.NamespacedName{Namespace: namespace, Name: name})
}

// poke enqueues the claim without blocking; if the buffer is full the periodic
// re-check of failed claims still picks the change up.
func (s *Simulator) poke(key types.NamespacedName) {
	obj := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	select {
	case s.wake <- event.GenericEvent{Object: obj}:
	default:
	}
}

// failure returns the injected resize failure message for the claim, if
// any; the annotation wins over FailResize.
func (s *Simulator) failure(pvc *corev1.PersistentVolumeClaim) (string, bool) {
	return s.injected(pvc, FailResizeAnnotation, s.failures)
}

// modifyFailure returns the injected VolumeAttributesClass change failure
// message for the claim, if any; the annotation wins over FailModify.
func (s *Simulator) modifyFailure(pvc *corev1.PersistentVolumeClaim) (string, bool) {
	return s.injected(pvc, FailModifyAnnotation, s.modifyFailures)
}

func (s *Simulator) injected(pvc *corev1.PersistentVolumeClaim, annotation string, byClaim map[types.NamespacedName]string) (string, bool) {
	if msg, ok := pvc.Annotations[annotation]; ok {
		return msg, true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	msg, ok := byClaim[client.ObjectKeyFromObject(pvc)]
	return msg, ok
}
