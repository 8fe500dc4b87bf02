package policies

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"
)

// Run on one core, as the targets are stated:
//
//	go test ./policies/ -run '^$' -bench Evaluate -cpu 1
//
// Targets: median verdict < 100µs; 10,000 claim changes in < 2s.

// engShipped starts an engine on the shipped policies.
func engShipped(b *testing.B) *Engine {
	e := engNew(b, Options{defaults: shipped})
	if st := e.Status(); !st.Ready {
		b.Fatalf("shipped policies: %s", st.Message)
	}
	return e
}

// BenchmarkEvaluate is the latency of one verdict on the shipped set: a
// claim growing by 50%, evaluated over and over. Besides ns/op (the mean)
// it reports the median and 99th percentile and verdicts/s.
func BenchmarkEvaluate(b *testing.B) {
	benchOne(b, engShipped(b), engInput(0, 100, 150))
}

// BenchmarkEvaluateFullInput is BenchmarkEvaluate with every input and
// policy of the shipped set in force (see engFullEngine).
func BenchmarkEvaluateFullInput(b *testing.B) {
	in := engInput(0, 100, 150)
	in.ResourceQuotas = engQuotas(0)
	benchOne(b, engFullEngine(b), in)
}

// BenchmarkEvaluateEveryInput is BenchmarkEvaluate with every input field
// filled in (ResourceQuotas too) on the shipped set as it ships: the issue's
// target is stated for the input of today, with the parameters' defaults
// (max_cost_increase off, no prices).
func BenchmarkEvaluateEveryInput(b *testing.B) {
	in := engInput(0, 100, 150)
	in.ResourceQuotas = engQuotas(0)
	benchOne(b, engShipped(b), in)
}

// BenchmarkEvaluate10kEveryInput is BenchmarkEvaluate10k with every input
// field filled in, on the shipped set as it ships.
func BenchmarkEvaluate10kEveryInput(b *testing.B) {
	ins := engVaried(10_000)
	for i := range ins {
		ins[i].ResourceQuotas = engQuotas(i)
	}
	bench10k(b, engShipped(b), ins)
}

// benchOne evaluates in once per op and reports the median, the 99th
// percentile, verdicts/s and CPU per verdict.
func benchOne(b *testing.B, e *Engine, in Input) {
	ctx := context.Background()
	if v := e.Evaluate(ctx, in); !v.Allowed {
		b.Fatalf("the benchmark claim change is denied: %+v", v)
	}
	took := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := engCPUTime()
	for range b.N {
		start := time.Now()
		e.Evaluate(ctx, in)
		took = append(took, time.Since(start))
	}
	cpu = engCPUTime() - cpu
	b.StopTimer()
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(took[len(took)*99/100].Nanoseconds()), "p99-ns")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "verdicts/s")
	engReportCPU(b, cpu, b.N)
}

// engReportCPU reports the CPU time per verdict and verdicts per CPU
// second: with -cpu 1 the process runs Go code on one core at a time, so
// this is the one-core throughput, whatever else the machine is doing.
func engReportCPU(b *testing.B, cpu time.Duration, verdicts int) {
	if cpu <= 0 {
		return
	}
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(verdicts), "cpu-ns/verdict")
	b.ReportMetric(float64(verdicts)/cpu.Seconds(), "verdicts/cpu-s")
}

// BenchmarkEvaluate10k re-evaluates 10,000 varied claim changes (what
// Changes() asks of the controller after a policy update): different
// claims, sizes, growths, shrinks and class changes, so no two inputs are
// alike. One op is all 10,000.
func BenchmarkEvaluate10k(b *testing.B) {
	bench10k(b, engShipped(b), engVaried(10_000))
}

// BenchmarkEvaluate10kFullInput is BenchmarkEvaluate10k with every input
// the shipped set reads filled in and every policy in force: two
// ResourceQuotas for quota-fits and the parameters of engFullEngine, so
// the newest policies cost what they would in a cluster that uses them.
func BenchmarkEvaluate10kFullInput(b *testing.B) {
	ins := engVaried(10_000)
	for i := range ins {
		ins[i].ResourceQuotas = engQuotas(i)
	}
	bench10k(b, engFullEngine(b), ins)
}

// engFullEngine runs the shipped set with the parameters that switch on
// what is off by default: prices and a max_cost_increase limit.
func engFullEngine(b *testing.B) *Engine {
	e := engNew(b, Options{defaults: shipped, Params: map[string]any{
		"max_cost_increase":              50,
		"storage_class_prices":           map[string]any{"fast": 0.08, "slow": 0.045},
		"volume_attributes_class_prices": map[string]any{"gold": 0.02},
	}})
	if st := e.Status(); !st.Ready {
		b.Fatalf("shipped policies: %s", st.Message)
	}
	return e
}

// engQuotas are a namespace-wide storage quota and a per-class one, with
// room that varies with i so that some changes do not fit.
func engQuotas(i int) []ResourceQuota {
	used := int64(200+i%300) * gi
	amount := func(hard, used int64) QuotaAmount {
		return QuotaAmount{Hard: fmt.Sprintf("%dGi", hard/gi), Used: fmt.Sprintf("%dGi", used/gi), HardValue: hard, UsedValue: used}
	}
	return []ResourceQuota{
		{Name: "storage", Resources: map[string]QuotaAmount{
			"requests.storage":       amount(500*gi, used),
			"persistentvolumeclaims": {Hard: "100", Used: "40", HardValue: 100, UsedValue: 40},
		}},
		{Name: "fast-class", Resources: map[string]QuotaAmount{
			"fast.storageclass.storage.k8s.io/requests.storage": amount(450*gi, used),
		}},
	}
}

// bench10k evaluates ins once per op and reports time and CPU per 10,000.
func bench10k(b *testing.B, e *Engine, ins []Input) {
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	cpu := engCPUTime()
	denied := 0
	for range b.N {
		for _, in := range ins {
			if !e.Evaluate(ctx, in).Allowed {
				denied++
			}
		}
	}
	cpu = engCPUTime() - cpu
	b.StopTimer()
	if denied == 0 {
		b.Fatal("no change was denied: the inputs do not exercise the policies")
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/10k")
	b.ReportMetric(float64(b.N*len(ins))/b.Elapsed().Seconds(), "verdicts/s")
	engReportCPU(b, cpu, b.N*len(ins))
	if cpu > 0 {
		b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/10k")
	}
}

// engVaried builds n different claim changes.
func engVaried(n int) []Input {
	ins := make([]Input, n)
	for i := range ins {
		from := int64(10 + i%90)
		to := from + int64(i%7) - 2 // mostly growth, some shrinks and no-ops
		switch i % 5 {
		case 0:
			to = from * 3 // over the default max step
		case 1:
			to = from + from/2
		}
		in := engInput(int32(i%50), from, to)
		in.Change.StatefulSet = "db-" + string(rune('a'+i%26))
		if i%11 == 0 {
			in.Change.StorageClassName = &StringChange{From: "fast", To: "slow"}
		}
		ins[i] = in
	}
	return ins
}

// BenchmarkEvaluateOverhead is the engine's own cost per verdict (input
// encoding and digest, lazy conversion, the prepared query's set-up, result
// reading): one trivial policy instead of the shipped set.
func BenchmarkEvaluateOverhead(b *testing.B) {
	e := engNew(b, Options{})
	in := engInput(0, 100, 150)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if !e.Evaluate(ctx, in).Allowed {
			b.Fatal("denied")
		}
	}
}
