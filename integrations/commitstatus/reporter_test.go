package commitstatus

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/claimwarden/claimwarden/integrations/githost"
	"github.com/claimwarden/claimwarden/test/testenv"
	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
)

// fakeCall is one Post the fake host received.
type fakeCall struct {
	Repo   githost.Repository
	SHA    string
	Status Status
	At     time.Time
	Err    error
}

func (c fakeCall) slot() string {
	return c.Repo.Host + "/" + c.Repo.Path + "@" + c.SHA + "#" + c.Status.Context
}

// fakeProvider is a Provider that records every call and answers with whatever
// answer returns (nil: accepted). answer may block, honouring ctx.
type fakeProvider struct {
	answer func(ctx context.Context, n int, c fakeCall) error

	mu         sync.Mutex
	calls      []fakeCall
	inFlight   map[string]int
	overlapped bool              // two posts for the same slot at once
	shown      map[string]Status // what the host shows per slot
}

func newFakeProvider(answer func(ctx context.Context, n int, c fakeCall) error) *fakeProvider {
	return &fakeProvider{answer: answer, inFlight: map[string]int{}, shown: map[string]Status{}}
}

func (h *fakeProvider) Post(ctx context.Context, repo githost.Repository, sha string, s Status) error {
	c := fakeCall{Repo: repo, SHA: sha, Status: s, At: time.Now()}
	h.mu.Lock()
	n := len(h.calls)
	h.calls = append(h.calls, c)
	h.inFlight[c.slot()]++
	if h.inFlight[c.slot()] > 1 {
		h.overlapped = true
	}
	h.mu.Unlock()

	var err error
	if h.answer != nil {
		err = h.answer(ctx, n, c)
	}

	h.mu.Lock()
	defer h.mu.Unlock()
	h.inFlight[c.slot()]--
	h.calls[n].Err = err
	if err == nil {
		h.shown[c.slot()] = s
	}
	return err
}

// show makes the fake host show s on t, as if posted by a process that
// did not live to record it.
func (h *fakeProvider) show(t Target, s Status) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s.Context = t.Context
	h.shown[fakeSlot(t)] = s
}

// readingProvider is a fakeProvider that is a StatusReader: Shows answers
// from what the fake host shows (state and description, as the providers
// compare), or fails with err; it counts its calls.
type readingProvider struct {
	*fakeProvider
	err   error
	reads atomic.Int32
}

func (p *readingProvider) Shows(_ context.Context, repo githost.Repository, sha string, s Status) (bool, error) {
	p.reads.Add(1)
	if p.err != nil {
		return false, p.err
	}
	shown, ok := p.shownFor(Target{Repo: repo, SHA: sha, Context: s.Context})
	return ok && shown.State == s.State && shown.Description == s.Description, nil
}

func (h *fakeProvider) allCalls() []fakeCall {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]fakeCall(nil), h.calls...)
}

// callsFor returns the calls for t, in order; accepted only those accepted.
func (h *fakeProvider) callsFor(t Target, accepted bool) []fakeCall {
	var out []fakeCall
	for _, c := range h.allCalls() {
		if c.slot() == fakeSlot(t) && (!accepted || c.Err == nil) {
			out = append(out, c)
		}
	}
	return out
}

func (h *fakeProvider) shownFor(t Target) (Status, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s, ok := h.shown[fakeSlot(t)]
	return s, ok
}

func fakeSlot(t Target) string {
	return t.Repo.Host + "/" + t.Repo.Path + "@" + t.SHA + "#" + t.Context
}

func postedStates(calls []fakeCall) []string {
	var out []string
	for _, c := range calls {
		out = append(out, string(c.Status.State)+":"+c.Status.Description)
	}
	return out
}

// errorLogSink records what is logged as an error.
type errorLogSink struct {
	mu     *sync.Mutex
	errors *[]string
}

func newErrorLogSink() errorLogSink { return errorLogSink{mu: &sync.Mutex{}, errors: new([]string)} }

func (l errorLogSink) Init(logr.RuntimeInfo)          {}
func (l errorLogSink) Enabled(int) bool               { return true }
func (l errorLogSink) Info(int, string, ...any)       {}
func (l errorLogSink) WithValues(...any) logr.LogSink { return l }
func (l errorLogSink) WithName(string) logr.LogSink   { return l }

func (l errorLogSink) Error(err error, msg string, _ ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	*l.errors = append(*l.errors, msg+": "+err.Error())
}

func (l errorLogSink) errorLines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), *l.errors...)
}

// postedLog records OnPosted calls.
type postedLog struct {
	mu    sync.Mutex
	posts []Status
}

func (p *postedLog) onPosted(_ Target, s Status) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.posts = append(p.posts, s)
}

func (p *postedLog) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.posts)
}

// newReporter builds a Reporter on h with short delays; mod adjusts options.
func newReporter(h *fakeProvider, mod func(*ReporterOptions)) (*Reporter, *postedLog) {
	pl := &postedLog{}
	o := ReporterOptions{
		Providers: func(githost.Repository) (Provider, error) { return h, nil },
		BaseDelay: 2 * time.Millisecond,
		MaxDelay:  20 * time.Millisecond,
		// Short, so that a post stuck on a dead host does not hold Start.
		ShutdownGrace: 50 * time.Millisecond,
		OnPosted:      pl.onPosted,
	}
	if mod != nil {
		mod(&o)
	}
	return NewReporter(o), pl
}

// waitUntil polls cond until it holds or a generous deadline passes.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		<-tick.C
	}
}

// reportNow calls Report and fails the test if it does not return promptly:
// Report must never block.
func reportNow(t *testing.T, r *Reporter, tg Target, s Status) bool {
	t.Helper()
	res := make(chan bool, 1)
	go func() { res <- r.Report(tg, s) }()
	select {
	case ok := <-res:
		return ok
	case <-time.After(5 * time.Second):
		t.Fatalf("Report blocked")
		return false
	}
}

func testTarget(host, sha string) Target {
	return Target{
		Repo:    githost.Repository{Host: host, Path: "shop/web", Owner: "shop", Name: "web"},
		SHA:     sha,
		Context: "claimwarden/shop/web",
	}
}

var (
	pendingStatus = Status{State: Pending, Description: "Rollout of revision 3 started"}
	successStatus = Status{State: Success, Description: "Every claim is compatible"}
	failureStatus = Status{State: Failure, Description: "Denied by max-step: claim data"}
)

var errServerError = errors.New("500 Internal Server Error")

func TestReporterDeduplicates(t *testing.T) {
	h := newFakeProvider(nil)
	r, posted := newReporter(h, nil)
	tg := testTarget("git.example.com", "abc")

	// Twice before the workers run: queued once.
	for range 2 {
		if !reportNow(t, r, tg, pendingStatus) {
			t.Fatal("Report refused")
		}
	}
	if got := r.Pending(); got != 1 {
		t.Fatalf("Pending = %d after reporting one Target twice, want 1", got)
	}
	testenv.RunT(t, r)
	waitUntil(t, "the pending status posted", func() bool { return posted.count() == 1 && r.Pending() == 0 })

	// Again after it was posted, even with a different Status.Context (the
	// Target's is what counts): dropped synchronously, nothing outstanding.
	other := pendingStatus
	other.Context = "something/else"
	if !reportNow(t, r, tg, pendingStatus) || !reportNow(t, r, tg, other) {
		t.Fatal("Report refused")
	}
	if got := r.Pending(); got != 0 {
		t.Fatalf("Pending = %d after re-reporting the posted status, want 0", got)
	}

	// A different status is posted, and then deduplicated too.
	reportNow(t, r, tg, successStatus)
	waitUntil(t, "the success status posted", func() bool { return posted.count() == 2 && r.Pending() == 0 })
	reportNow(t, r, tg, successStatus)
	if got := r.Pending(); got != 0 {
		t.Fatalf("Pending = %d after re-reporting success, want 0", got)
	}

	calls := h.allCalls()
	if got, want := fmt.Sprint(postedStates(calls)), fmt.Sprint([]string{
		"pending:" + pendingStatus.Description, "success:" + successStatus.Description,
	}); got != want {
		t.Fatalf("posts = %s, want %s", got, want)
	}
	for _, c := range calls {
		if c.Status.Context != tg.Context || c.SHA != tg.SHA || c.Repo != tg.Repo {
			t.Errorf("posted %+v to %+v@%s, want context, repository and SHA of %+v", c.Status, c.Repo, c.SHA, tg)
		}
	}
}

func TestReporterLatestWinsWhileHostDown(t *testing.T) {
	var mu sync.Mutex
	down := true
	h := newFakeProvider(func(context.Context, int, fakeCall) error {
		mu.Lock()
		defer mu.Unlock()
		if down {
			return errServerError
		}
		return nil
	})
	r, _ := newReporter(h, nil)
	testenv.RunT(t, r)
	tg := testTarget("git.example.com", "abc")

	reportNow(t, r, tg, pendingStatus)
	waitUntil(t, "two failed attempts with pending", func() bool { return len(h.callsFor(tg, false)) >= 2 })
	reportNow(t, r, tg, successStatus)
	// The retry picks up the newer status instead of the queued one.
	waitUntil(t, "a failed attempt with success", func() bool {
		for _, c := range h.callsFor(tg, false) {
			if c.Status.State == Success {
				return true
			}
		}
		return false
	})
	mu.Lock()
	down = false
	mu.Unlock()
	waitUntil(t, "nothing outstanding", func() bool { return r.Pending() == 0 })

	if got, ok := h.shownFor(tg); !ok || got.State != Success {
		t.Fatalf("host shows %+v, want success", got)
	}
	if got := postedStates(h.callsFor(tg, true)); len(got) != 1 || got[0] != "success:"+successStatus.Description {
		t.Fatalf("accepted posts = %v, want only success", got)
	}
	seenSuccess := false
	for _, c := range h.callsFor(tg, false) {
		seenSuccess = seenSuccess || c.Status.State == Success
		if seenSuccess && c.Status.State == Pending {
			t.Fatalf("stale pending attempted after success: %v", postedStates(h.callsFor(tg, false)))
		}
	}
}

func TestReporterNewerStatusWhileInFlight(t *testing.T) {
	gate := make(chan struct{})
	h := newFakeProvider(func(ctx context.Context, n int, _ fakeCall) error {
		if n == 0 {
			select {
			case <-gate:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	})
	// Several workers, so two posts for the same Target could overlap if the
	// Reporter allowed it.
	r, posted := newReporter(h, func(o *ReporterOptions) { o.Workers = 4 })
	testenv.RunT(t, r)
	tg := testTarget("git.example.com", "abc")

	reportNow(t, r, tg, pendingStatus)
	waitUntil(t, "the pending post in flight", func() bool { return len(h.allCalls()) == 1 })
	reportNow(t, r, tg, failureStatus) // replaced before it is posted
	reportNow(t, r, tg, successStatus)
	close(gate)
	waitUntil(t, "both posts", func() bool { return posted.count() == 2 && r.Pending() == 0 })

	if got, want := fmt.Sprint(postedStates(h.callsFor(tg, false))), fmt.Sprint([]string{
		"pending:" + pendingStatus.Description, "success:" + successStatus.Description,
	}); got != want {
		t.Fatalf("posts = %s, want %s", got, want)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.overlapped {
		t.Fatal("two posts for the same Target were in flight at once")
	}
}

// A Git host answering 500 for a while, then recovering, ends with the right
// final state and no duplicate posts, while the controller keeps reporting on
// every reconcile.
func TestReporterHostErrorsThenRecovers(t *testing.T) {
	var (
		hostMu sync.Mutex
		down   = true
	)
	h := newFakeProvider(func(context.Context, int, fakeCall) error {
		hostMu.Lock()
		defer hostMu.Unlock()
		if down {
			return errServerError
		}
		return nil
	})
	const base, maxDelay = 2 * time.Millisecond, 16 * time.Millisecond
	r, posted := newReporter(h, func(o *ReporterOptions) { o.BaseDelay, o.MaxDelay = base, maxDelay })
	testenv.RunT(t, r)
	tg := testTarget("git.example.com", "abc")

	// The controller: reports what it wants on every reconcile. The rollout
	// completes (pending → success) in the middle of the outage.
	var (
		mu      sync.Mutex
		want    = pendingStatus
		reports int
		stop    = make(chan struct{})
		stopped = make(chan struct{})
	)
	go func() {
		defer close(stopped)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			mu.Lock()
			r.Report(tg, want)
			reports++
			mu.Unlock()
		}
	}()
	failedWith := func(st State) int {
		n := 0
		for _, c := range h.callsFor(tg, false) {
			if c.Err != nil && c.Status.State == st {
				n++
			}
		}
		return n
	}
	waitUntil(t, "three failed attempts", func() bool { return failedWith(Pending) >= 3 })
	mu.Lock()
	want = successStatus
	mu.Unlock()
	waitUntil(t, "success failing twice", func() bool { return failedWith(Success) >= 2 })
	hostMu.Lock()
	down = false
	hostMu.Unlock()
	waitUntil(t, "the host to show success", func() bool { s, ok := h.shownFor(tg); return ok && s.State == Success })
	// Keep reconciling after the post: re-reports must be dropped.
	mu.Lock()
	after := reports
	mu.Unlock()
	waitUntil(t, "more reconciles", func() bool { mu.Lock(); defer mu.Unlock(); return reports >= after+20 })
	close(stop)
	<-stopped
	waitUntil(t, "nothing outstanding", func() bool { return r.Pending() == 0 && posted.count() == 1 })

	calls := h.allCalls()
	if got := postedStates(h.callsFor(tg, true)); len(got) != 1 || got[0] != "success:"+successStatus.Description {
		t.Fatalf("accepted posts = %v, want exactly one success", got)
	}
	if last := calls[len(calls)-1]; last.Err != nil || last.Status.State != Success {
		t.Fatalf("last attempt %+v, want the accepted success (nothing after it)", last)
	}
	// Reporting on every reconcile did not bypass the backoff: each retry
	// waited at least base·2^i (capped).
	for i := 1; i < len(calls); i++ {
		least := maxDelay
		if i < 8 {
			least = min(base<<(i-1), maxDelay)
		}
		if gap := calls[i].At.Sub(calls[i-1].At); gap < least {
			t.Errorf("attempt %d came %v after the previous one, want at least %v", i, gap, least)
		}
	}
}

func TestReporterRateLimitDelaysTheHost(t *testing.T) {
	const retryAfter = 300 * time.Millisecond
	a := testTarget("git.example.com", "aaa")
	b := testTarget("git.example.com", "bbb")
	c := testTarget("other.example.com", "ccc")
	h := newFakeProvider(func(_ context.Context, n int, _ fakeCall) error {
		if n == 0 {
			return &githost.RateLimitError{RetryAfter: retryAfter, Err: errors.New("429 Too Many Requests")}
		}
		return nil
	})
	// One worker and everything queued before it starts: a is attempted
	// first, then b (same host) and c (other host) would follow at once if
	// the rate limit did not hold b back.
	r, _ := newReporter(h, func(o *ReporterOptions) { o.Workers = 1 })
	for _, tg := range []Target{a, b, c} {
		reportNow(t, r, tg, pendingStatus)
	}
	testenv.RunT(t, r)
	waitUntil(t, "every status posted", func() bool { return r.Pending() == 0 })

	ca, cb, cc := h.callsFor(a, false), h.callsFor(b, false), h.callsFor(c, false)
	if len(ca) != 2 || len(cb) != 1 || len(cc) != 1 {
		t.Fatalf("attempts a=%d b=%d c=%d, want 2, 1, 1", len(ca), len(cb), len(cc))
	}
	limited := ca[0].At
	if gap := ca[1].At.Sub(limited); gap < retryAfter {
		t.Errorf("a retried %v after the rate limit, want at least Retry-After %v", gap, retryAfter)
	}
	if gap := cb[0].At.Sub(limited); gap < retryAfter {
		t.Errorf("b (same host) posted %v after the rate limit, want at least %v", gap, retryAfter)
	}
	if !cc[0].At.Before(cb[0].At) {
		t.Errorf("c (other host) was held back with b: c at %v, b at %v", cc[0].At, cb[0].At)
	}
}

// A 503 that says when to come back holds the whole host back that long, as
// a rate limit does, rather than retrying on the Target's own (shorter)
// backoff.
func TestReporterUnavailableHonoursRetryAfter(t *testing.T) {
	const retryAfter = 400 * time.Millisecond
	a := testTarget("git.example.com", "aaa")
	b := testTarget("git.example.com", "bbb")
	h := newFakeProvider(func(_ context.Context, n int, _ fakeCall) error {
		if n == 0 {
			return &githost.UnavailableError{RetryAfter: retryAfter, Err: errors.New("503 Service Unavailable")}
		}
		return nil
	})
	// A base delay far below Retry-After: a retry on backoff would come early.
	r, _ := newReporter(h, func(o *ReporterOptions) { o.Workers, o.BaseDelay = 1, 10*time.Millisecond })
	reportNow(t, r, a, pendingStatus)
	reportNow(t, r, b, pendingStatus)
	testenv.RunT(t, r)
	waitUntil(t, "every status posted", func() bool { return r.Pending() == 0 })

	ca, cb := h.callsFor(a, false), h.callsFor(b, false)
	if len(ca) != 2 || len(cb) != 1 {
		t.Fatalf("attempts a=%d b=%d, want 2, 1", len(ca), len(cb))
	}
	if gap := ca[1].At.Sub(ca[0].At); gap < retryAfter {
		t.Errorf("a retried %v after the 503, want at least Retry-After %v", gap, retryAfter)
	}
	if gap := cb[0].At.Sub(ca[0].At); gap < retryAfter {
		t.Errorf("b (same host) posted %v after the 503, want at least %v", gap, retryAfter)
	}
}

func TestReporterRateLimitWithoutRetryAfterBacksOff(t *testing.T) {
	const base = 100 * time.Millisecond
	a := testTarget("git.example.com", "aaa")
	b := testTarget("git.example.com", "bbb")
	h := newFakeProvider(func(_ context.Context, n int, _ fakeCall) error {
		if n == 0 {
			return &githost.RateLimitError{Err: errors.New("403 rate limit exceeded")}
		}
		return nil
	})
	r, _ := newReporter(h, func(o *ReporterOptions) { o.Workers, o.BaseDelay, o.MaxDelay = 1, base, time.Second })
	reportNow(t, r, a, pendingStatus)
	reportNow(t, r, b, pendingStatus)
	testenv.RunT(t, r)
	waitUntil(t, "every status posted", func() bool { return r.Pending() == 0 })

	ca, cb := h.callsFor(a, false), h.callsFor(b, false)
	if len(ca) != 2 || len(cb) != 1 {
		t.Fatalf("attempts a=%d b=%d, want 2, 1", len(ca), len(cb))
	}
	if gap := ca[1].At.Sub(ca[0].At); gap < base {
		t.Errorf("a retried after %v, want at least the base delay %v", gap, base)
	}
	if gap := cb[0].At.Sub(ca[0].At); gap < base {
		t.Errorf("b (same host) posted %v after the rate limit, want at least %v", gap, base)
	}
}

func TestReporterPermanentErrorNotRetried(t *testing.T) {
	h := newFakeProvider(func(_ context.Context, _ int, c fakeCall) error {
		if c.Status.State == Failure {
			return &githost.PermanentError{Err: errors.New("422 Unprocessable Entity")}
		}
		return nil
	})
	logs := newErrorLogSink()
	r, posted := newReporter(h, func(o *ReporterOptions) { o.Logger = logr.New(logs) })
	testenv.RunT(t, r)
	tg := testTarget("git.example.com", "abc")

	reportNow(t, r, tg, failureStatus)
	waitUntil(t, "the refused status concluded", func() bool { return r.Pending() == 0 })
	// Reported again on later reconciles: not retried, not logged again.
	for range 3 {
		reportNow(t, r, tg, failureStatus)
		if got := r.Pending(); got != 0 {
			t.Fatalf("Pending = %d after re-reporting a refused status, want 0", got)
		}
	}
	if got := len(h.allCalls()); got != 1 {
		t.Fatalf("%d attempts for a permanently refused status, want 1", got)
	}
	if posted.count() != 0 {
		t.Fatal("OnPosted called for a refused status")
	}
	if got := logs.errorLines(); len(got) != 1 {
		t.Errorf("error logs = %q, want one", got)
	}

	// A new status for the Target is tried.
	reportNow(t, r, tg, successStatus)
	waitUntil(t, "the new status posted", func() bool { return posted.count() == 1 && r.Pending() == 0 })
	if got := postedStates(h.callsFor(tg, true)); len(got) != 1 || got[0] != "success:"+successStatus.Description {
		t.Fatalf("accepted posts = %v, want success", got)
	}
}

func TestReporterFullQueue(t *testing.T) {
	gate := make(chan struct{})
	h := newFakeProvider(func(ctx context.Context, n int, _ fakeCall) error {
		if n == 0 {
			select {
			case <-gate:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	})
	r, posted := newReporter(h, func(o *ReporterOptions) { o.QueueSize, o.Workers = 2, 1 })
	testenv.RunT(t, r)
	a, b, c := testTarget("git.example.com", "aaa"), testTarget("git.example.com", "bbb"), testTarget("git.example.com", "ccc")

	if !reportNow(t, r, a, pendingStatus) {
		t.Fatal("Report refused a with an empty queue")
	}
	waitUntil(t, "a in flight", func() bool { return len(h.allCalls()) == 1 })
	if !reportNow(t, r, b, pendingStatus) {
		t.Fatal("Report refused b with one slot free")
	}
	// Full: the in-flight a and the queued b.
	if reportNow(t, r, c, pendingStatus) {
		t.Fatal("Report accepted c with a full queue")
	}
	// Newer statuses for Targets already outstanding need no room.
	if !reportNow(t, r, a, successStatus) || !reportNow(t, r, b, successStatus) {
		t.Fatal("Report refused a newer status for an outstanding Target")
	}
	if got := r.Pending(); got != 2 {
		t.Fatalf("Pending = %d, want 2", got)
	}

	close(gate)
	waitUntil(t, "a and b posted", func() bool { return r.Pending() == 0 })
	if !reportNow(t, r, c, pendingStatus) {
		t.Fatal("Report refused c after the queue drained")
	}
	waitUntil(t, "c posted", func() bool { return len(h.callsFor(c, true)) == 1 })

	if got := fmt.Sprint(postedStates(h.callsFor(a, true))); got != fmt.Sprint([]string{
		"pending:" + pendingStatus.Description, "success:" + successStatus.Description,
	}) {
		t.Errorf("posts to a = %s, want pending then success", got)
	}
	if got := postedStates(h.callsFor(b, true)); len(got) != 1 || got[0] != "success:"+successStatus.Description {
		t.Errorf("posts to b = %v, want only success (latest wins)", got)
	}
	waitUntil(t, "OnPosted for every post", func() bool { return posted.count() == 4 })
}

func TestReporterFullQueueDoesNotBlockWithoutWorkers(t *testing.T) {
	// Never started: nothing drains, as with every worker stuck on a dead
	// host.
	r, _ := newReporter(newFakeProvider(nil), func(o *ReporterOptions) { o.QueueSize = 3 })
	for i := range 3 {
		if !reportNow(t, r, testTarget("git.example.com", fmt.Sprint(i)), pendingStatus) {
			t.Fatalf("Report %d refused below QueueSize", i)
		}
	}
	for i := 3; i < 6; i++ {
		if reportNow(t, r, testTarget("git.example.com", fmt.Sprint(i)), pendingStatus) {
			t.Fatalf("Report %d accepted beyond QueueSize", i)
		}
	}
	if got := r.Pending(); got != 3 {
		t.Fatalf("Pending = %d, want 3", got)
	}
}

func TestReporterSeed(t *testing.T) {
	h := newFakeProvider(nil)
	r, posted := newReporter(h, nil)
	tg := testTarget("git.example.com", "abc")
	// After a restart: the controller recorded pending as posted.
	r.Seed(tg, pendingStatus)
	testenv.RunT(t, r)

	reportNow(t, r, tg, pendingStatus)
	if got := r.Pending(); got != 0 {
		t.Fatalf("Pending = %d after reporting the seeded status, want 0", got)
	}
	reportNow(t, r, tg, successStatus)
	waitUntil(t, "success posted", func() bool { return posted.count() == 1 && r.Pending() == 0 })

	// A stale Seed does not override what the Reporter itself posted.
	r.Seed(tg, pendingStatus)
	reportNow(t, r, tg, successStatus)
	if got := r.Pending(); got != 0 {
		t.Fatalf("Pending = %d after re-reporting success after a stale Seed, want 0", got)
	}
	if got := postedStates(h.allCalls()); len(got) != 1 || got[0] != "success:"+successStatus.Description {
		t.Fatalf("posts = %v, want only success", got)
	}
}

func TestReporterProviderForFails(t *testing.T) {
	var mu sync.Mutex
	resolved := 0
	logs := newErrorLogSink()
	r, posted := newReporter(newFakeProvider(nil), func(o *ReporterOptions) {
		o.Logger = logr.New(logs)
		o.Providers = func(githost.Repository) (Provider, error) {
			mu.Lock()
			defer mu.Unlock()
			resolved++
			return nil, errors.New("no credentials for git.example.com")
		}
	})
	count := func() int { mu.Lock(); defer mu.Unlock(); return resolved }
	testenv.RunT(t, r)
	tg := testTarget("git.example.com", "abc")

	reportNow(t, r, tg, pendingStatus)
	waitUntil(t, "the status dropped", func() bool { return r.Pending() == 0 })
	if got := count(); got != 1 {
		t.Fatalf("provider resolved %d times, want 1 (no retry loop)", got)
	}
	if got := logs.errorLines(); len(got) != 1 {
		t.Errorf("error logs = %q, want one", got)
	}
	if posted.count() != 0 {
		t.Fatal("OnPosted called without a provider")
	}
	// The next reconcile tries again (the credentials may be fixed by now).
	reportNow(t, r, tg, pendingStatus)
	waitUntil(t, "a second resolution", func() bool { return count() == 2 && r.Pending() == 0 })
}

func TestReporterForgetsOldestIdleTargets(t *testing.T) {
	h := newFakeProvider(nil)
	r, posted := newReporter(h, nil)
	r.idle.Resize(2)
	testenv.RunT(t, r)
	a, b, c := testTarget("git.example.com", "aaa"), testTarget("git.example.com", "bbb"), testTarget("git.example.com", "ccc")
	for i, tg := range []Target{a, b, c} {
		reportNow(t, r, tg, pendingStatus)
		waitUntil(t, "posted", func() bool { return posted.count() == i+1 })
	}
	if n := r.remembered(); n != 2 {
		t.Fatalf("%d Targets remembered, want 2", n)
	}
	// c is remembered; a, the oldest, was forgotten and is posted again.
	reportNow(t, r, c, pendingStatus)
	if got := r.Pending(); got != 0 {
		t.Fatalf("Pending = %d after re-reporting a remembered Target, want 0", got)
	}
	reportNow(t, r, a, pendingStatus)
	waitUntil(t, "a posted again", func() bool { return len(h.callsFor(a, true)) == 2 })
}

func TestReporterRunnable(t *testing.T) {
	// A post stuck on a dead host does not keep Start from returning: the
	// testenv.RunT's cleanup fails the test if Start hangs.
	h := newFakeProvider(func(ctx context.Context, _ int, _ fakeCall) error {
		<-ctx.Done()
		return ctx.Err()
	})
	r, _ := newReporter(h, nil)

	// What controller-runtime's manager needs to run it on the leader only.
	var runnable interface {
		Start(context.Context) error
		NeedLeaderElection() bool
	} = r
	if !runnable.NeedLeaderElection() {
		t.Error("NeedLeaderElection = false; only the leader may post statuses")
	}

	testenv.RunT(t, r)
	reportNow(t, r, testTarget("git.example.com", "abc"), pendingStatus)
	waitUntil(t, "the post in flight", func() bool { return len(h.allCalls()) == 1 })
	if err := r.Start(context.Background()); err == nil {
		t.Error("second Start succeeded")
	}
}

func TestReporterFinishesPostsInFlightOnShutdown(t *testing.T) {
	// A rolling update stops the controller right after it posted: the host
	// has the status, its answer is on the way. Cut off, the post would not be
	// recorded and the next process would post the same status again.
	release := make(chan struct{})
	h := newFakeProvider(func(ctx context.Context, _ int, _ fakeCall) error {
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	r, pl := newReporter(h, func(o *ReporterOptions) { o.ShutdownGrace = 10 * time.Second })
	tg := testTarget("git.example.com", "abc")
	stop, done := startWithPostInFlight(t, r, h, tg, successStatus)

	stop()
	select {
	case err := <-done:
		t.Fatalf("Start returned (%v) with a post in flight inside the grace", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	waitStopped(t, done, "once the post in flight finished")
	if n := pl.count(); n != 1 {
		t.Errorf("OnPosted called %d times, want 1: the post finished during shutdown must be recorded", n)
	}
	if calls := h.callsFor(tg, true); len(calls) != 1 {
		t.Errorf("accepted posts %v, want exactly one", postedStates(calls))
	}
}

func TestReporterShutdownGraceBoundsAPostInFlight(t *testing.T) {
	h := newFakeProvider(func(ctx context.Context, _ int, _ fakeCall) error {
		<-ctx.Done()
		return ctx.Err()
	})
	r, pl := newReporter(h, func(o *ReporterOptions) { o.ShutdownGrace = 200 * time.Millisecond })
	stop, done := startWithPostInFlight(t, r, h, testTarget("git.example.com", "abc"), successStatus)
	stop()
	waitStopped(t, done, "after the shutdown grace")
	if n := pl.count(); n != 0 {
		t.Errorf("OnPosted called %d times for a post the grace cut off", n)
	}
}

// startWithPostInFlight runs r under a context of its own, reports s to tg
// and waits until h has the post. It returns what stops r and Start's
// result; unlike testenv.RunT, the test decides when r stops.
func startWithPostInFlight(t *testing.T, r *Reporter, h *fakeProvider, tg Target, s Status) (stop context.CancelFunc, done <-chan error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	result := make(chan error, 1)
	go func() { result <- r.Start(ctx) }()
	reportNow(t, r, tg, s)
	waitUntil(t, "the post in flight", func() bool { return len(h.allCalls()) == 1 })
	return cancel, result
}

// waitStopped fails the test unless Start returns nil soon; when says after
// what it should have.
func waitStopped(t *testing.T, done <-chan error, when string) {
	t.Helper()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Start returned %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Start did not return " + when)
	}
}

// newReadingReporter builds a Reporter on a host that can say what it
// shows, with target seeded as showing pending (the record of a previous
// process), and runs it.
func newReadingReporter(t *testing.T, readErr error, mod func(*ReporterOptions)) (*Reporter, *readingProvider, *postedLog, Target) {
	t.Helper()
	h := &readingProvider{fakeProvider: newFakeProvider(nil), err: readErr}
	r, posted := newReporter(h.fakeProvider, func(o *ReporterOptions) {
		o.Providers = func(githost.Repository) (Provider, error) { return h, nil }
		if mod != nil {
			mod(o)
		}
	})
	tg := testTarget("git.example.com", "abc")
	r.Seed(tg, pendingStatus)
	testenv.RunT(t, r)
	return r, h, posted, tg
}

// The previous process posted success and was killed before recording it:
// its record says pending, the host shows success. Success is not posted
// again, and OnPosted lets the record catch up.
func TestReporterSeededReadsWhatTheHostShows(t *testing.T) {
	r, h, posted, tg := newReadingReporter(t, nil, nil)
	h.show(tg, successStatus)

	reportNow(t, r, tg, successStatus)
	waitUntil(t, "success settled", func() bool { return r.Pending() == 0 && posted.count() == 1 })
	if calls := h.allCalls(); len(calls) != 0 {
		t.Fatalf("posts = %v, want none: the host shows success already", postedStates(calls))
	}
	posted.mu.Lock()
	if got := posted.posts[0]; got.State != Success || got.Description != successStatus.Description {
		t.Errorf("OnPosted with %+v, want success", got)
	}
	posted.mu.Unlock()
	if n := h.reads.Load(); n != 1 {
		t.Errorf("Shows called %d times, want 1", n)
	}
	// Reporting success again is deduplicated as after a post.
	reportNow(t, r, tg, successStatus)
	if got := r.Pending(); got != 0 {
		t.Errorf("Pending = %d after reporting success again, want 0", got)
	}
}

// The host shows what the record says (pending): success is posted.
func TestReporterSeededPostsWhenTheHostShowsTheRecord(t *testing.T) {
	r, h, posted, tg := newReadingReporter(t, nil, nil)
	h.show(tg, pendingStatus)

	reportNow(t, r, tg, successStatus)
	// OnPosted comes after the slot settles, outside the reporter's lock:
	// wait for it too, then make sure it came once.
	waitUntil(t, "success posted", func() bool { return len(h.callsFor(tg, true)) == 1 && r.Pending() == 0 && posted.count() > 0 })
	if n := posted.count(); n != 1 {
		t.Errorf("OnPosted called %d times, want 1", n)
	}
	if n := h.reads.Load(); n != 1 {
		t.Errorf("Shows called %d times, want 1", n)
	}
}

// A failed read never stops a status: it is logged at V(1) and posted.
func TestReporterSeededPostsWhenTheReadFails(t *testing.T) {
	var mu sync.Mutex
	var logged []string
	logger := funcr.New(func(prefix, args string) {
		mu.Lock()
		defer mu.Unlock()
		logged = append(logged, args)
	}, funcr.Options{Verbosity: 1})
	r, h, _, tg := newReadingReporter(t, errServerError, func(o *ReporterOptions) { o.Logger = logger })
	h.show(tg, successStatus)

	reportNow(t, r, tg, successStatus)
	waitUntil(t, "success posted", func() bool { return len(h.callsFor(tg, true)) == 1 && r.Pending() == 0 })
	mu.Lock()
	defer mu.Unlock()
	if len(logged) != 1 || !strings.Contains(logged[0], "Reading the commit status the host shows failed") || !strings.Contains(logged[0], errServerError.Error()) {
		t.Errorf("logged %q, want the failed read once", logged)
	}
}

// A Target that was never seeded (a new commit) is posted without a read:
// no extra request per commit.
func TestReporterUnseededNeverReads(t *testing.T) {
	r, h, _, _ := newReadingReporter(t, nil, nil)
	tg := testTarget("git.example.com", "def")
	for _, s := range []Status{pendingStatus, successStatus} {
		reportNow(t, r, tg, s)
		waitUntil(t, string(s.State)+" posted", func() bool { return r.Pending() == 0 })
	}
	if got := postedStates(h.callsFor(tg, true)); len(got) != 2 {
		t.Errorf("posts = %v, want pending and success", got)
	}
	if n := h.reads.Load(); n != 0 {
		t.Errorf("Shows called %d times for a Target never seeded, want 0", n)
	}
}

// A seeded Target is read once, whatever the answer: later statuses are
// posted (or deduplicated) on what this process knows.
func TestReporterSeededReadsOnce(t *testing.T) {
	for _, shown := range []Status{successStatus, pendingStatus} {
		t.Run(string(shown.State), func(t *testing.T) {
			r, h, _, tg := newReadingReporter(t, nil, nil)
			h.show(tg, shown)
			for _, s := range []Status{successStatus, failureStatus, successStatus} {
				reportNow(t, r, tg, s)
				waitUntil(t, string(s.State)+" settled", func() bool { return r.Pending() == 0 })
			}
			if n := h.reads.Load(); n != 1 {
				t.Errorf("Shows called %d times, want 1", n)
			}
			want := 2 // failure, then success again
			if shown == pendingStatus {
				want = 3
			}
			if got := postedStates(h.callsFor(tg, true)); len(got) != want {
				t.Errorf("posts = %v, want %d", got, want)
			}
		})
	}
}
