package commitstatus

import (
	"context"
	"encoding/json"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
)

// recordTimeout bounds one write of status.lastCommitStatus, which runs on
// a Reporter worker: a slow API server must not hold it for long.
const recordTimeout = 10 * time.Second

// recordPosted is the Reporter's OnPosted: it writes the posted status into
// status.lastCommitStatus of the VolumeClaimRollout of the StatefulSet the
// Target belongs to (a VolumeClaimRollout is named as its StatefulSet). A
// rollout that is gone is not an error.
func (s *CommitStatusSink) recordPosted(t Target, st Status) {
	posted := v1alpha1.CommitStatus{
		Repository: t.Repo.Host + "/" + t.Repo.Path,
		Revision:   t.SHA, Context: t.Context, State: string(st.State),
		Description: st.Description, PostedAt: metav1.NewTime(time.Now()),
	}
	body, err := json.Marshal(map[string]any{"status": map[string]any{"lastCommitStatus": posted}})
	if err != nil {
		s.opts.Logger.Error(err, "recording the posted commit status", "rollout", t.Owner.String())
		return
	}
	vcr := &v1alpha1.VolumeClaimRollout{ObjectMeta: metav1.ObjectMeta{Namespace: t.Owner.Namespace, Name: t.Owner.Name}}
	ctx, cancel := context.WithTimeout(context.Background(), recordTimeout)
	defer cancel()
	patch := client.RawPatch(types.MergePatchType, body)
	if err := s.opts.Client.Status().Patch(ctx, vcr, patch, client.FieldOwner(v1alpha1.ControllerName)); client.IgnoreNotFound(err) != nil {
		s.opts.Logger.Error(err, "recording the posted commit status", "rollout", t.Owner.String())
	}
}
