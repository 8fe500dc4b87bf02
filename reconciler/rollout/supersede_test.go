package rollout_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/integrations/commitstatus"
	"github.com/claimwarden/claimwarden/test/fixtures"
	"github.com/claimwarden/claimwarden/test/invariants"
)

// superseding is how many proposals TestBackToBackProposalsLoseNothing
// sends, each as soon as the StatefulSet was re-created for the one before.
const superseding = 20

// A newer commit arriving while the previous one converges, twenty times in
// a row through the whole controller: each proposal comes the moment the
// StatefulSet was re-created for the previous one, the sequence of
// kubernetes/kubernetes#131284. No Pod, ControllerRevision or claim is
// lost, the last proposal is rolled out, and every commit that got a status
// got exactly one final one. (Here the controller's own cache lag usually
// leaves the StatefulSet controller time to adopt even without the wait in
// converge; converge's TestBackToBackRevisionsLoseNothing is the test that
// loses Pods without it.)
func TestBackToBackProposalsLoseNothing(t *testing.T) {
	c := started(t)
	ctx := context.Background()
	ns := namespace(t, c)
	live, key := createLive(t, c, fixtures.StatefulSet(ns, "db", 2, classExpandable, "1Gi"))
	rec, err := invariants.Start(ctx, env.Config, invariants.Options{Namespaces: []string{ns}})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Stop()

	var reapplied atomic.Int32
	var shas []string
	size := ""
	uid := live.UID
	began := time.Now()
	for i := 1; i <= superseding; i++ {
		size = fmt.Sprintf("%dMi", 1024+32*i)
		p, sha := gitProposal(live, size, &reapplied)
		shas = append(shas, sha)
		proposals.Set(ctx, p)
		uid = waitRecreated(t, c, key, uid)
	}
	t.Logf("%d proposals, each right after the re-create for the one before, in %s", superseding, time.Since(began).Round(time.Millisecond))
	waitRollout(t, c, key, "Ready at "+size, func(v *v1alpha1.VolumeClaimRollout) bool {
		return readyTrue(v) && v.Status.Counts.Compatible == 2 && v.Status.Claims[0].To == size
	})
	ctxName := "claimwarden/" + ns + "/db"
	waitStatus(t, shas[len(shas)-1], ctxName, func(s commitstatus.Status) bool { return s.State == commitstatus.Success })
	for _, s := range statuses.all(ctxName) {
		rec.CommitStatus(s.sha, s.s.Context, string(s.s.State))
	}
	if err := rec.Check(ctx); err != nil {
		t.Fatal(err)
	}
}

// waitRecreated waits until the StatefulSet of key exists with a UID other
// than old, and returns it.
func waitRecreated(t *testing.T, c client.Client, key types.NamespacedName, old types.UID) types.UID {
	t.Helper()
	var uid types.UID
	err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		var sts appsv1.StatefulSet
		if err := c.Get(ctx, key, &sts); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		uid = sts.UID
		return uid != old, nil
	})
	if err != nil {
		t.Fatalf("StatefulSet %s not re-created (still uid %s): %v", key, old, err)
	}
	return uid
}
