package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

// The test binary is its own child: TestMain runs the job when started so.
func TestMain(m *testing.M) {
	Main()
	os.Exit(m.Run())
}

func init() {
	Register("test-echo", func(job []byte) (any, error) {
		var s string
		err := json.Unmarshal(job, &s)
		return strings.ToUpper(s), err
	})
	Register("test-fail", func([]byte) (any, error) { return nil, errors.New("the chart says no") })
	Register("test-loop", func([]byte) (any, error) {
		// A loop that never ends, as a template's may.
		n := 0
		for n >= 0 {
			n = (n + 1) % 1000
		}
		return n, nil
	})
	Register("test-sleep", func([]byte) (any, error) {
		time.Sleep(time.Hour)
		return nil, nil
	})
	Register("test-alloc", func([]byte) (any, error) {
		// A string doubled until memory runs out, as a template may build one.
		s := []string{"x"}
		for {
			last := s[len(s)-1]
			s = append(s, last+last)
		}
	})
	Register("test-spew", func([]byte) (any, error) { return strings.Repeat("y", 4<<20), nil })
	Register("test-env", func([]byte) (any, error) { return os.Environ(), nil })
}

func runner(t *testing.T, l Limits) *Runner {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return NewRunner(self, l, 1)
}

func TestRunAnswers(t *testing.T) {
	var got string
	u, err := runner(t, Limits{}).Run(context.Background(), "test-echo", "chart", &got)
	if err != nil || got != "CHART" {
		t.Fatalf("got %q, %v", got, err)
	}
	if u.Wall <= 0 || u.MaxRSS <= 0 {
		t.Errorf("usage not measured: %+v", u)
	}
}

// The child inherits nothing of the controller's environment (a token in
// a variable would be the tenant's to print).
func TestRunEnvironment(t *testing.T) {
	t.Setenv("CLAIMWARDEN_TEST_SECRET", "s3cr3t")
	var env []string
	if _, err := runner(t, Limits{}).Run(context.Background(), "test-env", nil, &env); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(strings.Join(env, " "), "s3cr3t") {
		t.Fatalf("the child sees the parent's environment: %q", env)
	}
}

func TestRunHandlerError(t *testing.T) {
	var got string
	_, err := runner(t, Limits{}).Run(context.Background(), "test-fail", nil, &got)
	if err == nil || err.Error() != "the chart says no" || errors.Is(err, ErrLimit) {
		t.Fatalf("got %v", err)
	}
	_, err = runner(t, Limits{}).Run(context.Background(), "no-such-mode", nil, &got)
	if err == nil || !strings.Contains(err.Error(), `no handler for mode "no-such-mode"`) {
		t.Fatalf("got %v", err)
	}
}

// Each bound stops its job with an error naming it.
func TestRunBounds(t *testing.T) {
	for _, tc := range []struct {
		mode   string
		limits Limits
		want   string
	}{
		{"test-loop", Limits{CPU: time.Second, Timeout: time.Minute}, "used more than 1s of CPU time"},
		{"test-sleep", Limits{Timeout: 500 * time.Millisecond}, "did not finish within 500ms"},
		{"test-alloc", Limits{Memory: 64 << 20, Timeout: time.Minute}, "needed more than 64 MiB of memory"},
		{"test-spew", Limits{Output: 1 << 20}, "wrote more than 1 MiB"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			var got any
			start := time.Now()
			u, err := runner(t, tc.limits).Run(context.Background(), tc.mode, nil, &got)
			if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an ErrLimit saying %q", err, tc.want)
			}
			t.Logf("%s after %s (CPU %s, peak RSS %d MiB)", err, time.Since(start).Round(time.Millisecond), u.CPU.Round(time.Millisecond), u.MaxRSS>>20)
			if tc.mode == "test-alloc" && u.MaxRSS > 64<<20+128<<20 {
				t.Errorf("peak RSS %d MiB: far above the 64 MiB bound", u.MaxRSS>>20)
			}
		})
	}
}

// The parent's context ends the child too, and says so.
func TestRunCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	var got any
	_, err := runner(t, Limits{Timeout: time.Minute}).Run(ctx, "test-sleep", nil, &got)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
}

// A job waits for a free slot within its own context: a second job while
// the only slot is taken gives up when its context ends.
func TestRunSlots(t *testing.T) {
	r := runner(t, Limits{Timeout: time.Minute})
	r.slots <- struct{}{}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	var got string
	_, err := r.Run(ctx, "test-echo", "x", &got)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "waiting for a free slot") {
		t.Fatalf("got %v", err)
	}
	<-r.slots
	if _, err := r.Run(context.Background(), "test-echo", "x", &got); err != nil || got != "X" {
		t.Fatalf("got %q, %v", got, err)
	}
}
