package rollout

import (
	"context"
	"encoding/json"

	lru "github.com/hashicorp/golang-lru/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
)

// AutoresizeFieldOwner is the field manager of status.autoresize and of
// the claims grown before their pull request is merged. It is not the
// rollout's own: an apply under the rollout's manager that carries only
// the storage would release the labels, annotations and
// VolumeAttributesClass the rollout applied to the claim.
const AutoresizeFieldOwner = v1alpha1.ControllerName + "-autoresize"

// Writer is the one writer of the claims' sizes and of VolumeClaimRollout
// status: the rollout controller applies its claim patches through it, and
// the integrations that report on a rollout or grow its claims (autoresize)
// go through it rather than write themselves.
type Writer struct {
	// client reads from the cache and writes.
	client client.Client
	// reader reads from the API server, once the cache was found behind.
	reader client.Reader
	// grownNow are the sizes GrowNow applied, by claim: floors for the
	// rollout's applies (floor).
	grownNow *lru.Cache[types.NamespacedName, resource.Quantity]
}

// grownNowMemory bounds grownNow: a claim forgotten once the cache holds
// its growth loses nothing, and one forgotten before is one of thousands
// grown within the cache's lag.
const grownNowMemory = 4096

// NewWriter writes through c, reading through c first and through reader
// (the API server) after a conflict.
func NewWriter(c client.Client, reader client.Reader) *Writer {
	grown, _ := lru.New[types.NamespacedName, resource.Quantity](grownNowMemory) // errors only for a size below 1
	return &Writer{client: c, reader: reader, grownNow: grown}
}

// RecordAutoresize writes st into status.autoresize of the
// VolumeClaimRollout key and reports whether it wrote; a StatefulSet
// without one gets none. A status that says what the stored one says, when
// it was checked aside, is not written: a StatefulSet at rest costs no
// write per check. Proposed and Commit, what the pull request shown
// proposes and the commit claimwarden made on its branch, are kept while st
// shows the same pull request without them. A field st no longer has is
// removed (sent as null), not kept: left, it would never compare equal and
// every check would write.
//
// Neither this write nor the rollout's own can lose the other's fields: the
// merge patch names status.autoresize alone, and the rollout's patches
// (writeRollout, the journal's, the commit-status sink's) never name it, as
// the rollout never changes it. The patch carries the resourceVersion it
// was computed on (an optimistic lock): the nulls that remove fields are
// those of the stored status, never of a stale cached one; on a conflict
// the VolumeClaimRollout is read again from the API server and the patch
// made anew.
func (w *Writer) RecordAutoresize(ctx context.Context, key types.NamespacedName, st v1alpha1.AutoresizeStatus) (wrote bool, err error) {
	var read client.Reader = w.client
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var vcr v1alpha1.VolumeClaimRollout
		if err := read.Get(ctx, key, &vcr); err != nil {
			return err
		}
		// A conflict means the cache is behind the API server.
		read = w.reader
		next := carried(vcr.Status.Autoresize, st)
		if sameAutoresize(vcr.Status.Autoresize, next) {
			return nil
		}
		patch := client.MergeFromWithOptions(vcr.DeepCopy(), client.MergeFromWithOptimisticLock{})
		vcr.Status.Autoresize = &next
		if err := w.client.Status().Patch(ctx, &vcr, patch, client.FieldOwner(AutoresizeFieldOwner)); err != nil {
			return err
		}
		wrote = true
		return nil
	})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return wrote, err
}

// RecordCommitStatus writes posted into status.lastCommitStatus of the
// VolumeClaimRollout key, the record a restarted controller seeds its
// commit statuses from; one that is gone is not an error. The merge patch
// names status.lastCommitStatus alone, which no other write names.
func (w *Writer) RecordCommitStatus(ctx context.Context, key types.NamespacedName, posted v1alpha1.CommitStatus) error {
	body, err := json.Marshal(map[string]any{"status": map[string]any{"lastCommitStatus": posted}})
	if err != nil {
		return err
	}
	vcr := &v1alpha1.VolumeClaimRollout{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	err = w.client.Status().Patch(ctx, vcr, client.RawPatch(types.MergePatchType, body), client.FieldOwner(v1alpha1.ControllerName))
	return client.IgnoreNotFound(err)
}

// carried is st with the Proposed and Commit of old kept, when both show
// the same pull request and st leaves them empty.
func carried(old *v1alpha1.AutoresizeStatus, st v1alpha1.AutoresizeStatus) v1alpha1.AutoresizeStatus {
	if old == nil || st.PullRequest == "" || st.PullRequest != old.PullRequest {
		return st
	}
	if st.Proposed == "" {
		st.Proposed = old.Proposed
	}
	if st.Commit == "" {
		st.Commit = old.Commit
	}
	return st
}

// sameAutoresize reports whether st says what old says, when it was
// checked aside.
func sameAutoresize(old *v1alpha1.AutoresizeStatus, st v1alpha1.AutoresizeStatus) bool {
	if old == nil {
		return false
	}
	o := *old
	o.LastChecked, st.LastChecked = metav1.Time{}, metav1.Time{}
	return o == st
}
