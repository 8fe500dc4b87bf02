package plan

import (
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/claimwarden/claimwarden/reconciler/diff"
)

// OnDelete paces the claims of a StatefulSet whose updateStrategy is
// OnDelete as KEP-4650 does: that strategy updates a Pod only when a
// person deletes it, and KEP-4650 updates its claims then, with the new
// Pod. A claim therefore waits while its Pod is older than the templates.
//
// Templates cannot change in place, so a StatefulSet carrying new ones was
// created (by the GitOps tool, a person or claimwarden's convergence) after
// its old Pods: a Pod is old when it was created before the StatefulSet, or
// is not on its update revision. Timestamps have whole seconds, so a Pod
// created in the StatefulSet's second counts as old; that is why what was
// seen is remembered (Seen): a Pod of a name seen before with another UID
// was re-created since, however soon, and is new.
type OnDelete struct {
	// Old maps ordinals to their Pod while it is old: their claims wait.
	Old map[int32]PodRef
	// Seen is what the next OnDeleteOf of the same StatefulSet object needs.
	Seen map[string]SeenPod
}

// PodRef names a Pod.
type PodRef struct {
	Name string
	UID  types.UID
}

// SeenPod is a Pod OnDeleteOf saw under its name: its UID and whether it
// was old.
type SeenPod struct {
	UID types.UID
	Old bool
}

// OnDeleteOf reads which Pods of sts are old (none unless its
// updateStrategy is OnDelete). pods are the metadata of the namespace's Pods
// of sts; seen is the previous call's Seen for the same StatefulSet object
// (nil at first). A Pod being deleted, or gone, holds nothing: KEP-4650
// patches the claim as the Pod is re-created.
func OnDeleteOf(sts *appsv1.StatefulSet, pods []metav1.ObjectMeta, seen map[string]SeenPod) OnDelete {
	if sts.Spec.UpdateStrategy.Type != appsv1.OnDeleteStatefulSetStrategyType {
		return OnDelete{}
	}
	d := OnDelete{Old: map[int32]PodRef{}, Seen: make(map[string]SeenPod, len(seen))}
	// A name whose Pod is gone keeps its entry, so its re-creation is told.
	for name, s := range seen {
		d.Seen[name] = s
	}
	for i := range pods {
		p := &pods[i]
		ordinal, ok := diff.PodOrdinal(sts.Name, p.Name)
		if !ok {
			continue
		}
		old := oldPod(sts, p, seen)
		d.Seen[p.Name] = SeenPod{UID: p.UID, Old: old}
		if old && p.DeletionTimestamp == nil {
			d.Old[ordinal] = PodRef{Name: p.Name, UID: p.UID}
		}
	}
	return d
}

func oldPod(sts *appsv1.StatefulSet, p *metav1.ObjectMeta, seen map[string]SeenPod) bool {
	if s, ok := seen[p.Name]; ok {
		// The same Pod is what it was; another was created since.
		return s.UID == p.UID && s.Old
	}
	if !p.CreationTimestamp.After(sts.CreationTimestamp.Time) {
		return true
	}
	rev := sts.Status.UpdateRevision
	return rev != "" && p.Labels[appsv1.ControllerRevisionHashLabelKey] != rev
}

// holding is the name of the old Pod that holds the claims of ordinal, ""
// when none does.
func (d OnDelete) holding(ordinal int32) string {
	return d.Old[ordinal].Name
}

func onDeleteWaiting(pod, c string) string {
	return fmt.Sprintf("waiting: updateStrategy OnDelete updates claims with their Pod, and Pod %s is older than the templates; delete it and the claim is patched as it is re-created; will patch %s", pod, c)
}

// onDeleteSummary says which Pods hold claims, for the rollout's
// condition; pods has one entry per held claim.
func onDeleteSummary(pods []string) string {
	names := slices.Compact(slices.Sorted(slices.Values(pods)))
	return fmt.Sprintf("updateStrategy OnDelete holds %d claim(s) until their Pods are deleted: %s", len(pods), nameList(names))
}

// HeldNote says, as the controller's status will, which claims of r the old
// Pods hold, or "" when none.
func (d OnDelete) HeldNote(r diff.Result) string {
	var pods []string
	for _, c := range r.Claims {
		if p := d.holding(c.Ordinal); p != "" && !c.Compatible && !c.Missing && len(c.Immutable) == 0 && blockingFailure(c) == "" && c.NeedsPatch() {
			pods = append(pods, p)
		}
	}
	if len(pods) == 0 {
		return ""
	}
	return onDeleteSummary(pods)
}

// OnDeleteNote is HeldNote for `claimwarden check`, which reads no Pods:
// a template change re-creates the StatefulSet, so every Pod it has then
// is older than it, and under updateStrategy OnDelete (of sts, the live
// StatefulSet) every claim to patch waits for its Pod.
func OnDeleteNote(sts *appsv1.StatefulSet, r diff.Result) string {
	if sts.Spec.UpdateStrategy.Type != appsv1.OnDeleteStatefulSetStrategyType {
		return ""
	}
	d := OnDelete{Old: map[int32]PodRef{}}
	for _, c := range r.Claims {
		d.Old[c.Ordinal] = PodRef{Name: diff.PodName(sts.Name, c.Ordinal)}
	}
	return d.HeldNote(r)
}
