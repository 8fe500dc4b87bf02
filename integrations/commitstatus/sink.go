package commitstatus

import (
	"context"

	"github.com/go-logr/logr"
	lru "github.com/hashicorp/golang-lru/v2"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/reconciler/outcome"
)

// CommitStatusSinkOptions configures a CommitStatusSink. Zero values take
// the defaults (withDefaults).
type CommitStatusSinkOptions struct {
	// Reporter configures the Reporter the sink posts through; Providers is
	// required. Its OnPosted is the sink's (see Client).
	Reporter ReporterOptions
	// Records, when set, records every posted status in
	// status.lastCommitStatus of the StatefulSet's VolumeClaimRollout: the
	// record a restarted controller seeds from (Outcome.Recorded).
	Records Records
	// ContextPrefix starts every status context
	// (<prefix>/<namespace>/<statefulset>); default v1alpha1.ControllerName.
	ContextPrefix string
	// TargetURL is linked from every status; optional.
	TargetURL string
	// MaxStatefulSets bounds the StatefulSets whose last status the sink
	// remembers, to supersede it; default 10000. A StatefulSet forgotten
	// beyond it falls back on its VolumeClaimRollout's record, as after a
	// restart.
	MaxStatefulSets int
	// MaxUnpostableLogged bounds the repository@revision pairs remembered as
	// logged for naming no commit or no repository, so each is logged once;
	// default 1000. Forgetting one only logs it again.
	MaxUnpostableLogged int
	// Logger receives the errors of recording a posted status.
	Logger logr.Logger
}

const (
	defaultSinkStatefulSets     = 10000
	defaultSinkUnpostableLogged = 1000
)

// withDefaults returns o with zero values replaced by the defaults.
func (o CommitStatusSinkOptions) withDefaults() CommitStatusSinkOptions {
	if o.ContextPrefix == "" {
		o.ContextPrefix = v1alpha1.ControllerName
	}
	if o.MaxStatefulSets <= 0 {
		o.MaxStatefulSets = defaultSinkStatefulSets
	}
	if o.MaxUnpostableLogged <= 0 {
		o.MaxUnpostableLogged = defaultSinkUnpostableLogged
	}
	return o
}

// published is the last status the sink reported for a StatefulSet's own
// revision (or, after a restart, the one its VolumeClaimRollout recorded).
type published struct {
	target Target
	state  outcome.State
}

// CommitStatusSink turns outcomes into commit statuses on the commit that
// proposed each rollout. It owns the memory this needs: which status a
// previous process posted (seeded from Outcome.Recorded), which revision of
// a StatefulSet is still pending when a newer one replaces it (superseded),
// and which revisions were logged as unpostable. The Reporter behind it
// deduplicates, queues and retries.
//
// It is a controller-runtime manager.Runnable (the Reporter's workers) that
// needs leader election. Publish and Forget are safe for concurrent use;
// calls for one StatefulSet come from its reconcile, one at a time.
type CommitStatusSink struct {
	opts     CommitStatusSinkOptions
	reporter *Reporter
	last     *lru.Cache[types.NamespacedName, published]
	// unpostable holds repository@revision pairs already logged.
	unpostable *lru.Cache[string, struct{}]
}

// NewCommitStatusSink returns a sink; add it to the manager to run it.
func NewCommitStatusSink(o CommitStatusSinkOptions) *CommitStatusSink {
	o = o.withDefaults()
	s := &CommitStatusSink{opts: o}
	var err error
	if s.last, err = lru.New[types.NamespacedName, published](o.MaxStatefulSets); err != nil {
		panic("commitstatus: " + err.Error()) // unreachable: the size is positive
	}
	if s.unpostable, err = lru.New[string, struct{}](o.MaxUnpostableLogged); err != nil {
		panic("commitstatus: " + err.Error()) // unreachable: the size is positive
	}
	ro := o.Reporter
	ro.OnPosted = nil
	if o.Records != nil {
		ro.OnPosted = s.recordPosted
	}
	s.reporter = NewReporter(ro)
	return s
}

// Start runs the Reporter until ctx ends.
func (s *CommitStatusSink) Start(ctx context.Context) error { return s.reporter.Start(ctx) }

// Pending is the number of commits with a status not yet posted: queued,
// waiting for a retry or in flight (the backlog an alert watches).
func (s *CommitStatusSink) Pending() int { return s.reporter.Pending() }

// NeedLeaderElection makes the manager run the sink only on the leader.
func (s *CommitStatusSink) NeedLeaderElection() bool { return true }

// Publish implements outcome.Sink: it reports the rollout's state on its
// commit, first superseding the StatefulSet's previous revision if that was
// still pending. Outcomes other than Reconciled, and sources naming no
// repository or commit, post nothing.
func (s *CommitStatusSink) Publish(ctx context.Context, o outcome.Outcome) {
	if o.Action != outcome.Reconciled {
		return
	}
	log := ctrl.LoggerFrom(ctx)
	next, ok := s.targetOf(log, o.StatefulSet, o.Source)
	prev, inMemory := s.last.Get(o.StatefulSet)
	known := inMemory
	if !known {
		// After a restart, or once forgotten: what was actually posted.
		prev, known = recordedOf(o.StatefulSet, o.Recorded)
	}
	if known && supersedes(prev, o.Source.Revision, next.SHA) {
		s.report(log, prev.target, Status{State: Error, Description: outcome.ShortDescription(outcome.Superseded(o.Source.Revision))})
		s.last.Add(o.StatefulSet, published{target: prev.target, state: outcome.Error})
	}
	if !ok {
		return
	}
	if !inMemory || keyOf(prev.target) != keyOf(next) {
		s.seed(next, o.Recorded)
	}
	s.report(log, next, Status{State: o.State, Description: outcome.ShortDescription(o.Message)})
	s.last.Add(o.StatefulSet, published{target: next, state: o.State})
}

// Forget implements outcome.Sink. What the Reporter remembers per Target is
// bounded on its own and keyed by commit, not StatefulSet.
//
// A pending revision is kept: a StatefulSet is gone between an orphan delete
// and its re-create (how templates change, by hand or by claimwarden), and
// while that pending status is still queued (a Git host outage) the
// VolumeClaimRollout's record, the fallback, does not show it; the
// re-created StatefulSet's next revision must still supersede it, or its
// commit stays pending for ever. MaxStatefulSets bounds it as the rest.
func (s *CommitStatusSink) Forget(statefulSet types.NamespacedName) {
	if prev, ok := s.last.Peek(statefulSet); ok && prev.state == outcome.Pending {
		return
	}
	s.last.Remove(statefulSet)
}

// supersedes says whether a StatefulSet's move to revision (commit sha, ""
// when it names none) finalises prev: a pending rollout of another commit
// that will never finish.
func supersedes(prev published, revision, sha string) bool {
	return prev.state == outcome.Pending && revision != "" && prev.target.SHA != sha
}

// seed tells the Reporter what a previous process posted to t, as the
// VolumeClaimRollout recorded it, so that it is not posted again.
func (s *CommitStatusSink) seed(t Target, recorded *v1alpha1.CommitStatus) {
	if recorded == nil || recorded.Revision != t.SHA || recorded.Context != t.Context {
		return
	}
	s.reporter.Seed(t, Status{State: State(recorded.State), Description: recorded.Description, TargetURL: s.opts.TargetURL})
}

func (s *CommitStatusSink) report(log logr.Logger, t Target, st Status) {
	st.TargetURL = s.opts.TargetURL
	if !s.reporter.Report(t, st) {
		log.Info("the commit status queue is full; the status is reported again on the next reconcile", "context", t.Context)
	}
}
