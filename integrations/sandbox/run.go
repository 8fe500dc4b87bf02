package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// ErrLimit says a job was stopped by one of its bounds; the error wrapping
// it names which.
var ErrLimit = errors.New("stopped by the sandbox's bounds")

// Runner starts sandbox children, at most a fixed number at once.
type Runner struct {
	// Path is the binary started as the child: the controller's own
	// (os.Executable), or the test binary in tests.
	Path   string
	Limits Limits
	// Observe, when set, is told what each child used (metrics).
	Observe func(Usage)
	slots   chan struct{}
}

// NewRunner starts children of the binary at path under limits (zero
// fields: DefaultLimits), concurrency at once (DefaultConcurrency when not
// positive): a job waits for a slot, within its context.
func NewRunner(path string, limits Limits, concurrency int) *Runner {
	if concurrency <= 0 {
		concurrency = DefaultConcurrency
	}
	return &Runner{Path: path, Limits: limits.withDefaults(), slots: make(chan struct{}, concurrency)}
}

// Usage is what one child used, for metrics and benchmarks.
type Usage struct {
	Wall, CPU time.Duration
	// MaxRSS is the child's peak resident memory, in bytes.
	MaxRSS int64
}

// Run runs job in a child as mode and decodes its result into result. An
// error wrapping ErrLimit when a bound stopped it (saying which), the
// handler's own error as it wrote it, or the parent context's error.
func (r *Runner) Run(ctx context.Context, mode string, job, result any) (Usage, error) {
	in, err := json.Marshal(job)
	if err != nil {
		return Usage{}, fmt.Errorf("sandbox: encoding the job: %w", err)
	}
	l := r.Limits
	if int64(len(in)) > l.Input {
		return Usage{}, fmt.Errorf("sandbox: the job has %d bytes, more than %d: %w", len(in), l.Input, ErrLimit)
	}
	select {
	case r.slots <- struct{}{}:
		defer func() { <-r.slots }()
	case <-ctx.Done():
		return Usage{}, fmt.Errorf("sandbox: waiting for a free slot: %w", ctx.Err())
	}
	runCtx, cancel := context.WithTimeout(ctx, l.Timeout)
	defer cancel()
	cmd := exec.CommandContext(runCtx, r.Path, Arg, mode,
		strconv.FormatInt(l.Memory, 10), strconv.FormatInt(int64(max(l.CPU/time.Second, 1)), 10), strconv.FormatInt(l.Input, 10))
	// Nothing of the controller's environment: the child needs none of it.
	cmd.Env = []string{"GOMAXPROCS=1", "GOTRACEBACK=none"}
	cmd.SysProcAttr = sysProcAttr()
	cmd.WaitDelay = time.Second
	cmd.Stdin = bytes.NewReader(in)
	stdout := &capped{max: l.Output, over: cancel}
	stderr := &capped{max: 4 << 10}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	start := time.Now()
	runErr := cmd.Run()
	u := usageOf(cmd.ProcessState, time.Since(start))
	if r.Observe != nil {
		r.Observe(u)
	}
	switch {
	case ctx.Err() != nil:
		return u, fmt.Errorf("sandbox: %w", ctx.Err())
	case stdout.isOver():
		return u, fmt.Errorf("sandbox: wrote more than %d MiB: %w", l.Output>>20, ErrLimit)
	case errors.Is(runCtx.Err(), context.DeadlineExceeded):
		return u, fmt.Errorf("sandbox: did not finish within %s: %w", l.Timeout, ErrLimit)
	case runErr != nil && (signaled(cmd.ProcessState, syscall.SIGXCPU) || u.CPU >= l.CPU):
		return u, fmt.Errorf("sandbox: used more than %s of CPU time: %w", l.CPU, ErrLimit)
	case runErr != nil && outOfMemory(stderr.bytes()):
		return u, fmt.Errorf("sandbox: needed more than %d MiB of memory: %w", l.Memory>>20, ErrLimit)
	case runErr != nil:
		return u, fmt.Errorf("sandbox: the child failed (%v): %s", runErr, bytes.TrimSpace(stderr.bytes()))
	}
	var a answer
	if err := json.Unmarshal(stdout.bytes(), &a); err != nil {
		return u, fmt.Errorf("sandbox: reading the answer: %w", err)
	}
	if a.Error != "" {
		return u, errors.New(a.Error)
	}
	if err := json.Unmarshal(a.Result, result); err != nil {
		return u, fmt.Errorf("sandbox: decoding the result: %w", err)
	}
	return u, nil
}

// outOfMemory reports whether a child's standard error says an allocation
// failed: the Go runtime's words, or the race detector's runtime's (the
// packages' tests run under it too).
func outOfMemory(stderr []byte) bool {
	return bytes.Contains(stderr, []byte("out of memory")) || bytes.Contains(stderr, []byte("ThreadSanitizer failed to allocate"))
}

func usageOf(ps *os.ProcessState, wall time.Duration) Usage {
	u := Usage{Wall: wall}
	if ps == nil {
		return u
	}
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok && ru != nil {
		u.CPU = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		u.MaxRSS = ru.Maxrss << 10 // kilobytes on Linux
	}
	return u
}

func signaled(ps *os.ProcessState, sig syscall.Signal) bool {
	if ps == nil {
		return false
	}
	ws, ok := ps.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == sig
}

// capped keeps the first max bytes written; past them it calls over (once)
// and drops the rest, so the copy from the child never blocks and the
// child is stopped at once.
type capped struct {
	mu   sync.Mutex
	max  int64
	buf  bytes.Buffer
	over func()
	hit  bool
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.max - int64(c.buf.Len()); int64(len(p)) > room {
		c.buf.Write(p[:max(room, 0)])
		if !c.hit && c.over != nil {
			c.over()
		}
		c.hit = true
		return len(p), nil
	}
	return c.buf.Write(p)
}

func (c *capped) isOver() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hit && c.over != nil
}

func (c *capped) bytes() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.Bytes()
}
