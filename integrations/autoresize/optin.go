package autoresize

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
)

// ReasonNotOptedIn is the event of a StatefulSet annotated for autoresize
// in a namespace the operator has not opted in.
const ReasonNotOptedIn = "AutoresizeNamespaceNotOptedIn"

// notOptedIn tells the owner of a StatefulSet annotated
// claimwarden.dev/autoresize: "true" in a namespace autoresize.namespaces
// does not list why nothing happens: in its VolumeClaimRollout's status,
// and a Warning event when the status first says so (record writes once,
// so the event is not repeated at every check). A StatefulSet without a
// VolumeClaimRollout gets neither: nothing is created for it.
func (c *Controller) notOptedIn(ctx context.Context, sts *appsv1.StatefulSet, now time.Time) {
	if sts.Annotations[v1alpha1.AutoresizeAnnotation] != "true" || sts.DeletionTimestamp != nil {
		return
	}
	st := v1alpha1.AutoresizeStatus{LastChecked: metaTime(now), Message: fmt.Sprintf(
		"annotated %s: \"true\", but namespace %s is not among autoresize.namespaces: the operator has not opted it in, so nothing is checked",
		v1alpha1.AutoresizeAnnotation, sts.Namespace)}
	if c.record(ctx, sts, st) {
		c.Recorder.Eventf(sts, nil, v1alpha1.Source{}, corev1.EventTypeWarning, ReasonNotOptedIn, "Autoresize", "%s", st.Message)
	}
}
