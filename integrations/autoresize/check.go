package autoresize

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/integrations/gitedit"
	"github.com/claimwarden/claimwarden/integrations/gitstatus"
	"github.com/claimwarden/claimwarden/integrations/pullrequest"
	"github.com/claimwarden/claimwarden/integrations/usage"
	"github.com/claimwarden/claimwarden/policies"
	"github.com/claimwarden/claimwarden/reconciler/diff"
	"github.com/claimwarden/claimwarden/reconciler/gate"
	"github.com/claimwarden/claimwarden/reconciler/proposal"
)

// Event reasons, on the StatefulSet.
const (
	ReasonProposed = "AutoresizeProposed"
	ReasonDenied   = "AutoresizeDenied"
	ReasonFailed   = "AutoresizeFailed"
)

// KeyPrefix starts the key of every autoresize pull request:
// autoresize/<namespace>/<name>, its branch claimwarden/autoresize/...
const KeyPrefix = "autoresize/"

// check is one StatefulSet's check.
type check struct {
	c      *Controller
	rule   *Rule
	sts    *appsv1.StatefulSet
	src    source
	claims []corev1.PersistentVolumeClaim
	used   map[string]usage.Usage
	now    time.Time
}

// run decides and proposes, writing what it did into st.
func (j *check) run(ctx context.Context, st *v1alpha1.AutoresizeStatus) {
	where, err := Locate(ctx, j.c.Reader, j.src.Source, j.c.NoCrossNamespaceRefs)
	if err != nil {
		st.Message = err.Error()
		return
	}
	if !j.rule.allows(where.Repository) {
		st.Message = fmt.Sprintf("the repository %s is not among autoresize's repositoryPrefixes for namespace %s: no pull request is opened there",
			proposal.RepositoryURL(where.Repository), j.sts.Namespace)
		return
	}
	repo, err := gitstatus.ParseRepositoryURL(where.Repository)
	if err != nil {
		st.Message = err.Error()
		return
	}
	host, err := j.c.Proposers(repo)
	if err != nil {
		j.fail(st, err)
		return
	}
	if where.Branch == DefaultBranch {
		if where.Branch, err = host.DefaultBranch(ctx, repo.Owner, repo.Name); err != nil {
			j.fail(st, err)
			return
		}
	}
	key := KeyPrefix + j.sts.Namespace + "/" + j.sts.Name
	last, err := host.Last(ctx, repo.Owner, repo.Name, key)
	if err != nil {
		j.fail(st, err)
		return
	}
	j.c.Metrics.seen(key, last)
	if last != nil {
		st.PullRequest, st.State = last.URL, string(last.State)
	}

	d, err := Decide(ctx, j.c.Policies, State{
		Live: j.sts, Claims: j.claims, Usage: j.used, SinceLast: sinceClosed(last, j.now),
		Facts: gate.ClusterFacts(j.c.Client, j.sts.Namespace, policies.Source(j.src.Source)),
	}, j.src.IgnoredLabels)
	if err != nil {
		j.fail(st, err)
		return
	}
	if len(d.Growths) == 0 {
		st.Message = nothingText(d.Denied, last, j.now) + aheadText(j.sts, j.claims, last)
		return
	}
	req := Request{StatefulSet: keyOf(j.sts), Source: j.src.Source, Growths: d.Growths, Growth: d.Assessment.Growth,
		Context: gitstatus.StatusContext(j.c.StatusContextPrefix, j.sts.Namespace, j.sts.Name)}
	if d.Assessment.Verdict.Denied() {
		st.Message = fmt.Sprintf("growing %s is denied: %s", req.sizes(), d.Assessment.Denial())
		j.c.Recorder.Eventf(j.sts, nil, j.src.Source, corev1.EventTypeWarning, ReasonDenied, "Autoresize", "%s", st.Message)
		return
	}

	files, err := j.edit(ctx, host, repo, where, d.Growths)
	if err != nil {
		j.fail(st, err)
		return
	}
	st.Proposed = req.sizes()
	if len(files) == 0 {
		st.Message = fmt.Sprintf("Git sets %s already: waiting for %s to apply it", req.sizes(), toolText(j.src.Source))
		return
	}
	req.GrownNow, err = j.growNow(ctx, d.Growths)
	if err != nil {
		j.fail(st, err)
	}
	if last != nil && last.State == pullrequest.Open && len(req.GrownNow) == 0 && j.onBranch(ctx, host, repo, key, files) {
		st.Message = fmt.Sprintf("pull request %s proposes %s", last.URL, req.sizes())
		return
	}
	pr, err := host.Propose(ctx, pullrequest.Change{
		Owner: repo.Owner, Repo: repo.Name, Base: where.Branch, Key: key, Files: files,
		Title: req.Title(), Body: req.Body(), Message: req.Message(),
	})
	if err != nil {
		j.fail(st, err)
		return
	}
	j.c.Metrics.proposed(last, pr)
	st.PullRequest, st.State = pr.URL, string(pr.State)
	st.Message = fmt.Sprintf("pull request %s proposes %s", pr.URL, req.sizes())
	if len(req.GrownNow) > 0 {
		st.Message = fmt.Sprintf("grew %s now, before the merge (emergency); %s", strings.Join(req.GrownNow, ", "), st.Message)
	}
	j.c.Recorder.Eventf(j.sts, nil, j.src.Source, corev1.EventTypeNormal, ReasonProposed, "Autoresize", "proposed %s in pull request %s", req.sizes(), pr.URL)
	j.c.Log.Info("proposed a resize", "statefulset", keyOf(j.sts), "sizes", req.sizes(), "pullRequest", pr.URL, "grownNow", req.GrownNow)
}

// edit is the change of files in Git for every growth, each edit made on
// the files as the previous ones left them.
func (j *check) edit(ctx context.Context, host pullrequest.Proposer, repo gitstatus.Repository, where Where, growths []Growth) ([]pullrequest.File, error) {
	f := &edited{base: branchFiles{host: host, repo: repo, ref: where.Branch}, files: map[string][]byte{}}
	var order []string
	for _, g := range growths {
		t := gitedit.Target{Namespace: j.sts.Namespace, StatefulSet: j.sts.Name, Template: g.Template}
		out, err := Edit(ctx, f, where, t, g.Index, g.To.String(), j.sts.Annotations[v1alpha1.SizeValueAnnotation])
		if err != nil {
			return nil, err
		}
		for _, file := range out {
			if _, ok := f.files[file.Path]; !ok {
				order = append(order, file.Path)
			}
			f.files[file.Path] = file.Content
		}
	}
	out := make([]pullrequest.File, 0, len(order))
	for _, p := range order {
		out = append(out, pullrequest.File{Path: p, Content: f.files[p]})
	}
	return out, nil
}

// onBranch reports whether the pull request's branch holds files already:
// the open pull request proposes this change, and is left as it is (a
// push per check would notify its reviewers for nothing).
func (j *check) onBranch(ctx context.Context, host pullrequest.Proposer, repo gitstatus.Repository, key string, files []pullrequest.File) bool {
	for _, f := range files {
		got, err := host.File(ctx, repo.Owner, repo.Name, pullrequest.BranchPrefix+key, f.Path)
		if err != nil || !bytes.Equal(got, f.Content) {
			return false
		}
	}
	return true
}

// fail reports an error of the check (a Git host, a policy engine or the
// cache that failed) as a Warning event and in the status.
func (j *check) fail(st *v1alpha1.AutoresizeStatus, err error) {
	j.c.Log.Error(err, "autoresize failed", "statefulset", keyOf(j.sts))
	st.Message = "autoresize failed: " + err.Error()
	j.c.Recorder.Eventf(j.sts, nil, j.src.Source, corev1.EventTypeWarning, ReasonFailed, "Autoresize", "%s", st.Message)
}

// nothingText says why nothing is proposed: the denied questions, or the
// cooldown a closed pull request started.
func nothingText(denied []string, last *pullrequest.PullRequest, now time.Time) string {
	msg := "no claim needs to grow"
	if since := sinceClosed(last, now); since != nil {
		msg += fmt.Sprintf(" (the last pull request was %s %s ago; the autoresize policy waits autoresize_cooldown_seconds after it)",
			last.State, since.Round(time.Second))
	}
	if len(denied) > 0 {
		msg = "the autoresize question was denied: " + strings.Join(denied, "; ")
	}
	return msg
}

// aheadText says which claims are larger than their template while the
// pull request that makes Git say so is open: grown before the merge.
func aheadText(sts *appsv1.StatefulSet, claims []corev1.PersistentVolumeClaim, last *pullrequest.PullRequest) string {
	if last == nil || last.State != pullrequest.Open {
		return ""
	}
	var ahead []string
	for _, pvc := range claims {
		tmpl, ok := diff.TemplateOf(pvc.Name, sts.Name)
		if !ok {
			continue
		}
		size := templateSize(sts, tmpl)
		if req := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; !size.IsZero() && req.Cmp(size) > 0 {
			ahead = append(ahead, pvc.Name)
		}
	}
	if len(ahead) == 0 {
		return fmt.Sprintf("; pull request %s is open", last.URL)
	}
	return fmt.Sprintf("; %s grown before the merge of pull request %s (emergency)", strings.Join(ahead, ", "), last.URL)
}

// sinceClosed is how long ago the last pull request was merged or closed:
// the policies' cooldown starts then. An open one starts none: it is
// updated, not duplicated.
func sinceClosed(last *pullrequest.PullRequest, now time.Time) *time.Duration {
	if last == nil || last.State == pullrequest.Open || last.ClosedAt.IsZero() {
		return nil
	}
	d := max(now.Sub(last.ClosedAt), 0)
	return &d
}

// branchFiles reads one branch of a repository through its host.
type branchFiles struct {
	host pullrequest.Proposer
	repo gitstatus.Repository
	ref  string
}

func (b branchFiles) File(ctx context.Context, path string) ([]byte, error) {
	return b.host.File(ctx, b.repo.Owner, b.repo.Name, b.ref, path)
}

func (b branchFiles) Files(ctx context.Context, dir string) ([]string, error) {
	return b.host.Files(ctx, b.repo.Owner, b.repo.Name, b.ref, dir)
}

// edited is a branch's files with the edits made so far on top.
type edited struct {
	base  Files
	files map[string][]byte
}

func (e *edited) File(ctx context.Context, path string) ([]byte, error) {
	if b, ok := e.files[path]; ok {
		return b, nil
	}
	return e.base.File(ctx, path)
}

func (e *edited) Files(ctx context.Context, dir string) ([]string, error) {
	return e.base.Files(ctx, dir)
}
