package commitstatus

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/claimwarden/claimwarden/integrations/githost"
	"github.com/go-logr/logr"
	"github.com/hashicorp/golang-lru/v2/simplelru"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
)

// Target is one commit status slot: a repository, a commit and a context.
// A Git host keeps one status per slot, so the Reporter deduplicates, orders
// and replaces statuses per Target.
type Target struct {
	Repo    githost.Repository
	SHA     string
	Context string
	// Owner is the StatefulSet the status is about, handed back to
	// OnPosted so that the post can be recorded on its VolumeClaimRollout.
	// It is not part of the slot: the latest Report's Owner is kept.
	Owner types.NamespacedName
}

// ProviderFor resolves the Provider (host kind, credentials) for a
// repository. When it fails the status is dropped with a logged error and not
// retried by the Reporter: the controller reports again on its next
// reconcile, by which time the credentials may have been fixed.
type ProviderFor func(repo githost.Repository) (Provider, error)

// ReporterOptions configures a Reporter. Zero values take the defaults
// (withDefaults).
type ReporterOptions struct {
	// Providers resolves the Provider per repository; required.
	Providers ProviderFor
	// QueueSize bounds the Targets with a status not yet posted (queued,
	// waiting for a retry or in flight); default 1000. When it is reached,
	// Report returns false for new Targets.
	QueueSize int
	// Workers is how many statuses are posted concurrently; default 2.
	Workers int
	// BaseDelay and MaxDelay bound the exponential backoff between attempts
	// for one Target; default 1s and 5m.
	BaseDelay, MaxDelay time.Duration
	// ShutdownGrace is how long posts in flight when Start's context ends
	// may still take; default 10s. The host may already have stored such a
	// status: cut off before its answer, it would not be recorded (OnPosted),
	// and the next process would post it again. Keep it below the manager's
	// graceful shutdown timeout.
	ShutdownGrace time.Duration
	Logger        logr.Logger
	// OnPosted is called, from a worker, after the host accepted a status.
	OnPosted func(t Target, s Status)
}

const (
	defaultQueueSize = 1000
	defaultWorkers   = 2
	defaultBaseDelay = time.Second
	defaultMaxDelay  = 5 * time.Minute
	defaultGrace     = 10 * time.Second

	// postTimeout bounds one attempt, so that a host which accepts
	// connections but never answers cannot hold a worker (and with it the
	// statuses of every other host) for ever; a timeout is retried like any
	// transient error.
	postTimeout = 30 * time.Second

	// rememberPerQueued sizes the memory of what was posted to Targets that
	// have nothing outstanding, relative to QueueSize. Without a bound it
	// would grow with every commit ever reported; forgetting the oldest only
	// costs one repeated post should that Target be reported again, and the
	// controller seeds what it recorded after a restart anyway.
	rememberPerQueued = 10
)

// withDefaults returns o with zero values replaced by the defaults, and
// MaxDelay raised to BaseDelay if below it.
func (o ReporterOptions) withDefaults() ReporterOptions {
	if o.QueueSize <= 0 {
		o.QueueSize = defaultQueueSize
	}
	if o.Workers <= 0 {
		o.Workers = defaultWorkers
	}
	if o.BaseDelay <= 0 {
		o.BaseDelay = defaultBaseDelay
	}
	if o.MaxDelay <= 0 {
		o.MaxDelay = defaultMaxDelay
	}
	if o.ShutdownGrace <= 0 {
		o.ShutdownGrace = defaultGrace
	}
	if o.MaxDelay < o.BaseDelay {
		o.MaxDelay = o.BaseDelay
	}
	return o
}

// slotKey identifies a Target. Owner and Name are derived from Path, so they
// are left out; host names are case-insensitive.
type slotKey struct{ host, path, sha, context string }

func keyOf(t Target) slotKey {
	return slotKey{host: strings.ToLower(t.Repo.Host), path: t.Repo.Path, sha: t.SHA, context: t.Context}
}

// slot is what the Reporter knows about one Target.
type slot struct {
	target Target
	// desired is the newest status reported and not yet concluded (posted,
	// refused or dropped); nil when nothing is outstanding. Workers read it
	// when the key comes up, so a newer status replaces an older one that
	// waits in the queue or for a retry.
	desired *Status
	// posted is the last status the host accepted, or that Seed said it had.
	posted *Status
	// seeded is set when posted came from Seed, a previous process's record,
	// which may lag behind the host (killed between its post and the
	// record): the next post to the slot first asks the host what it shows
	// (StatusReader), once.
	seeded bool
	// failed is the last status the host refused permanently: reporting it
	// again is dropped, so a 404 or 422 is not retried on every reconcile.
	failed *Status
}

// Reporter posts commit statuses asynchronously: it deduplicates them against
// what was last posted, keeps only the newest status per Target, retries with
// exponential backoff (per Target) and honours rate limits and Retry-After (per host), and
// bounds what is outstanding so a slow or dead Git host never blocks the
// controller. For a Target it was seeded for (Seed), it asks a Provider that
// is a StatusReader what the host shows before its first post there, and
// posts nothing if that is the status already; other Targets are never read.
//
// It is a controller-runtime manager.Runnable that needs leader election: only
// the leader reconciles, so only the leader reports.
type Reporter struct {
	opts ReporterOptions
	// limiter is also used directly (not only through AddRateLimited) so that
	// a rate limit without Retry-After can apply the same delay to the host.
	limiter workqueue.TypedRateLimiter[slotKey]
	// queue holds each outstanding key exactly once: in the ready queue, in
	// flight, or waiting for its retry. The workqueue never hands the same
	// key to two workers, which keeps posts per Target ordered.
	queue workqueue.TypedRateLimitingInterface[slotKey]

	mu sync.Mutex
	// outstanding holds the slots with a status not yet concluded; QueueSize
	// bounds them and they are never forgotten. idle holds the others,
	// forgetting the least recently used beyond rememberPerQueued ×
	// QueueSize. A slot is in exactly one of them. idle is the
	// non-synchronised LRU because r.mu already guards it.
	outstanding map[slotKey]*slot
	idle        *simplelru.LRU[slotKey, *slot]
	// notBefore is, per host, when it may be called again after answering
	// with a rate limit: the limit is the host's (or the token's), not the
	// Target's, so every Target on that host waits.
	notBefore map[string]time.Time
	started   bool
}

// NewReporter returns a Reporter; call Start to run it. Statuses reported
// before Start are queued.
func NewReporter(o ReporterOptions) *Reporter {
	if o.Providers == nil {
		panic("commitstatus: ReporterOptions.Providers is required")
	}
	o = o.withDefaults()
	idle, err := simplelru.NewLRU[slotKey, *slot](rememberPerQueued*o.QueueSize, nil)
	if err != nil {
		panic("commitstatus: " + err.Error()) // unreachable: the size is positive
	}
	limiter := workqueue.NewTypedItemExponentialFailureRateLimiter[slotKey](o.BaseDelay, o.MaxDelay)
	return &Reporter{
		opts:        o,
		limiter:     limiter,
		queue:       workqueue.NewTypedRateLimitingQueue(limiter),
		outstanding: map[slotKey]*slot{},
		idle:        idle,
		notBefore:   map[string]time.Time{},
	}
}

// remembered is how many Targets the Reporter knows about.
func (r *Reporter) remembered() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.outstanding) + r.idle.Len()
}

// sameStatus is the deduplication equality. Context is not compared: it is
// the Target's.
func sameStatus(a, b Status) bool {
	return a.State == b.State && a.Description == b.Description && a.TargetURL == b.TargetURL
}

// Report asks for s to be posted to t. It never blocks. It returns false only
// when the queue is full and t has nothing outstanding; the controller reports
// again on its next reconcile. A status equal to the last one posted (or
// refused permanently) for t is dropped; a status for a t that already has one
// outstanding replaces it (the newest wins, without waiting for a free slot).
// s.Context is set to t.Context.
func (r *Reporter) Report(t Target, s Status) bool {
	s.Context = t.Context
	k := keyOf(t)
	r.mu.Lock()
	defer r.mu.Unlock()
	if sl := r.outstanding[k]; sl != nil {
		// Already queued, waiting or in flight: the worker reads desired when
		// it gets there. Not adding the key again keeps a Target in backoff in
		// backoff, however often the controller reconciles.
		sl.target = t
		sl.desired = &s
		return true
	}
	// Get marks the slot recently used: a repeat keeps it remembered.
	sl, _ := r.idle.Get(k)
	if sl != nil {
		if (sl.posted != nil && sameStatus(*sl.posted, s)) || (sl.failed != nil && sameStatus(*sl.failed, s)) {
			return true
		}
	}
	if len(r.outstanding) >= r.opts.QueueSize {
		return false
	}
	if sl == nil {
		sl = &slot{}
	} else {
		r.idle.Remove(k)
	}
	sl.target = t
	sl.desired = &s
	r.outstanding[k] = sl
	r.queue.Add(k)
	return true
}

// Seed tells the Reporter that s is already posted to t (as recorded in the
// VolumeClaimRollout before a restart), so reporting s again is not posted.
// It is ignored when the Reporter itself knows what it posted to t, which is
// at least as fresh; so Seed is safe to call on every reconcile.
//
// The record may be older than what the host shows: a process killed after
// the host stored a status and before OnPosted recorded it. So before the
// first post to a seeded t, the Reporter asks the host (if its Provider is a
// StatusReader) whether it shows that status already; if so it is not
// posted, and OnPosted is called so that the record catches up. A failed
// read is logged (V(1)) and the status posted.
func (r *Reporter) Seed(t Target, s Status) {
	s.Context = t.Context
	k := keyOf(t)
	r.mu.Lock()
	defer r.mu.Unlock()
	sl := r.outstanding[k]
	if sl == nil {
		sl, _ = r.idle.Get(k)
	}
	if sl == nil {
		sl = &slot{target: t}
		r.idle.Add(k, sl)
	}
	if sl.posted == nil {
		sl.posted = &s
		sl.seeded = true
	}
}

// Pending is the number of Targets with a status queued, waiting for a retry
// or in flight.
func (r *Reporter) Pending() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.outstanding)
}

// NeedLeaderElection makes the manager run the Reporter only on the leader.
func (r *Reporter) NeedLeaderElection() bool { return true }

// Start runs the workers until ctx ends, lets the posts then in flight finish
// (up to ShutdownGrace) and returns nil. Statuses still queued are lost with
// the process; the controller reports them again after it restarts. A
// Reporter can be started once.
func (r *Reporter) Start(ctx context.Context) error {
	r.mu.Lock()
	if r.started {
		r.mu.Unlock()
		return errors.New("commitstatus: Reporter already started")
	}
	r.started = true
	r.mu.Unlock()

	postCtx, cancelPosts := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelPosts()
	var wg sync.WaitGroup
	for range r.opts.Workers {
		wg.Go(func() {
			for {
				k, shutdown := r.queue.Get()
				if shutdown {
					return
				}
				r.process(ctx, postCtx, k)
				r.queue.Done(k)
			}
		})
	}
	<-ctx.Done()
	// The workers drain the ready keys without posting (process checks ctx)
	// and Get reports shutdown; posts in flight get ShutdownGrace to finish.
	r.queue.ShutDown()
	grace := time.AfterFunc(r.opts.ShutdownGrace, cancelPosts)
	defer grace.Stop()
	wg.Wait()
	return nil
}

// settle concludes the attempt to post s. If nothing newer was reported
// meanwhile the slot becomes idle; otherwise the newer status is posted next,
// straight away: the host answered, so there is no reason to wait. It returns
// whether the key must be added back to the queue, which the caller does
// after releasing r.mu. Called with r.mu held.
func (r *Reporter) settle(k slotKey, sl *slot, s Status) (again bool) {
	r.queue.Forget(k)
	if !sameStatus(*sl.desired, s) {
		return true
	}
	sl.desired = nil
	delete(r.outstanding, k)
	// Beyond the bound, Add forgets the least recently used idle slot.
	r.idle.Add(k, sl)
	return false
}

// delayHost holds every Target on host back for d (see notBefore); a later
// limit already set stays. Called with r.mu held.
func (r *Reporter) delayHost(host string, d time.Duration) {
	if nb := time.Now().Add(d); nb.After(r.notBefore[host]) {
		r.notBefore[host] = nb
	}
}

// providerError marks a failure to resolve the Provider, which is not
// retried.
type providerError struct{ err error }

func (e *providerError) Error() string { return "resolving the Git provider: " + e.err.Error() }
func (e *providerError) Unwrap() error { return e.err }

func (r *Reporter) post(ctx context.Context, p Provider, t Target, s Status) error {
	ctx, cancel := context.WithTimeout(ctx, postTimeout)
	defer cancel()
	return p.Post(ctx, t.Repo, t.SHA, s)
}

// shows asks p, if it is a StatusReader, whether the host shows s on t
// already. A failed read only costs what reading would have saved (the
// status is posted, possibly once more), so it is logged at V(1) and
// answers false.
func (r *Reporter) shows(ctx context.Context, log logr.Logger, p Provider, t Target, s Status) bool {
	sr, ok := p.(StatusReader)
	if !ok {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, postTimeout)
	defer cancel()
	shown, err := sr.Shows(ctx, t.Repo, t.SHA, s)
	if err != nil {
		log.V(1).Info("Reading the commit status the host shows failed; posting it", "error", err.Error())
		return false
	}
	return shown
}

// process makes one attempt for key k, which the workqueue hands to one
// worker at a time. None starts once ctx has ended; the post itself runs
// under postCtx, which outlives ctx by the shutdown grace.
func (r *Reporter) process(ctx, postCtx context.Context, k slotKey) {
	if ctx.Err() != nil {
		return
	}
	a, ok := r.begin(k)
	if !ok {
		return
	}
	log := r.opts.Logger.WithValues("repository", a.target.Repo.Host+"/"+a.target.Repo.Path, "sha", a.target.SHA,
		"context", a.target.Context, "state", a.status.State)
	err := r.deliver(ctx, postCtx, log, a)
	r.conclude(ctx, k, log, a, err)
}

// attempt is one post of a slot's newest status, taken from the slot under
// r.mu and made without it.
type attempt struct {
	slot   *slot
	status Status
	target Target
	// read asks the host first whether it shows status already (slot.seeded).
	read bool
}

// begin takes k's newest status for an attempt. ok is false when none is
// to be made now: the slot is gone, its host is held back (k comes up again
// then), or the host shows that status already.
func (r *Reporter) begin(k slotKey) (a attempt, ok bool) {
	r.mu.Lock()
	sl := r.outstanding[k]
	if sl == nil {
		// Not expected (outstanding slots are never forgotten and keys are
		// only queued while outstanding), but harmless.
		r.mu.Unlock()
		r.queue.Forget(k)
		return attempt{}, false
	}
	now := time.Now()
	if nb, ok := r.notBefore[k.host]; ok {
		if wait := nb.Sub(now); wait > 0 {
			r.mu.Unlock()
			// Deferred by another Target's rate limit: not a failure of this
			// Target, so its backoff does not grow.
			r.queue.AddAfter(k, wait)
			return attempt{}, false
		}
		delete(r.notBefore, k.host)
	}
	s := *sl.desired
	if sl.posted != nil && sameStatus(*sl.posted, s) {
		// The newest status went back to what the host shows (or Seed said
		// it shows) while this one waited: nothing to post.
		again := r.settle(k, sl, s)
		r.mu.Unlock()
		if again {
			r.queue.Add(k)
		}
		return attempt{}, false
	}
	a = attempt{slot: sl, status: s, target: sl.target, read: sl.seeded}
	sl.seeded = false
	r.mu.Unlock()
	return a, true
}

// deliver posts a's status, or finds that the host shows it already: nil
// either way.
func (r *Reporter) deliver(ctx, postCtx context.Context, log logr.Logger, a attempt) error {
	p, err := r.opts.Providers(a.target.Repo)
	switch {
	case err != nil:
		return &providerError{err}
	case a.read && r.shows(postCtx, log, p, a.target, a.status):
		// A previous process posted it and was killed before recording it.
		return nil
	case a.read && ctx.Err() != nil:
		// Shutting down while reading: no post starts; see Start.
		return ctx.Err()
	}
	return r.post(postCtx, p, a.target, a.status)
}

// conclude records how a's post went and queues k for what comes next: the
// newer status now, or a retry after a backoff or the host's delay.
func (r *Reporter) conclude(ctx context.Context, k slotKey, log logr.Logger, a attempt, err error) {
	var (
		rateLimited *githost.RateLimitError
		unavailable *githost.UnavailableError
		permanent   *githost.PermanentError
		noProvider  *providerError
		again       bool // post the newer status now
		retry       bool // post this (or a newer) status after retryIn
		retryIn     time.Duration
	)
	sl, s := a.slot, a.status
	r.mu.Lock()
	switch {
	case err == nil:
		sl.posted = &s
		sl.failed = nil
		again = r.settle(k, sl, s)
	case ctx.Err() != nil:
		// Shutting down and not posted: not retried; see Start.
		r.mu.Unlock()
		return
	case errors.As(err, &noProvider):
		log.Error(err, "Dropping commit status")
		// Nothing was read: the next attempt, with the provider fixed, asks.
		sl.seeded = a.read
		again = r.settle(k, sl, s)
	case errors.As(err, &permanent):
		// Logged once: reporting the same status again is dropped by Report.
		log.Error(err, "Git host refused the commit status; not retrying it")
		sl.failed = &s
		again = r.settle(k, sl, s)
	case errors.As(err, &rateLimited):
		retry, retryIn = true, rateLimited.RetryAfter
		if retryIn <= 0 {
			retryIn = r.limiter.When(k)
		}
		r.delayHost(k.host, retryIn)
		log.Info("Git host rate-limited the commit status; delaying the host", "error", err.Error(), "retryIn", retryIn)
	case errors.As(err, &unavailable):
		// The host said when to come back: waiting longer only delays the
		// status, sooner only adds to its load.
		retry, retryIn = true, unavailable.RetryAfter
		r.delayHost(k.host, retryIn)
		log.Info("Git host is unavailable; delaying the host as it asked", "error", err.Error(), "retryIn", retryIn)
	default:
		retry, retryIn = true, r.limiter.When(k)
		log.Info("Posting the commit status failed; retrying", "error", err.Error(), "retryIn", retryIn)
	}
	r.mu.Unlock()

	// Queue calls happen without r.mu: AddAfter can block while the
	// workqueue's waiting loop is busy, and Report must never wait for that.
	switch {
	case retry:
		r.queue.AddAfter(k, retryIn)
	case again:
		r.queue.Add(k)
	}
	if err == nil && r.opts.OnPosted != nil {
		r.opts.OnPosted(a.target, s)
	}
}
