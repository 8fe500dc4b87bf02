package policies

import (
	"context"
	"fmt"
	"runtime/metrics"
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

// engAllocated is the bytes the process has allocated on the heap so far.
func engAllocated() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// engDoubling is a policy whose rule s<i> is fn of s<i-1> (X in fn), from
// s0: with fn doubling its argument, s<n> is 2^n times s0. Each call is one builtin step, so the
// evaluation timeout cannot stop it before it allocates.
func engDoubling(n int, s0, fn string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "package claimwarden.claims\n\ns0 := %s\n", s0)
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "s%d := %s\n", i, strings.ReplaceAll(fn, "X", fmt.Sprintf("s%d", i-1)))
	}
	fmt.Fprintf(&b, "deny contains \"too long\" if count(s%d) > 0\n", n)
	return b.String()
}

func TestEngineValueLimitStopsDoubling(t *testing.T) {
	const s0 = `"0123456789abcdef"`
	for name, tc := range map[string]struct{ s0, fn string }{
		"concat":       {s0, `concat("", [X, X])`},
		"sprintf":      {s0, `sprintf("%s%s", [X, X])`},
		"replace":      {s0, `replace(X, "0", X)`},
		"array.concat": {"[" + s0 + "]", `array.concat(X, X)`},
	} {
		t.Run(name, func(t *testing.T) {
			// 26 doublings: 1 GiB at the end, 2 GiB allocated on the way.
			defaults := fstest.MapFS{"double.rego": {Data: []byte(engDoubling(26, tc.s0, tc.fn))}}
			e := engNew(t, Options{defaults: defaults, Timeout: 5 * time.Second})
			before := engAllocated()
			start := time.Now()
			v := e.Evaluate(context.Background(), engInput(0, 1, 2))
			took, allocated := time.Since(start), engAllocated()-before
			got := engDenied(v)
			if v.Allowed || !strings.Contains(got, "policy evaluation failed: policies/double.rego:") ||
				!strings.Contains(got, "would exceed policies.valueLimitBytes (16777216 bytes)") {
				t.Errorf("want a denial naming the value limit, got %q", got)
			}
			if allocated > 256<<20 {
				t.Errorf("the evaluation allocated %d MiB", allocated>>20)
			}
			t.Logf("denied after %s, %d MiB allocated: %s", took, allocated>>20, got)
		})
	}
}

func TestEngineValueLimitIsConfigurable(t *testing.T) {
	defaults := fstest.MapFS{"double.rego": {Data: []byte(engDoubling(20, `"0123456789abcdef"`, `concat("", [X, X])`))}}
	// 16 MiB at the end: under the default limit, over a 1 MiB one. Building
	// it takes over a second under -race on a busy machine: the timeout is
	// not what this test is about.
	if v := engNew(t, Options{defaults: defaults, Timeout: time.Minute}).Evaluate(context.Background(), engInput(0, 1, 2)); engDenied(v) != "unknown: too long" {
		t.Fatalf("default limit: %q", engDenied(v))
	}
	e := engNew(t, Options{defaults: defaults, ValueLimitBytes: 1 << 20})
	if got := engDenied(e.Evaluate(context.Background(), engInput(0, 1, 2))); !strings.Contains(got, "concat: its result (about 2097152 bytes) would exceed policies.valueLimitBytes (1048576 bytes)") {
		t.Fatalf("1 MiB limit: %q", got)
	}
}

func TestEngineValueLimitPredictions(t *testing.T) {
	// Each builtin whose result outgrows its arguments, called so that the
	// result would be far over a 1 KiB limit.
	for _, call := range []string{
		`sprintf("%999999d", [1])`,
		`replace("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb")`,
		`regex.replace("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb")`,
		`hex.encode(concat("", [sprintf("%d", [x]) | some x in numbers.range(0, 600)]))`,
		`strings.replace_n({"a": "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"}, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")`,
		`numbers.range(1, 100000)`,
		`split("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "")`,
		`json.marshal_with_options([[[[[["a"]]]]]], {"indent": "                                                                                                                                                                                                                  "})`,
		`bits.lsh(1, 100000)`,
	} {
		t.Run(call, func(t *testing.T) {
			defaults := fstest.MapFS{"big.rego": {Data: []byte("package claimwarden.claims\n\nbig := " + call + "\n\ndeny contains \"x\" if big\n")}}
			e := engNew(t, Options{defaults: defaults, ValueLimitBytes: 1 << 10})
			got := engDenied(e.Evaluate(context.Background(), engInput(0, 1, 2)))
			if !strings.Contains(got, "eval_builtin_error") || !strings.Contains(got, "would exceed") {
				t.Fatalf("got %q", got)
			}
		})
	}
}
