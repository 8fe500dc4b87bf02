package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/test/fixtures"
	"github.com/claimwarden/claimwarden/test/gitea"
)

// stormSet is one StatefulSet of the storm test and what its commits must
// end with.
type stormSet struct {
	sts  *appsv1.StatefulSet
	size int // Gi the claims are at (or are going to)
	pods map[string]types.UID
}

// stormRun is the storm test's repository, cluster and expected outcomes.
type stormRun struct {
	t     *testing.T
	cl    *cluster
	g     *gitea.Server
	repo  string
	ctl   *controller
	final map[string]string // "sha context" → its final state
	order []string          // the keys of final, in push order
}

// step kinds, cycled per StatefulSet and round.
const (
	stepAllowed    = iota // +1Gi: success
	stepDenied            // ×4 (+300%): max-step denies it: failure
	stepSuperseded        // +1Gi, then +2Gi mid-rollout: error, then success
	stepKinds
)

var stepNames = [stepKinds]string{"allowed", "denied", "superseded"}

// commit pushes the StatefulSet's file at sizeGi and re-creates the
// StatefulSet with that size and commit, expecting state on it.
func (r *stormRun) commit(s *stormSet, sizeGi int, state string) string {
	r.t.Helper()
	ctx := context.Background()
	size := fmt.Sprintf("%dGi", sizeGi)
	sha, err := r.g.PushCommit(ctx, r.repo, map[string]string{s.sts.Name + ".yaml": "storage: " + size + "\n"}, s.sts.Name+" "+size)
	if err != nil {
		r.t.Fatal(err)
	}
	key := sha + " " + r.context(s)
	r.final[key] = state
	r.order = append(r.order, key)
	replace(r.t, r.cl.admin, s.sts, size, sha)
	return sha
}

func (r *stormRun) context(s *stormSet) string {
	return "claimwarden/" + s.sts.Namespace + "/" + s.sts.Name
}

// start begins a step; wait ends it.
func (r *stormRun) start(s *stormSet, kind int) string {
	r.t.Helper()
	switch kind {
	case stepAllowed:
		s.size++
		return r.commit(s, s.size, "success")
	case stepDenied:
		return r.commit(s, s.size*4, "failure")
	default:
		first := r.commit(s, s.size+1, "error")
		r.waitInProgress(s, first)
		s.size += 2
		return r.commit(s, s.size, "success")
	}
}

// wait waits until the rollout of the step's last commit sha is done: Ready
// at size, or Stalled by the policy.
func (r *stormRun) wait(s *stormSet, kind int, sha string) {
	r.t.Helper()
	key := client.ObjectKeyFromObject(s.sts)
	if kind != stepDenied {
		waitRolloutDone(r.t, r.cl.admin, key, *s.sts.Spec.Replicas, fmt.Sprintf("%dGi", s.size), r.ctl)
		return
	}
	vcr := &v1alpha1.VolumeClaimRollout{}
	waitFor(r.t, "VolumeClaimRollout "+key.String()+" denied at "+sha[:8], []*controller{r.ctl}, func(ctx context.Context) (bool, error) {
		if err := r.cl.admin.Get(ctx, key, vcr); err != nil {
			return false, err
		}
		return revisionIs(vcr, sha) && conditions.IsStalled(vcr) && conditions.GetReason(vcr, meta.StalledCondition) == v1alpha1.ReasonPolicyDenied, nil
	})
}

// waitInProgress waits until the rollout works on sha and has not finished:
// a newer commit then supersedes it.
func (r *stormRun) waitInProgress(s *stormSet, sha string) {
	r.t.Helper()
	key := client.ObjectKeyFromObject(s.sts)
	vcr := &v1alpha1.VolumeClaimRollout{}
	waitFor(r.t, "VolumeClaimRollout "+key.String()+" in progress at "+sha[:8], []*controller{r.ctl}, func(ctx context.Context) (bool, error) {
		if err := r.cl.admin.Get(ctx, key, vcr); err != nil {
			return false, err
		}
		if revisionIs(vcr, sha) && conditions.IsReady(vcr) {
			return false, fmt.Errorf("the rollout of %s finished before it could be superseded", sha[:8])
		}
		return revisionIs(vcr, sha) && vcr.Status.Counts.Updating > 0, nil
	})
}

func revisionIs(vcr *v1alpha1.VolumeClaimRollout, sha string) bool {
	return vcr.Status.Proposal != nil && strings.HasSuffix(vcr.Status.Proposal.Source.Revision, sha)
}

// checkFinal reads every status Gitea holds for each commit and context the
// run pushed: each must have exactly one final (non-pending) status, the
// expected one, and last; and no status may be posted twice in a row.
// It returns the number of statuses read.
func (r *stormRun) checkFinal(ctx context.Context) (int, error) {
	var problems []string
	n := 0
	for _, key := range r.order {
		sha, statusContext, _ := strings.Cut(key, " ")
		all, err := r.g.Statuses(ctx, r.repo, sha)
		if err != nil {
			return 0, err
		}
		mine := ofContext(all, statusContext)
		n += len(mine)
		problems = append(problems, finalProblems(mine, sha, statusContext, r.final[key])...)
	}
	if len(problems) > 0 {
		return n, fmt.Errorf("%s", strings.Join(problems, "\n"))
	}
	return n, nil
}

func ofContext(all []gitea.CommitStatus, statusContext string) []gitea.CommitStatus {
	var mine []gitea.CommitStatus
	for _, s := range all {
		if s.Context == statusContext {
			mine = append(mine, s)
		}
	}
	return mine
}

// finalProblems says what is wrong with the statuses one context of commit
// sha got, in order: not exactly one final (non-pending) state, not want,
// not last, or a status posted twice in a row.
func finalProblems(mine []gitea.CommitStatus, sha, statusContext, want string) []string {
	var problems []string
	finals := 0
	for i, s := range mine {
		if s.State != "pending" {
			finals++
		}
		if i > 0 && s == mine[i-1] {
			problems = append(problems, fmt.Sprintf("%s %s: %s %q posted twice in a row", sha[:8], statusContext, s.State, s.Description))
		}
	}
	switch {
	case len(mine) == 0:
		problems = append(problems, fmt.Sprintf("%s %s: no status, want %s", sha[:8], statusContext, want))
	case finals != 1 || mine[len(mine)-1].State != want:
		problems = append(problems, fmt.Sprintf("%s %s: statuses %s, want exactly one final, %s, last", sha[:8], statusContext, states(mine), want))
	}
	return problems
}

func states(ss []gitea.CommitStatus) string {
	var out []string
	for _, s := range ss {
		out = append(out, fmt.Sprintf("%s %q", s.State, s.Description))
	}
	return "[" + strings.Join(out, ", ") + "]"
}

// newStormSet creates a ready StatefulSet at 4Gi on commit sha.
func (r *stormRun) newStormSet(ns, name, sha string) *stormSet {
	r.t.Helper()
	sts := fixtures.StatefulSet(ns, name, 2, class, "4Gi")
	sts.Annotations = map[string]string{v1alpha1.RepositoryAnnotation: r.g.URL + "/" + r.g.User + "/" + r.repo + ".git", v1alpha1.RevisionAnnotation: "main@sha1:" + sha}
	return &stormSet{sts: sts, size: 4, pods: createReady(r.t, r.cl.admin, sts)}
}
