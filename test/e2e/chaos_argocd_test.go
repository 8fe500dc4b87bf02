//go:build chaos

package e2e

import (
	"context"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"

	"github.com/claimwarden/claimwarden/test/argoenv"
	"github.com/claimwarden/claimwarden/test/invariants"
)

// TestChaosArgoCDBurst is kubernetes/kubernetes#131284 through Argo CD, as
// TestChaos's superseding fault is through Flux: -chaos.burst commits pushed
// back to back, each the moment claimwarden re-created the StatefulSet for
// the one before (Argo CD's automated sync, with its default retries, failed
// on the templates and claimwarden read them through Argo CD's API). No Pod
// or ControllerRevision may be lost and no claim patched twice (the
// recorder), every commit with a status ends with exactly one final one,
// the last with success, and the Application ends Synced at the last commit.
func TestChaosArgoCDBurst(t *testing.T) {
	if *chaosBurst < 2 {
		t.Fatalf("-chaos.burst=%d: a burst needs at least 2 commits, one to supersede", *chaosBurst)
	}
	cl := started(t)
	ctx := context.Background()
	argo := startArgoCD(t)
	g := startGitea(t)
	ctl := startArgoController(t, cl, argo, g, "burst", argo.Namespace)
	s, pods := setupArgoScenario(t, cl, g, argo, ctl, argoApp{name: "burst"})
	rec, err := invariants.Start(ctx, env.Config, invariants.Options{Namespaces: []string{s.ns}})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Stop()

	uid := func() types.UID {
		sts := &appsv1.StatefulSet{}
		if err := cl.admin.Get(ctx, s.sts, sts); err != nil {
			return "" // orphan-deleted, not re-created yet
		}
		return sts.UID
	}
	size, step := resource.MustParse("1Gi"), resource.MustParse("32Mi")
	var shas []string
	last := uid()
	for i := range *chaosBurst {
		// 32Mi a commit keeps a burst of 20 well inside max-step (100%)
		// while the claims lag behind it.
		size.Add(step)
		shas = append(shas, s.commit(size.String(), "", fmt.Sprintf("web at %s (%d of a burst of %d)", size.String(), i+1, *chaosBurst)))
		if i == *chaosBurst-1 {
			break
		}
		before := last
		waitFor(t, fmt.Sprintf("the re-create of %s for %s", s.sts, size.String()), []*controller{ctl}, func(context.Context) (bool, error) {
			last = uid()
			return last != "" && last != before, nil
		})
	}
	final := shas[len(shas)-1]
	waitRolloutDone(t, cl.admin, s.sts, 2, size.String(), ctl)
	// In sync with Git and Healthy. Its last operation may well be the
	// automated sync of a superseded commit, Failed after its retries (which
	// ran on while claimwarden converged the next commits): a true record of
	// that commit, and nothing to sync since the Application is Synced.
	st := s.application(final, "Synced and Healthy", func(st argoenv.AppStatus) bool {
		return st.Sync == "Synced" && st.Health == "Healthy"
	})
	t.Logf("Application at the last commit: %s", st)
	statusContext := "claimwarden/" + s.ns + "/web"
	waitStatus(t, g, s.repo, final, statusContext, "success", "2/2 claims compatible", ctl)

	for _, sha := range shas {
		statuses, err := g.Statuses(ctx, s.repo, sha)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range statuses {
			rec.CommitStatus(sha, st.Context, st.State)
		}
		t.Logf("commit %.8s: %s", sha, states(ofContext(statuses, statusContext)))
	}
	err = rec.Check(ctx)
	counts := rec.Counts()
	t.Logf("Argo CD burst of %d commits: recorder saw %d claim writes (%d by claimwarden), %d Pod events, %d StatefulSet events, %d ControllerRevision events",
		*chaosBurst, counts.ClaimWrites, counts.ClaimwardenPatches, counts.PodEvents, counts.SetEvents, counts.RevisionEvents)
	if err != nil {
		t.Fatal(err)
	}
	live := &appsv1.StatefulSet{}
	if err := cl.admin.Get(ctx, s.sts, live); err != nil {
		t.Fatal(err)
	}
	assertPodsKept(t, cl.admin, live, pods)
}
