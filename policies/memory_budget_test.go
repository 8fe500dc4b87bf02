package policies

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"
)

// budgetAccumulating is a policy that collects n strings of 16·2^depth
// bytes in a comprehension, each one concat call: every result is within
// the value limit when 16·2^depth is, the collection is not.
func budgetAccumulating(depth, n int) string {
	var b strings.Builder
	b.WriteString("package claimwarden.claims\n\ns0 := \"0123456789abcdef\"\n")
	for i := 1; i <= depth; i++ {
		fmt.Fprintf(&b, "s%d := concat(\"\", [s%d, s%d])\n", i, i-1, i-1)
	}
	fmt.Fprintf(&b, "acc := [concat(\"\", [s%d, format_int(i, 10)]) | some i in numbers.range(1, %d)]\n", depth, n)
	b.WriteString("deny contains \"accumulated\" if count(acc) > 0\n")
	return b.String()
}

// budgetCrossProduct is a policy building nine million pairs from two
// ranges, each well within the value limit.
const budgetCrossProduct = `package claimwarden.claims

pairs := [x | some a in numbers.range(1, 3000); some b in numbers.range(1, 3000); x := [a, b]]

deny contains "paired" if count(pairs) > 0
`

// budgetPolicies are the shapes the budget must stop, with the value
// limit of the tests (1 MiB): 512 KiB strings, at most 1 GiB of them
// should the budget fail.
var budgetPolicies = map[string]string{
	"accumulating":  budgetAccumulating(15, 2000),
	"cross-product": budgetCrossProduct,
}

// heapPeak samples the heap (as the guard reads it) until stopped and
// returns the largest growth over its value at the start, after a GC.
func heapPeak() (stop func() uint64) {
	runtime.GC()
	base := heapBytes()
	peak := base
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(100 * time.Microsecond)
		defer t.Stop()
		for {
			peak = max(peak, heapBytes())
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	})
	return func() uint64 {
		close(done)
		wg.Wait()
		return peak - base
	}
}

// budgetEvaluate evaluates n claim changes at once.
func budgetEvaluate(e *Engine, n int) []Verdict {
	out := make([]Verdict, n)
	var wg sync.WaitGroup
	for i := range out {
		wg.Go(func() { out[i] = e.Evaluate(context.Background(), engInput(int32(i), 100, 150)) })
	}
	wg.Wait()
	return out
}

func TestEngineMemoryBudgetStopsPolicies(t *testing.T) {
	const budget = 16 << 20
	// The slack covers what is built between two samples of the watchdog
	// and the builtin calls in progress when it cancels (one 512 KiB
	// string or range per slot), and the garbage of the test's own GC
	// cycle.
	const slack = 16 << 20
	for name, policy := range budgetPolicies {
		for _, claims := range []int{1, 8} {
			t.Run(fmt.Sprintf("%s/%d", name, claims), func(t *testing.T) {
				// The timeout is not what this test is about (and -race
				// is slow): the budget must stop the policy first.
				e := engNew(t, Options{
					defaults:          fstest.MapFS{"p.rego": {Data: []byte(policy)}},
					MemoryBudgetBytes: budget, ValueLimitBytes: 1 << 20, Timeout: time.Minute,
				})
				stop := heapPeak()
				start := time.Now()
				verdicts := budgetEvaluate(e, claims)
				took, grew := time.Since(start), stop()
				for _, v := range verdicts {
					if got := engDenied(v); v.Allowed || !strings.Contains(got, "policy-engine: policy evaluation stopped: memory budget of 16 MiB exceeded") {
						t.Errorf("want a denial for the memory budget, got %q", got)
					}
				}
				if grew > budget+slack {
					t.Errorf("the heap grew by %d MiB, over the budget (16 MiB) and slack (16 MiB)", grew>>20)
				}
				t.Logf("%d denials after %s, heap grew by at most %d MiB", claims, took, grew>>20)
			})
		}
	}
}

// A policy that needs little memory is not denied by a small budget,
// however many evaluations run at once.
func TestEngineMemoryBudgetAllowsNormalPolicies(t *testing.T) {
	e := engNew(t, Options{defaults: shipped, MemoryBudgetBytes: 16 << 20})
	for range 50 {
		for _, v := range budgetEvaluate(e, 8) {
			if !v.Allowed {
				t.Fatalf("denied: %s", engDenied(v))
			}
		}
	}
}

// BenchmarkPolicyMemory measures the heap the budget leaves a policy that
// builds too much, with the shipped limits (16 MiB values, 1s timeout),
// for one claim and four at once:
//
//	go test ./policies/ -run '^$' -bench PolicyMemory -benchtime 1x
//
// "before" stands for the engine without a budget: all claims at once and
// a 3 GiB budget, only so that a run cannot exhaust the machine.
func BenchmarkPolicyMemory(b *testing.B) {
	shapes := []struct{ name, policy string }{
		// 8 MiB strings, at most 400 of them.
		{"accumulating", budgetAccumulating(19, 400)},
		{"cross-product", budgetCrossProduct},
	}
	for _, shape := range shapes {
		for _, claims := range []int{1, 4} {
			for _, variant := range []string{"before", "after"} {
				b.Run(fmt.Sprintf("%s/claims=%d/%s", shape.name, claims, variant), func(b *testing.B) {
					e := engNew(b, Options{defaults: fstest.MapFS{"p.rego": {Data: []byte(shape.policy)}}})
					if variant == "before" {
						e.guard = newMemoryGuard(3<<30, 64)
					}
					var grew uint64
					var outcome string
					for range b.N {
						stop := heapPeak()
						verdicts := budgetEvaluate(e, claims)
						grew = max(grew, stop())
						outcome = engDenied(verdicts[0])
					}
					b.ReportMetric(float64(grew>>20), "peak-heap-MiB")
					b.Logf("peak heap growth %d MiB; first verdict: %s", grew>>20, outcome)
				})
			}
		}
	}
}
