//go:build chaos

package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/runtime/conditions"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/test/fixtures"
	"github.com/claimwarden/claimwarden/test/fluxenv"
	"github.com/claimwarden/claimwarden/test/gitea"
)

// chaosReplicas is the replicas of fluxStatefulSet: two claims, so that a
// kill between two claim patches has a next claim to get wrong.
const chaosReplicas = 2

// chaosSet is one StatefulSet of the chaos run: its Gitea repository,
// GitRepository and Kustomization (both named like the repository, in
// flux-system) and namespace, and the commits that went into it.
type chaosSet struct {
	cl      *cluster
	g       *gitea.Server
	repo    string
	ks, sts types.NamespacedName
	size    resource.Quantity
	shas    []string
}

// setUpChaosSet pushes the StatefulSet at 1Gi and lets Flux apply it; the
// caller waits for it (ready).
func setUpChaosSet(ctx context.Context, t *testing.T, cl *cluster, g *gitea.Server, name string) *chaosSet {
	t.Helper()
	url, err := g.CreateRepo(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if err := fixtures.Namespace(ctx, cl.admin, name); err != nil {
		t.Fatal(err)
	}
	s := &chaosSet{cl: cl, g: g, repo: name, size: resource.MustParse("1Gi"),
		ks: types.NamespacedName{Namespace: "flux-system", Name: name}, sts: types.NamespacedName{Namespace: name, Name: "web"}}
	s.push(ctx, t)
	if err := cl.admin.Create(ctx, fluxenv.GitRepository(s.ks.Namespace, name, url, time.Minute)); err != nil {
		t.Fatal(err)
	}
	ks := fluxenv.Kustomization(s.ks.Namespace, name, name, "./")
	ks.Spec.TargetNamespace = name
	if err := cl.admin.Create(ctx, ks); err != nil {
		t.Fatal(err)
	}
	return s
}

// push commits the StatefulSet at s.size.
func (s *chaosSet) push(ctx context.Context, t *testing.T) string {
	t.Helper()
	manifest := fmt.Sprintf(fluxStatefulSet, s.size.String())
	sha, err := s.g.PushCommit(ctx, s.repo, map[string]string{"statefulset.yaml": manifest, "kustomization.yaml": fluxKustomizationFile},
		"web at "+s.size.String())
	if err != nil {
		t.Fatal(err)
	}
	s.shas = append(s.shas, sha)
	return sha
}

// bump grows the template by 128Mi (well inside max-step), commits it and
// asks source-controller to fetch it at once.
func (s *chaosSet) bump(ctx context.Context, t *testing.T) string {
	t.Helper()
	return s.bumpBy(ctx, t, resource.MustParse("128Mi"))
}

// bumpBy is bump by step.
func (s *chaosSet) bumpBy(ctx context.Context, t *testing.T, step resource.Quantity) string {
	t.Helper()
	s.size.Add(step)
	sha := s.push(ctx, t)
	repo := fluxenv.GitRepository(s.ks.Namespace, s.ks.Name, "", 0)
	if _, err := fluxenv.RequestReconcile(ctx, s.cl.admin, repo); err != nil {
		t.Fatal(err)
	}
	return sha
}

// done says whether the last commit is through: Flux applied it, the
// rollout is Ready with every claim at the size, and the commit has its
// success status (but the first: Flux applies that one without a proposal,
// so no status is posted). why says what is missing.
func (s *chaosSet) done(ctx context.Context) (ok bool, why string) {
	sha := s.shas[len(s.shas)-1]
	ks := &kustomizev1.Kustomization{}
	if err := s.cl.admin.Get(ctx, s.ks, ks); err != nil {
		return false, err.Error()
	}
	if ks.Status.LastAppliedRevision != "main@sha1:"+sha {
		return false, fmt.Sprintf("Kustomization applied %s, not %.8s", ks.Status.LastAppliedRevision, sha)
	}
	vcr := &v1alpha1.VolumeClaimRollout{}
	if err := s.cl.admin.Get(ctx, s.sts, vcr); err != nil {
		return false, err.Error()
	}
	size := s.size.String()
	if !conditions.IsReady(vcr) || vcr.Status.Counts.Compatible != chaosReplicas || len(vcr.Status.Claims) != chaosReplicas {
		return false, "rollout " + describe(vcr)
	}
	for _, c := range vcr.Status.Claims {
		if c.To != size {
			return false, "rollout " + describe(vcr)
		}
	}
	if len(s.shas) == 1 {
		return true, ""
	}
	_, statuses, err := s.g.CombinedStatus(ctx, s.repo, sha)
	if err != nil {
		return false, err.Error()
	}
	for _, st := range statuses {
		if st.Context == s.statusContext() && st.State == "success" {
			return true, ""
		}
	}
	return false, fmt.Sprintf("commit %.8s has no success status yet: %+v", sha, statuses)
}

func (s *chaosSet) statusContext() string { return "claimwarden/" + s.sts.Namespace + "/" + s.sts.Name }

// waitDone waits for done, failing at once if one of procs died.
func (s *chaosSet) waitDone(t *testing.T, procs ...*controller) {
	t.Helper()
	var why string
	err := wait.PollUntilContextTimeout(context.Background(), fixtures.Poll, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		for _, p := range procs {
			if err := p.Exited(); err != nil {
				return false, err
			}
		}
		var ok bool
		ok, why = s.done(ctx)
		return ok, nil
	})
	if err != nil {
		t.Fatalf("%s at %s: %v (last: %s)", s.sts, s.size.String(), err, why)
	}
}
