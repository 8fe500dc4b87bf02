package autoresize

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/integrations/commitstatus"
	"github.com/claimwarden/claimwarden/integrations/gitedit"
	"github.com/claimwarden/claimwarden/integrations/githost"
	"github.com/claimwarden/claimwarden/integrations/pullrequest"
	"github.com/claimwarden/claimwarden/integrations/usage"
	"github.com/claimwarden/claimwarden/policies"
	"github.com/claimwarden/claimwarden/reconciler/proposal"
	"github.com/claimwarden/claimwarden/reconciler/source"
)

// Event reasons, on the StatefulSet.
const (
	ReasonProposed = "AutoresizeProposed"
	ReasonDenied   = "AutoresizeDenied"
	ReasonFailed   = "AutoresizeFailed"
)

// KeyPrefix starts the key of every autoresize pull request (Key), its
// branch claimwarden/autoresize/...
const KeyPrefix = "autoresize/"

// Key is the key of the pull request of StatefulSet sts in cluster
// (Options.Cluster): autoresize/<namespace>/<name> in claimwarden's own,
// autoresize/<cluster>/<namespace>/<name> in a spoke, so that StatefulSets
// of one name in two clusters applied from one repository are two pull
// requests.
func Key(cluster string, sts types.NamespacedName) string {
	if cluster == "" {
		return KeyPrefix + sts.Namespace + "/" + sts.Name
	}
	return KeyPrefix + cluster + "/" + sts.Namespace + "/" + sts.Name
}

// job is one StatefulSet's check, from its usage to its pull request.
type job struct {
	c      *Controller
	rule   *Rule
	sts    *appsv1.StatefulSet
	src    origin
	claims []corev1.PersistentVolumeClaim
	used   map[string]usage.Usage
	now    time.Time
	// tools reads and locates the tool objects, repos asks the Git host
	// about repositories (the round's, or the check's own).
	tools *toolMemo
	repos *repoMemo
	// skipped says why no pull request can be opened, when none can.
	skipped string
	// err is what failed, for the StatefulSet's back-off.
	err error
}

// run decides and proposes, writing what it did into st: where Git sets
// the StatefulSet's sizes, what the policies decide, then the pull
// request (and the emergency growth). The Git host is asked only when the
// policies would grow a claim or a pull request of claimwarden's is open
// (atRest): every opted-in StatefulSet is checked every interval, and the
// host's rate limit is the fleet's.
func (j *job) run(ctx context.Context, st *v1alpha1.AutoresizeStatus) {
	g := j.where(ctx)
	if g == nil {
		st.Message = j.skipped
		return
	}
	settings, cluster := j.c.Rollout.Ahead(ctx, j.sts, policies.Source(j.src.Source), j.claims)
	state := State{Live: j.sts, Claims: j.claims, Usage: j.used, Settings: settings, Cluster: cluster}
	d, err := Decide(ctx, j.c.Policies, state, j.src.IgnoredLabels)
	if err != nil {
		j.fail(st, err)
		return
	}
	prior := j.c.recorded(ctx, j.sts)
	if atRest(d, prior) {
		if prior != nil {
			st.PullRequest, st.State = prior.PullRequest, prior.State
		}
		st.Message = nothingText(d.Denied, d.Undecided, nil, j.now)
		return
	}
	if err := j.ask(ctx, g, prior); err != nil {
		j.fail(st, err)
		return
	}
	if g.last != nil {
		st.PullRequest, st.State = g.last.URL, string(g.last.State)
	}
	if state.SinceLast = sinceClosed(g.last, j.now); state.SinceLast != nil {
		// Asked as if no pull request had closed, the policies are asked
		// again knowing when the last one did (the cooldown).
		if d, err = Decide(ctx, j.c.Policies, state, j.src.IgnoredLabels); err != nil {
			j.fail(st, err)
			return
		}
	}
	if len(d.Growths) == 0 {
		st.Message = nothingText(d.Denied, d.Undecided, g.last, j.now) + aheadText(j.sts, j.claims, g.last)
		return
	}
	if len(d.Undecided) > 0 {
		defer func() { st.Message += "; " + undecidedText(d.Undecided) }()
	}
	req := Request{StatefulSet: keyOf(j.sts), Source: j.src.Source, Growths: d.Growths, Growth: d.Assessment.Growth,
		Context: commitstatus.StatusContext(j.c.StatusContextPrefix, j.sts.Namespace, j.sts.Name)}
	st.Proposed = req.sizes()
	if d.Assessment.Verdict.Denied() {
		st.Message = fmt.Sprintf("growing %s is denied: %s", req.sizes(), d.Assessment.Denial())
		j.c.Recorder.Eventf(j.sts, nil, j.src.Source, corev1.EventTypeWarning, ReasonDenied, "Autoresize", "%s", st.Message)
		return
	}
	if err := j.propose(ctx, st, g, req); err != nil {
		j.fail(st, err)
	}
}

// gitSide is where Git sets a StatefulSet's sizes and its pull request.
type gitSide struct {
	where Where
	repo  githost.Repository
	host  pullrequest.Proposer
	key   string
	last  *pullrequest.PullRequest
	// chartRepo is the chart's repository when it is not the pull
	// request's (the operator allows it).
	chartRepo *githost.Repository
}

// atRest reports whether the policies, asked as if no pull request had
// ever closed (no cooldown), grow nothing, and the status records no open
// pull request of claimwarden's: then the Git host is not asked. A pull
// request recorded open is asked after at every check, so that its merge
// or close is seen.
func atRest(d Decision, prior *v1alpha1.AutoresizeStatus) bool {
	return len(d.Growths) == 0 && (prior == nil || prior.PullRequest == "" || prior.State != string(pullrequest.Open))
}

// where is where the StatefulSet's tool reads it from in Git, without
// asking the Git host; nil, saying why in j.skipped, where no pull
// request can be opened (no branch, a repository the operator does not
// allow).
func (j *job) where(ctx context.Context) *gitSide {
	where, err := j.tools.locate(ctx, j.c, j.src.Applier)
	if err != nil {
		j.skipped = err.Error()
		return nil
	}
	if !j.rule.allows(where.Repository) {
		j.skipped = fmt.Sprintf("the repository %s is not among autoresize's repositoryPrefixes for namespace %s: no pull request is opened there",
			proposal.RepositoryURL(where.Repository), j.sts.Namespace)
		return nil
	}
	repo, err := githost.ParseRepositoryURL(where.Repository)
	if err != nil {
		j.skipped = err.Error()
		return nil
	}
	g := &gitSide{where: where, repo: repo, key: Key(j.c.Cluster, keyOf(j.sts))}
	if where.ChartRepository != "" {
		if g.chartRepo = j.chartRepository(where); g.chartRepo == nil {
			return nil
		}
	}
	return g
}

// ask fills g from the Git host: its Proposer, the branch a tool that
// follows the default branch reads, and the StatefulSet's last pull
// request. A pull request prior records open is looked up in the round's
// listing of the repository's open ones (shared by every StatefulSet
// whose tool follows it); one the listing no longer holds, or a host that
// lists none, is asked after on its own (Last: merged or closed, and
// when, which starts the cooldown).
func (j *job) ask(ctx context.Context, g *gitSide, prior *v1alpha1.AutoresizeStatus) error {
	var err error
	if g.host, err = j.c.Proposers(g.repo); err != nil {
		return err
	}
	if g.where.Branch == source.DefaultBranch {
		if g.where.Branch, err = j.repos.defaultBranch(ctx, g.host, g.repo); err != nil {
			return err
		}
	}
	if prior != nil && prior.State == string(pullrequest.Open) {
		g.last = j.repos.openPull(ctx, g.host, g.repo, g.key)
	}
	if g.last == nil {
		if g.last, err = g.host.Last(ctx, g.repo.Owner, g.repo.Name, g.key); err != nil {
			return err
		}
	}
	j.c.Metrics.seen(g.key, g.last)
	return nil
}

// chartRepository is the chart's own repository, which the operator must
// allow as the pull request's (its files are read with the same
// credentials); nil, saying why in j.skipped, where it does not.
func (j *job) chartRepository(where Where) *githost.Repository {
	if !j.rule.allows(where.ChartRepository) {
		j.skipped = fmt.Sprintf("the chart's repository %s is not among autoresize's repositoryPrefixes for namespace %s: it is not read",
			proposal.RepositoryURL(where.ChartRepository), j.sts.Namespace)
		return nil
	}
	repo, err := githost.ParseRepositoryURL(where.ChartRepository)
	if err != nil {
		j.skipped = err.Error()
		return nil
	}
	return &repo
}

// chartFiles reads the chart where it is not on the pull request's
// branch, f: in its own repository's branch, or in its HelmChart's
// artifact. Read only when there is an edit to make, not at every check;
// release frees what it holds.
func (j *job) chartFiles(ctx context.Context, g *gitSide, f Files) (chart Files, release func(), err error) {
	switch {
	case g.where.HelmChart != nil:
		return j.chartArtifact(ctx, *g.where.HelmChart)
	case g.chartRepo == nil:
		return f, func() {}, nil
	}
	host, err := j.c.Proposers(*g.chartRepo)
	if err != nil {
		return nil, nil, err
	}
	branch := g.where.ChartBranch
	if branch == source.DefaultBranch {
		if branch, err = host.DefaultBranch(ctx, g.chartRepo.Owner, g.chartRepo.Name); err != nil {
			return nil, nil, err
		}
	}
	return branchFiles{host: host, repo: *g.chartRepo, ref: branch}, func() {}, nil
}

// propose edits Git's files, opens or updates the pull request, and then
// grows what must grow now; an open one that proposes the change already
// is left as it is (a push per check would notify its reviewers for
// nothing), also when the growth now is refused or failed: the error says
// so, and the next check tries the growth again, not the pull request.
// Git comes first: a claim grows now only once the pull request says its
// size, so a merge racing the update never leaves the claims larger than
// what was merged.
func (j *job) propose(ctx context.Context, st *v1alpha1.AutoresizeStatus, g *gitSide, req Request) error {
	files, err := j.edit(ctx, g, req.Growths)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		st.Message = fmt.Sprintf("Git sets %s already: waiting for %s to apply it", req.sizes(), toolText(j.src.Source)) + byVersionText(g.where)
		return nil
	}
	if files, req.ChartBump, err = BumpChart(ctx, branchFiles{host: g.host, repo: g.repo, ref: g.where.Branch}, g.where, files); err != nil {
		return err
	}
	now, held, grewErr := j.planNow(ctx, req.Growths)
	for _, n := range now {
		req.GrownNow = append(req.GrownNow, n.name)
	}
	open := g.last != nil && g.last.State == pullrequest.Open
	var made string
	if open {
		made = j.c.recordedCommit(ctx, j.sts, g.last.URL)
	}
	// Ours: its branch's head is the commit claimwarden made; anything
	// else on it is rebuilt away, and the body says so.
	ours := open && pullrequest.SameCommit(g.last.Head, made)
	if ours && (grewErr != nil || j.c.saysNow(g.key, req.GrownNow)) && j.onBranch(ctx, g, files) {
		st.Commit = made
	} else {
		body := req.Body()
		if open && !ours {
			body += rebuiltText(g.last.Head, made)
		}
		pr, err := g.host.Propose(ctx, pullrequest.Change{
			Owner: g.repo.Owner, Repo: g.repo.Name, Base: g.where.Branch, Key: g.key, Files: files,
			Title: req.Title(), Body: body, Message: req.Message(),
		})
		if err != nil {
			return err
		}
		j.c.sayNow(g.key, req.GrownNow)
		j.c.Metrics.proposed(g.last, pr)
		st.PullRequest, st.State, st.Commit = pr.URL, string(pr.State), pr.Head
		j.c.Recorder.Eventf(j.sts, nil, j.src.Source, corev1.EventTypeNormal, ReasonProposed, "Autoresize", "proposed %s in pull request %s", req.sizes(), pr.URL)
		j.c.Log.Info("proposed a resize", "statefulset", keyOf(j.sts), "sizes", req.sizes(), "pullRequest", pr.URL, "growingNow", req.GrownNow)
	}
	st.Message = fmt.Sprintf("pull request %s proposes %s", st.PullRequest, req.sizes()) + heldText(held)
	grown, err := j.growNow(ctx, now)
	if len(grown) > 0 {
		st.Message = fmt.Sprintf("grew %s now, before the merge (emergency); %s", strings.Join(grown, ", "), st.Message)
	}
	if grewErr == nil {
		grewErr = err
	}
	return grewErr
}

// edit is the change of files in Git for every growth, each edit made on
// the files as the previous ones left them.
func (j *job) edit(ctx context.Context, g *gitSide, growths []Growth) ([]pullrequest.File, error) {
	f := &edited{base: branchFiles{host: g.host, repo: g.repo, ref: g.where.Branch}, files: map[string][]byte{}}
	chart, release, err := j.chartFiles(ctx, g, f)
	if err != nil {
		return nil, err
	}
	defer release()
	var order []string
	for _, growth := range growths {
		t := gitedit.Target{Namespace: j.sts.Namespace, StatefulSet: j.sts.Name, Template: growth.Template}
		out, err := Edit(ctx, j.c.Renderer, f, chart, g.where, t, growth.Index, growth.To.String(), j.sts.Annotations[v1alpha1.SizeValueAnnotation])
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
// push per check would notify its reviewers for nothing). Asked only when
// the branch's head is the commit claimwarden made: a commit pushed on top
// may hold anything besides these files.
func (j *job) onBranch(ctx context.Context, g *gitSide, files []pullrequest.File) bool {
	for _, f := range files {
		got, err := g.host.File(ctx, g.repo.Owner, g.repo.Name, pullrequest.BranchPrefix+g.key, f.Path)
		if err != nil || !bytes.Equal(got, f.Content) {
			return false
		}
	}
	return true
}

// rebuiltText tells the pull request's reviewers that its branch held a
// commit claimwarden did not make (or has no record of making: made is
// ""), which the rebuild from the base removed.
func rebuiltText(head, made string) string {
	if head == "" {
		return ""
	}
	if made == "" {
		return fmt.Sprintf("\n\nThe branch was rebuilt: it held commit %s, which claimwarden has no record of making.", head)
	}
	return fmt.Sprintf("\n\nThe branch was rebuilt: it held commit %s that claimwarden did not make (it made %s).", head, made)
}

// fail reports an error of the check (a Git host, a policy engine or the
// cache that failed) as a Warning event and in the status.
// A Git host in its back-off is said as it is: waiting is not a failure of
// the StatefulSet's, and its message stays the same until the next try.
func (j *job) fail(st *v1alpha1.AutoresizeStatus, err error) {
	if wait := (*HostWait)(nil); errors.As(err, &wait) {
		st.Message = wait.Error()
		return
	}
	j.err = err
	j.c.Log.Error(err, "autoresize failed", "statefulset", keyOf(j.sts))
	st.Message = "autoresize failed: " + err.Error()
	j.c.Recorder.Eventf(j.sts, nil, j.src.Source, corev1.EventTypeWarning, ReasonFailed, "Autoresize", "%s", st.Message)
}

// nothingText says why nothing is proposed: the claims undecided, and the
// denied questions or the cooldown a closed pull request started.
func nothingText(denied, undecided []string, last *pullrequest.PullRequest, now time.Time) string {
	msg := "no claim needs to grow"
	if len(undecided) > 0 {
		msg = "no other claim needs to grow"
	}
	if sinceClosed(last, now) != nil {
		// The time of the close, not the time since: a status that says
		// the same at every check is not written again.
		msg += fmt.Sprintf(" (the last pull request was %s at %s; the autoresize policy waits autoresize_cooldown_seconds after it)",
			last.State, last.ClosedAt.UTC().Truncate(time.Second).Format(time.RFC3339))
	}
	if len(denied) > 0 {
		msg = "the autoresize question was denied: " + strings.Join(denied, "; ")
	}
	if len(undecided) > 0 {
		msg = undecidedText(undecided) + "; " + msg
	}
	return msg
}

// undecidedText says which claims were not decided on, and why.
func undecidedText(undecided []string) string {
	return "no decision for " + strings.Join(undecided, "; ")
}

// aheadText says which claims are larger than their template while the
// pull request that makes Git say so is open: grown before the merge.
func aheadText(sts *appsv1.StatefulSet, claims []corev1.PersistentVolumeClaim, last *pullrequest.PullRequest) string {
	if last == nil || last.State != pullrequest.Open {
		return ""
	}
	ahead := aheadOf(sts, claims, "")
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
	repo githost.Repository
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
