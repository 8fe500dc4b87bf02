package commitstatus

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/claimwarden/claimwarden/integrations/githost"
	"github.com/claimwarden/claimwarden/reconciler/outcome"
)

// lastPostProvider accepts every post and keeps only a count and the
// newest commit (commitSHA's order) posted per state, so that the test's
// own memory stays flat too. Newest, not last: one worker takes Targets in
// queue order, and a Target re-queued while its post was in flight goes
// behind a newer commit's, so posts of one state need not come in commit
// order.
type lastPostProvider struct {
	mu    sync.Mutex
	posts int
	last  map[State]string // state → SHA of its newest post
}

func (p *lastPostProvider) Post(_ context.Context, _ githost.Repository, sha string, s Status) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.posts++
	if sha > p.last[s.State] { // commitSHA is fixed-width hex
		p.last[s.State] = sha
	}
	return nil
}

func (p *lastPostProvider) lastOf(state State) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.last[state]
}

// commitSHA is the i-th of many distinct commits.
func commitSHA(i int) string { return fmt.Sprintf("%040x", i) }

// TestCommitStatusSinkMemoryIsBounded rolls 10,000 commits out on one
// StatefulSet: what the sink and its Reporter remember stays within their
// bounds however many commits went by.
func TestCommitStatusSinkMemoryIsBounded(t *testing.T) {
	const (
		commits   = 10000
		queueSize = 8
	)
	p := &lastPostProvider{last: map[State]string{}}
	s := newSink(t, p, func(o *CommitStatusSinkOptions) {
		o.Reporter.QueueSize, o.Reporter.Workers = queueSize, 1
	})
	ctx := context.Background()
	bound := queueSize + rememberPerQueued*queueSize
	for i := range commits {
		// Room for this commit's pending and its predecessor's supersede,
		// so that none is refused and the count below is exact.
		waitUntil(t, "room in the queue", func() bool { return s.reporter.Pending() <= queueSize-2 })
		s.Publish(ctx, reconciled(commitSHA(i), outcome.Pending, "rollout started"))
		if i%1000 == 999 {
			if n := s.reporter.remembered(); n > bound {
				t.Fatalf("after %d commits the Reporter remembers %d Targets, bound %d", i+1, n, bound)
			}
			if n := s.last.Len(); n != 1 {
				t.Fatalf("after %d commits the sink remembers %d StatefulSets, want 1", i+1, n)
			}
		}
	}
	waitUntil(t, "the last commit posted", func() bool { return s.reporter.Pending() == 0 })
	if got := p.lastOf(Pending); got != commitSHA(commits-1) {
		t.Errorf("newest pending posted on %s, want the last commit", got)
	}
	if got := p.lastOf(Error); got != commitSHA(commits-2) {
		t.Errorf("newest superseded commit %s, want the one before the last", got)
	}
	// Each commit's pending is posted unless its supersede replaced it
	// while queued (the newest status of a Target wins); each but the
	// last is superseded.
	if p.posts < commits || p.posts > 2*commits-1 {
		t.Errorf("%d posts for %d commits", p.posts, commits)
	}
	if n := s.reporter.remembered(); n > bound {
		t.Errorf("the Reporter remembers %d Targets, bound %d", n, bound)
	}
}

// BenchmarkCommitStatusSinkPublishRepeat is the cost of the outcome every
// reconcile publishes again (level-triggered) when nothing changed.
func BenchmarkCommitStatusSinkPublishRepeat(b *testing.B) {
	p := &lastPostProvider{last: map[State]string{}}
	s := NewCommitStatusSink(CommitStatusSinkOptions{Reporter: ReporterOptions{Providers: func(githost.Repository) (Provider, error) { return p, nil }}})
	o := reconciled(shaA, outcome.Pending, "1/3 claims compatible")
	o.Recorded = recordOf(shaA, outcome.Pending, "1/3 claims compatible")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		s.Publish(ctx, o)
	}
	if s.reporter.Pending() != 0 {
		b.Fatal("a repeated, recorded status was queued")
	}
}
