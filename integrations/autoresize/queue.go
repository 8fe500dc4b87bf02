package autoresize

import (
	"context"
	"fmt"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/workqueue"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
)

// scheduler checks the opted-in StatefulSets from a work queue, one item
// per StatefulSet, so that no StatefulSet's check delays another's: a
// round enqueues them all every Interval, Concurrency workers check them,
// each check under its deadline in a goroutine of its own. A check that
// has not returned shortly after its deadline (work that ignores its
// context) is left running, counted and reported as stuck, and its worker
// moves on; its StatefulSet is not checked again until it returns. A check
// that failed is retried later and later (the queue's per-item back-off),
// reset by one that succeeds.
type scheduler struct {
	c       *Controller
	queue   workqueue.TypedRateLimitingInterface[types.NamespacedName]
	workers int
	// timeout is each check's deadline; grace how long after it a check
	// that has not returned is taken for stuck.
	timeout, grace time.Duration
	interval       time.Duration

	mu sync.Mutex
	// running are the StatefulSets whose check has not returned, stuck
	// those of them past their deadline and grace.
	running, stuck map[types.NamespacedName]bool
	// round is the last round started.
	round *round
	// progress is when a check last returned, or when work began after
	// none (health.go).
	progress time.Time
}

// round is one pass over the opted-in StatefulSets.
type round struct {
	// pending are the StatefulSets of the round not yet checked.
	pending map[types.NamespacedName]bool
	memos
	done chan struct{}
}

// memos are what checks share: usage read once per batch of namespaces,
// each tool object read and located once, each repository asked once (a
// round's); a check outside a round has its own.
type memos struct {
	usage *usageMemo
	tools *toolMemo
	repos *repoMemo
}

// ownMemos are the memos of a check outside a round.
func (c *Controller) ownMemos() memos {
	return memos{usage: newUsageMemo(c.Usage), tools: newToolMemo(c.Reader), repos: newRepoMemo()}
}

func newScheduler(c *Controller) *scheduler {
	s := &scheduler{c: c, workers: c.Concurrency, timeout: c.CheckTimeout, interval: c.Interval,
		running: map[types.NamespacedName]bool{}, stuck: map[types.NamespacedName]bool{}}
	if s.workers <= 0 {
		s.workers = DefaultConcurrency
	}
	if s.timeout <= 0 {
		s.timeout = DefaultCheckTimeout
	}
	if s.interval <= 0 {
		s.interval = DefaultInterval
	}
	s.grace = s.timeout / 4
	// A failing StatefulSet is retried an interval later, then twice as
	// late each time, at most 12 intervals (an hour by default).
	limiter := workqueue.NewTypedItemExponentialFailureRateLimiter[types.NamespacedName](s.interval, 12*s.interval)
	// A queue name per cluster: its workqueue_* series are its own.
	name := "autoresize"
	if c.Cluster != "" {
		name += "-" + c.Cluster
	}
	s.queue = workqueue.NewTypedRateLimitingQueueWithConfig(limiter, workqueue.TypedRateLimitingQueueConfig[types.NamespacedName]{Name: name})
	return s
}

// run checks until ctx ends, then stops the workers: a stuck check is
// left behind, so run returns at once.
func (s *scheduler) run(ctx context.Context) {
	var workers sync.WaitGroup
	for range s.workers {
		workers.Go(func() { s.work(ctx) })
	}
	// The interval runs from the end of a round, as the single loop's did:
	// a round longer than the interval is not overlapped by the next.
	wait.UntilWithContext(ctx, s.runRound, s.interval)
	s.queue.ShutDown()
	workers.Wait()
}

// runRound enqueues every opted-in StatefulSet but those waiting out their
// back-off, and waits until each was checked or found stuck; a finished
// round is counted, and ends the claims' series it did not see.
func (s *scheduler) runRound(ctx context.Context) {
	keys, err := s.c.optedIn(ctx)
	if err != nil {
		s.c.Log.Error(err, "autoresize")
		return
	}
	r := &round{pending: map[types.NamespacedName]bool{}, done: make(chan struct{})}
	var queued []types.NamespacedName
	var namespaces []string
	seen := map[string]bool{}
	s.mu.Lock()
	for _, k := range keys {
		if s.queue.NumRequeues(k) == 0 {
			r.pending[k] = true
			queued = append(queued, k)
			// A check still running is not started again (begin): its
			// namespace is read when another of the round needs it.
			if !s.running[k] && !seen[k.Namespace] {
				seen[k.Namespace] = true
				namespaces = append(namespaces, k.Namespace)
			}
		}
	}
	// A batch read is waited for a quarter of a check's deadline, then its
	// namespaces are read one by one.
	r.memos = memos{usage: newRoundMemo(s.c.Usage, namespaces, s.timeout/4), tools: newToolMemo(s.c.Reader), repos: newRepoMemo()}
	if len(s.running) == 0 && s.queue.Len() == 0 {
		s.progress = time.Now()
	}
	s.round = r
	if len(r.pending) == 0 {
		close(r.done)
	}
	s.mu.Unlock()
	for _, k := range queued {
		s.queue.Add(k)
	}
	select {
	case <-r.done:
		s.c.Metrics.sweep()
	case <-ctx.Done():
	}
}

func (s *scheduler) work(ctx context.Context) {
	for {
		key, shutdown := s.queue.Get()
		if shutdown {
			return
		}
		s.process(ctx, key)
		s.queue.Done(key)
	}
}

// process checks key, unless its last check has not returned yet, and
// waits for the check until its deadline and grace have passed.
func (s *scheduler) process(ctx context.Context, key types.NamespacedName) {
	r, busy := s.begin(key)
	defer s.checked(r, key)
	if busy {
		return
	}
	m := s.c.ownMemos()
	if r != nil {
		m = r.memos
	}
	// The status is written after the deadline, within the wait.
	checkCtx, cancel := context.WithTimeout(ctx, s.timeout)
	recordCtx, cancelRecord := context.WithTimeout(ctx, s.timeout+s.grace)
	failed := make(chan bool, 1)
	go func() {
		defer cancelRecord()
		defer cancel()
		f := s.c.check(checkCtx, recordCtx, key, m)
		s.returned(key)
		failed <- f
	}()
	timer := time.NewTimer(s.timeout + s.grace)
	defer timer.Stop()
	select {
	case f := <-failed:
		if f {
			s.queue.AddRateLimited(key)
		} else {
			s.queue.Forget(key)
		}
	case <-timer.C:
		s.stuckCheck(ctx, key)
	case <-ctx.Done():
	}
}

// begin marks key's check as running; busy when its last one still is. r
// is the round key is pending in, nil when none.
func (s *scheduler) begin(key types.NamespacedName) (r *round, busy bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.round != nil && s.round.pending[key] {
		r = s.round
	}
	if s.running[key] {
		return r, true
	}
	if len(s.running) == 0 {
		s.progress = time.Now()
	}
	s.running[key] = true
	return r, false
}

// checked ends key's turn in round r.
func (s *scheduler) checked(r *round, key types.NamespacedName) {
	if r == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.pending[key] {
		delete(r.pending, key)
		if len(r.pending) == 0 {
			close(r.done)
		}
	}
}

// returned is the end of key's check, however late.
func (s *scheduler) returned(key types.NamespacedName) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.running, key)
	delete(s.stuck, key)
	s.c.Metrics.stuck(len(s.stuck))
	s.progress = time.Now()
}

// stuckCheck reports key's check, which has not returned within its
// deadline and grace, in the status and the metric.
func (s *scheduler) stuckCheck(ctx context.Context, key types.NamespacedName) {
	s.mu.Lock()
	running := s.running[key]
	if running {
		s.stuck[key] = true
	}
	s.c.Metrics.stuck(len(s.stuck))
	s.mu.Unlock()
	if !running {
		// It returned as the grace ended.
		return
	}
	msg := fmt.Sprintf("the check did not return within %s of its deadline of %s (work that ignores its deadline): %s is not checked again until it does",
		s.grace, s.timeout, key)
	s.c.Log.Error(nil, "autoresize: a check is stuck", "statefulset", key, "timeout", s.timeout)
	// The status is written under a deadline of its own: the check's
	// passed.
	ctx, cancel := context.WithTimeout(ctx, s.grace)
	defer cancel()
	var sts appsv1.StatefulSet
	if err := s.c.Client.Get(ctx, key, &sts); err == nil {
		s.c.record(ctx, &sts, v1alpha1.AutoresizeStatus{LastChecked: metaTime(time.Now()), Message: msg})
	}
}
