package autoresize

import (
	"context"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/reconciler/rollout"
)

// Writer writes status.autoresize and grows claims before their pull
// request is merged: the rollout's rollout.Writer, the one writer of a
// VolumeClaimRollout's status and of claim sizes, so that autoresize and the
// rollout cannot undo each other's writes.
type Writer interface {
	// RecordAutoresize writes status.autoresize of the VolumeClaimRollout
	// key, unless it says that already or there is none, and reports
	// whether it wrote.
	RecordAutoresize(ctx context.Context, key types.NamespacedName, st v1alpha1.AutoresizeStatus) (bool, error)
	// GrowNow grows claims of sts, never shrinking one, and returns those
	// it grew.
	GrowNow(ctx context.Context, sts *appsv1.StatefulSet, growths []rollout.Growth) ([]string, error)
}

// record writes st into the StatefulSet's VolumeClaimRollout through the
// rollout's writer (rollout.Writer.RecordAutoresize says what is kept and
// what is not written); a StatefulSet without one gets none. It reports
// whether it wrote.
func (c *Controller) record(ctx context.Context, sts *appsv1.StatefulSet, st v1alpha1.AutoresizeStatus) bool {
	c.Log.V(1).Info("autoresize checked", "statefulset", keyOf(sts), "usage", st.Usage, "message", st.Message)
	wrote, err := c.Writer.RecordAutoresize(ctx, keyOf(sts), st)
	if err != nil {
		c.Log.Error(err, "autoresize: writing the status", "statefulset", keyOf(sts))
	}
	return wrote
}

// recorded is status.autoresize as last written, nil when there is none
// or it cannot be read (logged).
func (c *Controller) recorded(ctx context.Context, sts *appsv1.StatefulSet) *v1alpha1.AutoresizeStatus {
	var vcr v1alpha1.VolumeClaimRollout
	if err := c.Client.Get(ctx, keyOf(sts), &vcr); err != nil {
		if client.IgnoreNotFound(err) != nil {
			c.Log.Error(err, "autoresize: reading the VolumeClaimRollout", "statefulset", keyOf(sts))
		}
		return nil
	}
	return vcr.Status.Autoresize
}

// recordedCommit is the commit status.autoresize records claimwarden made
// on the branch of pull request url; "" when it records none for that pull
// request, or cannot be read (the branch is then rebuilt: never trusted
// unrecorded).
func (c *Controller) recordedCommit(ctx context.Context, sts *appsv1.StatefulSet, url string) string {
	if st := c.recorded(ctx, sts); st != nil && st.PullRequest == url {
		return st.Commit
	}
	return ""
}

func keyOf(sts *appsv1.StatefulSet) types.NamespacedName {
	return types.NamespacedName{Namespace: sts.Namespace, Name: sts.Name}
}

func metaTime(t time.Time) metav1.Time { return metav1.NewTime(t.Truncate(time.Second)) }
