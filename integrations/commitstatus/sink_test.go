package commitstatus

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/integrations/githost"
	"github.com/claimwarden/claimwarden/reconciler/outcome"
	"github.com/claimwarden/claimwarden/test/testenv"
)

const (
	sinkRepoURL = "https://git.example.com/shop/web.git"
	shaA        = "aaaaaaaaaaaa0123456789abcdef0123456789ab"
	shaB        = "bbbbbbbbbbbb0123456789abcdef0123456789ab"
)

var webSTS = types.NamespacedName{Namespace: "shop", Name: "web"}

// newSink builds a sink on h with short delays and runs it until the test
// ends; mod adjusts options.
func newSink(t *testing.T, h Provider, mod func(*CommitStatusSinkOptions)) *CommitStatusSink {
	t.Helper()
	o := CommitStatusSinkOptions{
		Reporter: ReporterOptions{
			Providers: func(githost.Repository) (Provider, error) { return h, nil },
			BaseDelay: 2 * time.Millisecond,
			MaxDelay:  20 * time.Millisecond,
		},
		TargetURL: "https://ci.example.com/rollouts",
	}
	if mod != nil {
		mod(&o)
	}
	s := NewCommitStatusSink(o)
	testenv.RunT(t, s.reporter)
	return s
}

// reconciled is the outcome of a reconcile of webSTS on commit sha.
func reconciled(sha string, state outcome.State, msg string) outcome.Outcome {
	return outcome.Outcome{
		Action:      outcome.Reconciled,
		StatefulSet: webSTS,
		Source:      v1alpha1.Source{Kind: "Kustomization", Namespace: "flux-system", Name: "apps", Repository: sinkRepoURL, Revision: "main@sha1:" + sha},
		State:       state,
		Message:     msg,
	}
}

// sinkTarget is where the sink posts webSTS's status on sha.
func sinkTarget(sha string) Target {
	return Target{Repo: githost.Repository{Host: "git.example.com", Path: "shop/web"}, SHA: sha, Context: "claimwarden/shop/web"}
}

// recordOf is what a VolumeClaimRollout records after a post of s on sha.
func recordOf(sha string, state outcome.State, desc string) *v1alpha1.CommitStatus {
	return &v1alpha1.CommitStatus{Repository: "git.example.com/shop/web", Revision: sha, Context: "claimwarden/shop/web", State: string(state), Description: desc, PostedAt: metav1.Now()}
}

func TestCommitStatusSinkPostsOnlyReconciledCommits(t *testing.T) {
	h := newFakeProvider(nil)
	s := newSink(t, h, nil)
	ctx := context.Background()

	for _, a := range []outcome.Action{outcome.Converged, outcome.ConvergeFailed} {
		o := reconciled(shaA, outcome.Success, "re-created")
		o.Action = a
		s.Publish(ctx, o)
	}
	noRepo := reconciled(shaA, outcome.Success, "no repository")
	noRepo.Source.Repository = ""
	s.Publish(ctx, noRepo)
	s.Publish(ctx, reconciled(shaA, outcome.Pending, "1/3 claims compatible"))

	// The provider records a call before the reporter counts the post
	// done: wait for both, or a busy machine sees the post in flight.
	waitUntil(t, "the pending status posted", func() bool {
		return len(h.callsFor(sinkTarget(shaA), true)) == 1 && s.reporter.Pending() == 0
	})
	if len(h.allCalls()) != 1 {
		t.Fatalf("posts = %v, want only the Reconciled one", postedStates(h.allCalls()))
	}
	got := h.allCalls()[0].Status
	want := Status{State: Pending, Context: "claimwarden/shop/web", Description: "1/3 claims compatible", TargetURL: "https://ci.example.com/rollouts"}
	if got != want {
		t.Errorf("posted %+v, want %+v", got, want)
	}
}

func TestCommitStatusSinkTruncatesTheMessage(t *testing.T) {
	h := newFakeProvider(nil)
	s := newSink(t, h, nil)
	s.Publish(context.Background(), reconciled(shaA, outcome.Error, strings.Repeat("x", 300)))
	waitUntil(t, "the status posted", func() bool { return len(h.callsFor(sinkTarget(shaA), true)) == 1 })
	if d := h.allCalls()[0].Status.Description; d != outcome.ShortDescription(strings.Repeat("x", 300)) {
		t.Errorf("description %q is not the truncated message", d)
	}
}

func TestCommitStatusSinkSupersedesPendingRevision(t *testing.T) {
	h := newFakeProvider(nil)
	s := newSink(t, h, nil)
	ctx := context.Background()

	s.Publish(ctx, reconciled(shaA, outcome.Pending, "rollout started"))
	waitUntil(t, "A pending", func() bool { return len(h.callsFor(sinkTarget(shaA), true)) == 1 })
	for range 3 { // level-triggered: every reconcile publishes again
		s.Publish(ctx, reconciled(shaB, outcome.Pending, "rollout started"))
	}
	waitUntil(t, "B pending", func() bool { return len(h.callsFor(sinkTarget(shaB), true)) == 1 })
	waitUntil(t, "A superseded", func() bool { return len(h.callsFor(sinkTarget(shaA), true)) == 2 })

	want := "superseded by bbbbbbbbbbbb before its rollout finished"
	if got := postedStates(h.callsFor(sinkTarget(shaA), true)); len(got) != 2 || got[1] != "error:"+want {
		t.Errorf("A got %q, want pending then error:%s", got, want)
	}
	// B finishes; a later revision supersedes nothing.
	s.Publish(ctx, reconciled(shaB, outcome.Success, "3/3 claims compatible"))
	s.Publish(ctx, reconciled(shaA, outcome.Pending, "rollout started"))
	waitUntil(t, "A pending again", func() bool { return len(h.callsFor(sinkTarget(shaA), true)) == 3 })
	if got := postedStates(h.callsFor(sinkTarget(shaB), true)); len(got) != 2 || got[1] != "success:3/3 claims compatible" {
		t.Errorf("B got %q, want pending then success only", got)
	}
}

func TestCommitStatusSinkSupersedesRecordedRevisionAfterRestart(t *testing.T) {
	h := newFakeProvider(nil)
	s := newSink(t, h, nil)
	ctx := context.Background()

	// A restarted sink remembers nothing: the record says A was pending.
	o := reconciled(shaB, outcome.Pending, "rollout started")
	o.Recorded = recordOf(shaA, outcome.Pending, "rollout started")
	s.Publish(ctx, o)
	s.Publish(ctx, o)
	waitUntil(t, "A superseded", func() bool { return len(h.callsFor(sinkTarget(shaA), true)) == 1 })
	waitUntil(t, "B pending", func() bool { return len(h.callsFor(sinkTarget(shaB), true)) == 1 })
	if got := postedStates(h.callsFor(sinkTarget(shaA), true)); got[0] != "error:superseded by bbbbbbbbbbbb before its rollout finished" {
		t.Errorf("A got %q", got)
	}

	// A record of a finished revision is not superseded.
	h2 := newFakeProvider(nil)
	s2 := newSink(t, h2, nil)
	o.Recorded = recordOf(shaA, outcome.Success, "3/3 claims compatible")
	s2.Publish(ctx, o)
	waitUntil(t, "B pending", func() bool { return len(h2.callsFor(sinkTarget(shaB), true)) == 1 })
	if got := h2.callsFor(sinkTarget(shaA), false); len(got) != 0 {
		t.Errorf("a finished revision was posted again: %q", postedStates(got))
	}
}

func TestCommitStatusSinkSeedsFromRecordAfterRestart(t *testing.T) {
	h := newFakeProvider(nil)
	s := newSink(t, h, nil)
	ctx := context.Background()

	// What the previous process posted and recorded, reported again.
	o := reconciled(shaA, outcome.Pending, "1/3 claims compatible")
	o.Recorded = recordOf(shaA, outcome.Pending, "1/3 claims compatible")
	s.Publish(ctx, o)
	s.Publish(ctx, o)
	// Nothing queued: a status the host already shows is not posted again
	// (had it been queued, it is then either outstanding or posted below).
	if n := s.reporter.Pending(); n != 0 {
		t.Fatalf("Pending = %d after reporting the recorded status, want 0", n)
	}
	// The next change is posted, and is the only post.
	s.Publish(ctx, reconciled(shaA, outcome.Success, "3/3 claims compatible"))
	waitUntil(t, "success posted", func() bool { return len(h.callsFor(sinkTarget(shaA), true)) >= 1 && s.reporter.Pending() == 0 })
	if got := postedStates(h.allCalls()); len(got) != 1 || got[0] != "success:3/3 claims compatible" {
		t.Errorf("posts = %q, want only the success: the recorded pending was posted again", got)
	}

	// A record of another context (another prefix) is no seed.
	h2 := newFakeProvider(nil)
	s2 := newSink(t, h2, nil)
	o.Recorded.Context = "other/shop/web"
	s2.Publish(ctx, o)
	waitUntil(t, "pending posted", func() bool { return len(h2.callsFor(sinkTarget(shaA), true)) == 1 })
}

// A process killed after the host stored success and before it was
// recorded: the restarted sink's record says pending, the host shows
// success, so success is not posted a second time.
func TestCommitStatusSinkAsksTheHostAfterRestart(t *testing.T) {
	h := &readingProvider{fakeProvider: newFakeProvider(nil)}
	h.show(sinkTarget(shaA), Status{State: Success, Description: "3/3 claims compatible"})
	s := newSink(t, h, nil)
	ctx := context.Background()

	o := reconciled(shaA, outcome.Success, "3/3 claims compatible")
	o.Recorded = recordOf(shaA, outcome.Pending, "1/3 claims compatible")
	for range 2 { // level-triggered: every reconcile publishes again
		s.Publish(ctx, o)
	}
	waitUntil(t, "success settled", func() bool { return h.reads.Load() == 1 && s.reporter.Pending() == 0 })
	if got := postedStates(h.allCalls()); len(got) != 0 {
		t.Errorf("posts = %q, want none: the host shows success already", got)
	}
	if n := h.reads.Load(); n != 1 {
		t.Errorf("Shows called %d times, want 1", n)
	}
}

// infoLog counts the Info messages logged through its Logger.
type infoLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *infoLog) logger() logr.Logger {
	return funcr.New(func(_, args string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.lines = append(l.lines, args)
	}, funcr.Options{})
}

func (l *infoLog) count(substr string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range l.lines {
		if strings.Contains(line, substr) {
			n++
		}
	}
	return n
}

func TestCommitStatusSinkLogsUnpostableOnceWithinBound(t *testing.T) {
	h := newFakeProvider(nil)
	s := newSink(t, h, func(o *CommitStatusSinkOptions) { o.MaxUnpostableLogged = 2 })
	logs := &infoLog{}
	ctx := ctrl.LoggerInto(context.Background(), logs.logger())
	publish := func(revision string) {
		o := reconciled(shaA, outcome.Pending, "rollout started")
		o.Source.Revision = revision
		s.Publish(ctx, o)
	}
	const noCommit = "the revision names no commit: no commit status is posted"
	for range 3 {
		publish("v1.2.3")
	}
	if n := logs.count(noCommit); n != 1 {
		t.Fatalf("logged %d times for one revision, want 1", n)
	}
	publish("v2")
	publish("v3") // beyond the bound: v1.2.3 is forgotten
	if n := s.unpostable.Len(); n != 2 {
		t.Errorf("remembers %d logged revisions, want the bound 2", n)
	}
	publish("v1.2.3")
	if n := logs.count(noCommit); n != 4 {
		t.Errorf("logged %d times, want 4 (v1.2.3, v2, v3, v1.2.3 again)", n)
	}

	bad := reconciled(shaA, outcome.Pending, "rollout started")
	bad.Source.Repository = "https://x-access-token:SECRET@git.example.com/"
	s.Publish(ctx, bad)
	s.Publish(ctx, bad)
	if n := logs.count(`"msg"="no commit status is posted"`); n != 1 {
		t.Errorf("logged an unparsable repository %d times, want 1", n)
	}
	if n := logs.count("SECRET"); n != 0 {
		t.Errorf("a log line holds the URL's user information")
	}
	if len(h.allCalls()) != 0 {
		t.Errorf("posted %q for sources naming no commit or repository", postedStates(h.allCalls()))
	}
}

func TestCommitStatusSinkForgetDropsTheStatefulSet(t *testing.T) {
	h := newFakeProvider(nil)
	s := newSink(t, h, nil)
	ctx := context.Background()

	s.Publish(ctx, reconciled(shaA, outcome.Success, "2/2 claims compatible"))
	other := reconciled(shaA, outcome.Success, "2/2 claims compatible")
	other.StatefulSet.Name = "db"
	s.Publish(ctx, other)
	if n := s.last.Len(); n != 2 {
		t.Fatalf("remembers %d StatefulSets, want 2", n)
	}
	s.Forget(webSTS)
	if _, ok := s.last.Peek(webSTS); ok || s.last.Len() != 1 {
		t.Fatalf("Forget left web remembered (%d StatefulSets)", s.last.Len())
	}
}

// A StatefulSet is gone for a moment when its templates change (orphan
// delete, re-create). If its revision was pending then, with the post still
// queued (the host down) so that no record shows it, the re-created
// StatefulSet's newer revision still supersedes it: the commit must not
// stay pending for ever (found by test/e2e TestGitHostStorm).
func TestCommitStatusSinkForgetKeepsAPendingRevision(t *testing.T) {
	var down atomic.Bool
	down.Store(true)
	h := newFakeProvider(func(context.Context, int, fakeCall) error {
		if down.Load() {
			return errors.New("503 Service Unavailable")
		}
		return nil
	})
	s := newSink(t, h, nil)
	ctx := context.Background()

	s.Publish(ctx, reconciled(shaA, outcome.Pending, "0/2 claims compatible, 1 updating"))
	s.Forget(webSTS) // orphan-deleted; Recorded below is still nil: nothing was posted
	s.Publish(ctx, reconciled(shaB, outcome.Pending, "rollout started"))
	down.Store(false)
	waitUntil(t, "A and B posted", func() bool { return s.reporter.Pending() == 0 })
	if got := postedStates(h.callsFor(sinkTarget(shaA), true)); len(got) != 1 || !strings.HasPrefix(got[0], string(outcome.Error)+":") {
		t.Errorf("A got %q, want only error (superseded): its pending was outstanding when B came", got)
	}
}

func TestRecordedRepository(t *testing.T) {
	for _, c := range []struct {
		in   string
		want githost.Repository
		ok   bool
	}{
		{"git.example.com/shop/web", githost.Repository{Host: "git.example.com", Path: "shop/web", Owner: "shop", Name: "web"}, true},
		{"[::1]:3000/group/sub/name", githost.Repository{Host: "[::1]:3000", Path: "group/sub/name", Owner: "group/sub", Name: "name"}, true},
		{"git.example.com/web", githost.Repository{}, false},
		{"git.example.com/shop/", githost.Repository{}, false},
		{"", githost.Repository{}, false},
	} {
		got, ok := recordedRepository(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("recordedRepository(%q) = %+v, %v; want %+v, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// The rollout controller publishes to the sink as one of its sinks.
var _ outcome.Sink = (*CommitStatusSink)(nil)
