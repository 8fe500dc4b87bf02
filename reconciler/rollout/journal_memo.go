package rollout

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
)

// wrote remembers vcr, the API server's answer to this process's journal
// write for key (nil forgets). An entry lives while its record is pending
// and until a Load sees the cache caught up with its clearing (or the
// object gone), so the map is bounded by the StatefulSets being re-created.
func (j *rolloutJournal) wrote(key types.NamespacedName, vcr *v1alpha1.VolumeClaimRollout) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if vcr == nil {
		delete(j.written, key)
		return
	}
	if j.written == nil {
		j.written = map[types.NamespacedName]*v1alpha1.VolumeClaimRollout{}
	}
	// Dropped as the cache drops them: an Update without them keeps them.
	vcr.ManagedFields = nil
	j.written[key] = vcr
}

// remembered returns what wrote kept for key, not to be modified.
func (j *rolloutJournal) remembered(key types.NamespacedName) *v1alpha1.VolumeClaimRollout {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.written[key]
}

// forget drops mine, unless a later write replaced it meanwhile.
func (j *rolloutJournal) forget(key types.NamespacedName, mine *v1alpha1.VolumeClaimRollout) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.written[key] == mine {
		delete(j.written, key)
	}
}

// answer is Load's answer from the cache's copy (nil: not in the cache)
// and mine, our last write; not ok when their versions do not compare.
func (j *rolloutJournal) answer(key types.NamespacedName, cached, mine *v1alpha1.VolumeClaimRollout) (*v1alpha1.PendingRecreate, bool) {
	lags, ok := behind(cached, mine)
	switch {
	case !ok:
		return nil, false
	case lags:
		if cached == nil && mine.Status.PendingRecreate == nil {
			// Cleared, and the object may be gone for good.
			j.forget(key, mine)
		}
		return mine.Status.PendingRecreate.DeepCopy(), true
	}
	if cached.Status.PendingRecreate == nil {
		j.forget(key, mine)
	}
	return cached.Status.PendingRecreate, true
}

// behind reports whether cached is older than mine (or absent: the cache
// has not seen our create, or the object is gone); not ok when the two
// versions do not compare.
func behind(cached, mine *v1alpha1.VolumeClaimRollout) (lags, ok bool) {
	if cached == nil {
		return true, true
	}
	cmp, err := resourceversion.CompareResourceVersion(cached.ResourceVersion, mine.ResourceVersion)
	return cmp < 0, err == nil
}

// base is what Save writes over, with no request: the newer of the cache's
// copy and our last write; the API server's copy when they do not compare.
func (j *rolloutJournal) base(ctx context.Context, key types.NamespacedName) (*v1alpha1.VolumeClaimRollout, error) {
	cached, err := j.cached(ctx, key)
	mine := j.remembered(key)
	if err != nil || mine == nil {
		return cached, err
	}
	switch lags, ok := behind(cached, mine); {
	case !ok:
		return j.uncached(ctx, key)
	case lags:
		return mine.DeepCopy(), nil
	}
	return cached, nil
}

// cached reads key from the cache; nil without error when it is not there.
func (j *rolloutJournal) cached(ctx context.Context, key types.NamespacedName) (*v1alpha1.VolumeClaimRollout, error) {
	return readRollout(ctx, j.client, key)
}

// uncached reads key from the API server; nil without error when it does
// not exist.
func (j *rolloutJournal) uncached(ctx context.Context, key types.NamespacedName) (*v1alpha1.VolumeClaimRollout, error) {
	return readRollout(ctx, j.reader, key)
}

// readRollout reads key from r; nil without error when r finds none.
func readRollout(ctx context.Context, r client.Reader, key types.NamespacedName) (*v1alpha1.VolumeClaimRollout, error) {
	vcr := &v1alpha1.VolumeClaimRollout{}
	if err := r.Get(ctx, key, vcr); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	return vcr, nil
}
