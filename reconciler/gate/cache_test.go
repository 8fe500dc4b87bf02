package gate

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/claimwarden/claimwarden/policies"
)

// counted counts the evaluations that reach the engine behind the cache.
type counted struct {
	*policies.Engine
	n atomic.Int32
}

func (c *counted) Evaluate(ctx context.Context, in policies.Input) policies.Verdict {
	c.n.Add(1)
	return c.Engine.Evaluate(ctx, in)
}

// clock is the cache's time, moved by the test.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func cached(t *testing.T, ev policies.Evaluator, o CacheOptions) (*Cache, *clock) {
	t.Helper()
	c := NewCache(ev, o)
	clk := &clock{t: time.Unix(1_700_000_000, 0)}
	c.now = clk.now
	return c, clk
}

// claimInput is the policy input of web's one claim proposed at size, its
// facts filled in as Ask does.
func claimInput(t *testing.T, size string) policies.Input {
	t.Helper()
	res, err := Ask(context.Background(), engine(t, ""), proposal(t, 1, "fast", size), newSnapshot("false").facts())
	if err != nil {
		t.Fatal(err)
	}
	return res.Claims[0].Input
}

func TestCacheKeepsAllowedVerdictsAndRechecksDenials(t *testing.T) {
	ctx := context.Background()
	ev := &counted{Engine: engine(t, "")}
	c, clk := cached(t, ev, CacheOptions{Recheck: time.Minute})
	allowed := claimInput(t, "15Gi")
	denied := claimInput(t, "40Gi")

	for range 3 {
		if v := c.Evaluate(ctx, allowed); !v.Allowed {
			t.Fatalf("verdict %+v, want allowed", v)
		}
		if v := c.Evaluate(ctx, denied); v.Allowed {
			t.Fatalf("verdict %+v, want denied", v)
		}
	}
	if n := ev.n.Load(); n != 2 {
		t.Fatalf("%d evaluations, want one per input", n)
	}

	// Past the recheck interval the denial is asked again; the allowed
	// verdict stands until its input or the policies change.
	clk.t = clk.t.Add(time.Minute)
	c.Evaluate(ctx, allowed)
	if v := c.Evaluate(ctx, denied); v.Allowed {
		t.Fatalf("verdict %+v, want denied", v)
	}
	if n := ev.n.Load(); n != 3 {
		t.Fatalf("%d evaluations, want the denial re-asked once", n)
	}
	clk.t = clk.t.Add(time.Minute - time.Nanosecond)
	c.Evaluate(ctx, denied)
	if n := ev.n.Load(); n != 3 {
		t.Fatalf("%d evaluations, want the fresh denial cached", n)
	}
}

func TestCacheAsksAgainWhenThePoliciesChange(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e, err := policies.New(ctx, policies.Options{Dirs: []string{dir}, PollInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	ev := &counted{Engine: e}
	c, _ := cached(t, ev, CacheOptions{})
	in := claimInput(t, "15Gi")
	if v := c.Evaluate(ctx, in); !v.Allowed {
		t.Fatalf("verdict %+v, want allowed", v)
	}
	if err := os.WriteFile(filepath.Join(dir, "no.rego"), []byte(`package claimwarden.claims

deny contains {"policy": "no", "msg": "no"} if input.change.kind == "claim"
`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := e.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	if v := c.Evaluate(ctx, in); v.Allowed || ev.n.Load() != 2 {
		t.Errorf("verdict %+v after %d evaluations: want the new revision asked, and its denial", v, ev.n.Load())
	}
}

func TestCacheIsBounded(t *testing.T) {
	ctx := context.Background()
	ev := &counted{Engine: engine(t, "")}
	c, _ := cached(t, ev, CacheOptions{Size: 2})
	inputs := []policies.Input{
		claimInput(t, "11Gi"),
		claimInput(t, "12Gi"),
		claimInput(t, "13Gi"),
	}
	for _, in := range inputs {
		c.Evaluate(ctx, in)
	}
	if c.verdicts.Len() != 2 {
		t.Errorf("%d verdicts kept, want at most 2", c.verdicts.Len())
	}
	// The least recently used went first; the newest are still cached.
	c.Evaluate(ctx, inputs[2])
	c.Evaluate(ctx, inputs[1])
	if n := ev.n.Load(); n != 3 {
		t.Fatalf("%d evaluations, want the two newest cached", n)
	}
	c.Evaluate(ctx, inputs[0])
	if n := ev.n.Load(); n != 4 {
		t.Errorf("%d evaluations, want the oldest evicted and asked again", n)
	}
}

func TestCacheOptionsDefaults(t *testing.T) {
	if o := (CacheOptions{}).withDefaults(); o.Recheck != DefaultRecheck || o.Size != DefaultCacheSize {
		t.Errorf("defaults %+v", o)
	}
	if o := (CacheOptions{Recheck: time.Second, Size: 3}).withDefaults(); o.Recheck != time.Second || o.Size != 3 {
		t.Errorf("set values were changed: %+v", o)
	}
}
