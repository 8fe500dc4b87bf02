package invariants

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// A Pod of a StatefulSet is told by the label the StatefulSet controller
// gives it, which stays while an orphan delete strips its owner reference.
func statefulSetPod(pod *corev1.Pod) bool {
	_, ok := pod.Labels[appsv1.StatefulSetPodNameLabel]
	return ok
}

func (r *Recorder) podHandler() cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			pod := obj.(*corev1.Pod)
			if !statefulSetPod(pod) {
				return
			}
			r.mu.Lock()
			defer r.mu.Unlock()
			r.counts.PodEvents++
			key := types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}
			if prev, ok := r.podUIDs[key]; ok && prev != pod.UID {
				// Its predecessor's delete was missed (a relist): judge it now.
				r.podGoneLocked(key, prev, "re-created with a new UID")
			}
			r.podUIDs[key] = pod.UID
		},
		UpdateFunc: func(o, n any) {
			old, pod := o.(*corev1.Pod), n.(*corev1.Pod)
			if !statefulSetPod(pod) {
				return
			}
			r.mu.Lock()
			defer r.mu.Unlock()
			r.counts.PodEvents++
			key := types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}
			if old.DeletionTimestamp == nil && pod.DeletionTimestamp != nil {
				r.podGoneLocked(key, pod.UID, "being deleted")
			}
			if restarts(pod) > restarts(old) && !r.takeIntended(key) {
				r.violateLocked(PodRestarted, "Pod "+key.String(), string(pod.UID)+"/restart", "a container restarted (restartCount %d → %d)", restarts(old), restarts(pod))
			}
		},
		DeleteFunc: func(obj any) {
			pod, ok := finalState(obj).(*corev1.Pod)
			if !ok || !statefulSetPod(pod) {
				return
			}
			r.mu.Lock()
			defer r.mu.Unlock()
			r.counts.PodEvents++
			r.podGoneLocked(types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}, pod.UID, "deleted")
		},
	}
}

// podGoneLocked judges the end of Pod uid (deletion started, deleted, or
// replaced unseen) once: a restart the test registered, or a violation.
func (r *Recorder) podGoneLocked(key types.NamespacedName, uid types.UID, how string) {
	id := "gone/" + string(uid)
	if r.flagged[id] {
		return
	}
	r.flagged[id] = true
	if r.takeIntended(key) {
		return
	}
	r.violateLocked(PodRestarted, "Pod "+key.String(), string(uid), "%s, and the test did not restart it", how)
}

func (r *Recorder) takeIntended(key types.NamespacedName) bool {
	if r.intended[key] == 0 {
		return false
	}
	r.intended[key]--
	return true
}

func restarts(pod *corev1.Pod) int32 {
	var n int32
	for _, s := range pod.Status.ContainerStatuses {
		n += s.RestartCount
	}
	return n
}
