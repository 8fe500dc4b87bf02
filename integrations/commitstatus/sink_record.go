package commitstatus

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
)

// Records writes a posted status into status.lastCommitStatus of the
// VolumeClaimRollout key (a VolumeClaimRollout is named as its
// StatefulSet); one that is gone is not an error. The rollout's one writer
// of VolumeClaimRollout status is it (rollout.Writer).
type Records interface {
	RecordCommitStatus(ctx context.Context, key types.NamespacedName, posted v1alpha1.CommitStatus) error
}

// recordTimeout bounds one write of status.lastCommitStatus, which runs on
// a Reporter worker: a slow API server must not hold it for long.
const recordTimeout = 10 * time.Second

// recordPosted is the Reporter's OnPosted: it records the posted status on
// the VolumeClaimRollout of the StatefulSet the Target belongs to.
func (s *CommitStatusSink) recordPosted(t Target, st Status) {
	posted := v1alpha1.CommitStatus{
		Repository: t.Repo.Host + "/" + t.Repo.Path,
		Revision:   t.SHA, Context: t.Context, State: string(st.State),
		Description: st.Description, PostedAt: metav1.NewTime(time.Now()),
	}
	ctx, cancel := context.WithTimeout(context.Background(), recordTimeout)
	defer cancel()
	if err := s.opts.Records.RecordCommitStatus(ctx, t.Owner, posted); err != nil {
		s.opts.Logger.Error(err, "recording the posted commit status", "rollout", t.Owner.String())
	}
}
