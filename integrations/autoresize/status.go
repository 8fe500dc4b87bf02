package autoresize

import (
	"context"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
)

// FieldOwner is the field manager of status.autoresize.
const FieldOwner = v1alpha1.ControllerName + "-autoresize"

// record writes st into the StatefulSet's VolumeClaimRollout
// (status.autoresize only, so that the rollout's fields stay as the rollout
// controller wrote them); a StatefulSet without one gets none. A status
// that says what the cached one says is not written: a StatefulSet at
// rest costs no write per check. Proposed says what the pull request shown
// proposes, so a check that proposes nothing new about the same pull
// request keeps it, and so Commit, the commit claimwarden made on its
// branch. The merge patch is made from the cached status, so a
// field st no longer has is removed (sent as null), not kept: left, it
// would never compare equal, and every check would write. It reports
// whether it wrote.
func (c *Controller) record(ctx context.Context, sts *appsv1.StatefulSet, st v1alpha1.AutoresizeStatus) bool {
	c.Log.V(1).Info("autoresize checked", "statefulset", keyOf(sts), "usage", st.Usage, "message", st.Message)
	var vcr v1alpha1.VolumeClaimRollout
	if err := c.Client.Get(ctx, keyOf(sts), &vcr); err != nil {
		if client.IgnoreNotFound(err) != nil {
			c.Log.Error(err, "autoresize: reading the VolumeClaimRollout", "statefulset", keyOf(sts))
		}
		return false
	}
	if old := vcr.Status.Autoresize; old != nil && st.PullRequest != "" && st.PullRequest == old.PullRequest {
		if st.Proposed == "" {
			st.Proposed = old.Proposed
		}
		if st.Commit == "" {
			st.Commit = old.Commit
		}
	}
	if sameStatus(vcr.Status.Autoresize, st) {
		return false
	}
	patch := client.MergeFrom(vcr.DeepCopy())
	vcr.Status.Autoresize = &st
	err := c.Client.Status().Patch(ctx, &vcr, patch, client.FieldOwner(FieldOwner))
	if client.IgnoreNotFound(err) != nil {
		c.Log.Error(err, "autoresize: writing the status", "statefulset", keyOf(sts))
	}
	return err == nil
}

// recordedCommit is the commit status.autoresize records claimwarden made
// on the branch of pull request url; "" when it records none for that pull
// request, or cannot be read (the branch is then rebuilt: never trusted
// unrecorded).
func (c *Controller) recordedCommit(ctx context.Context, sts *appsv1.StatefulSet, url string) string {
	var vcr v1alpha1.VolumeClaimRollout
	if err := c.Client.Get(ctx, keyOf(sts), &vcr); err != nil {
		if client.IgnoreNotFound(err) != nil {
			c.Log.Error(err, "autoresize: reading the VolumeClaimRollout", "statefulset", keyOf(sts))
		}
		return ""
	}
	if st := vcr.Status.Autoresize; st != nil && st.PullRequest == url {
		return st.Commit
	}
	return ""
}

// sameStatus reports whether st says what old says, when it was checked
// aside.
func sameStatus(old *v1alpha1.AutoresizeStatus, st v1alpha1.AutoresizeStatus) bool {
	if old == nil {
		return false
	}
	o := *old
	o.LastChecked, st.LastChecked = metav1.Time{}, metav1.Time{}
	return o == st
}

func keyOf(sts *appsv1.StatefulSet) types.NamespacedName {
	return types.NamespacedName{Namespace: sts.Namespace, Name: sts.Name}
}

func metaTime(t time.Time) metav1.Time { return metav1.NewTime(t.Truncate(time.Second)) }
