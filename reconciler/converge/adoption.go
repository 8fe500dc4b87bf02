package converge

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
)

// unadopted says why live must not be orphan-deleted yet, or "" when it may.
//
// Why: kubernetes/kubernetes#131284. An orphan delete of a StatefulSet that
// was (re-)created moments ago can make the garbage collector delete its
// Pods or ControllerRevisions. The StatefulSet controller adopts them by
// adding an owner reference with the new UID; if the collector processes
// the orphan delete before its graph has seen that adoption, it finds no
// dependents to orphan, lets the object go, and then sees dependents whose
// owner (that UID) no longer exists: garbage, deleted. Back-to-back
// revisions (a newer commit arriving while the previous one converges) make
// exactly that sequence, so a StatefulSet is orphan-deleted only once the
// previous orphaning is over and the object has adopted everything: the
// StatefulSet controller has observed its generation, and every member Pod
// and every ControllerRevision it selects is controlled by live's UID, with
// no owner reference to another StatefulSet left. Until then the caller
// waits (Adopting) and asks again; the adoption takes the StatefulSet
// controller one sync, well under a second (see nudgeAdoption when it does
// not come).
func (c *Converger) unadopted(ctx context.Context, live *appsv1.StatefulSet) (string, error) {
	if live.Status.ObservedGeneration < live.Generation {
		return fmt.Sprintf("the StatefulSet controller has not observed generation %d yet", live.Generation), nil
	}
	sel, err := metav1.LabelSelectorAsSelector(live.Spec.Selector)
	if err != nil {
		return "", fmt.Errorf("statefulset %s/%s: spec.selector: %w", live.Namespace, live.Name, err)
	}
	for _, kind := range []schema.GroupVersionKind{
		corev1.SchemeGroupVersion.WithKind("PodList"),
		appsv1.SchemeGroupVersion.WithKind("ControllerRevisionList"),
	} {
		// Metadata only: owner references are all this needs.
		var list metav1.PartialObjectMetadataList
		list.SetGroupVersionKind(kind)
		if err := c.opts.Reader.List(ctx, &list, client.InNamespace(live.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
			return "", fmt.Errorf("statefulset %s/%s: listing %s: %w", live.Namespace, live.Name, kind.Kind, err)
		}
		isPod := kind.Kind == "PodList"
		for i := range list.Items {
			o := &list.Items[i]
			if o.DeletionTimestamp != nil || isPod && !memberPod(live, o.Name) {
				// Going anyway, or a Pod the StatefulSet controller never adopts.
				continue
			}
			if why := notAdopted(live, o); why != "" {
				return fmt.Sprintf("%s %s %s", strings.TrimSuffix(kind.Kind, "List"), o.Name, why), nil
			}
		}
	}
	return "", nil
}

// notAdopted says how o's owner references fall short of live's adoption.
func notAdopted(live *appsv1.StatefulSet, o *metav1.PartialObjectMetadata) string {
	ctl := metav1.GetControllerOfNoCopy(o)
	if ctl != nil && ctl.Kind != "StatefulSet" {
		return "" // another controller's; the StatefulSet controller leaves it alone
	}
	for _, ref := range o.OwnerReferences {
		if ref.Kind == "StatefulSet" && ref.UID != live.UID {
			return fmt.Sprintf("still names StatefulSet uid %s as owner", ref.UID)
		}
	}
	if ctl == nil {
		return "is not adopted yet"
	}
	return ""
}

// memberPod is the StatefulSet controller's own membership test: a Pod
// named <set>-<ordinal>.
func memberPod(live *appsv1.StatefulSet, name string) bool {
	ord, ok := strings.CutPrefix(name, live.Name+"-")
	if !ok {
		return false
	}
	_, err := strconv.ParseUint(ord, 10, 31)
	return err == nil
}

// nudgeAdoption touches live (v1alpha1.AdoptionNudgedAnnotation) when it has
// gone unadopted for Options.AdoptionNudgeAfter since its creation and since
// the last nudge. Seen in the chaos run: after an etcd restart the StatefulSet
// controller dropped its sync of a re-created StatefulSet ("StatefulSet has
// been deleted", its cache still holding the old object's delete) and left a
// ControllerRevision unadopted; it syncs a StatefulSet on the object's own
// events, not on a revision's, so nothing made it look again and the rollout
// waited forever. The update changes metadata only: no new generation, no Pod
// touched. A conflict or a missing object is not an error: the next
// reconcile reads it again.
func (c *Converger) nudgeAdoption(ctx context.Context, live *appsv1.StatefulSet, why string) error {
	now := c.opts.Now()
	if !nudgeDue(live, now, c.opts.AdoptionNudgeAfter) {
		return nil
	}
	touched := live.DeepCopy()
	if touched.Annotations == nil {
		touched.Annotations = map[string]string{}
	}
	touched.Annotations[v1alpha1.AdoptionNudgedAnnotation] = now.UTC().Format(time.RFC3339)
	err := c.opts.Client.Update(ctx, touched, client.FieldOwner(c.opts.FieldOwner))
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("statefulset %s/%s: touching it so that the StatefulSet controller adopts its dependents (%s): %w", live.Namespace, live.Name, why, err)
	}
	log.FromContext(ctx).Info("the StatefulSet controller has not adopted the StatefulSet's dependents; touched it so that it syncs it again", "why", why, "since", live.CreationTimestamp.Time)
	return nil
}

// nudgeDue says whether live, unadopted, has waited after since its
// creation and since the last nudge. Whoever edits the StatefulSet can
// write the annotation too: a time in the future (or no time) holds nothing
// back.
func nudgeDue(live *appsv1.StatefulSet, now time.Time, after time.Duration) bool {
	if now.Sub(live.CreationTimestamp.Time) < after {
		return false
	}
	last, err := time.Parse(time.RFC3339, live.Annotations[v1alpha1.AdoptionNudgedAnnotation])
	return err != nil || last.After(now) || now.Sub(last) >= after
}
