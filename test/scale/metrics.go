package main

import (
	"context"
	"fmt"
	"sort"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/claimwarden/claimwarden/test/benchkit"
)

// controllerName is the rollout controller's name in controller-runtime's
// metrics (controller_runtime_reconcile_total{controller=...}, workqueue_*{name=...}).
const controllerName = "volumeclaimrollout"

// snapshot is the controller's counters at one instant: what it reports
// about itself on /metrics, what the proxy counted, and its memory.
type snapshot struct {
	at time.Time
	// restByMethod is rest_client_requests_total summed over code and host.
	restByMethod map[string]float64
	// reconciles is controller_runtime_reconcile_total by result.
	reconciles      map[string]float64
	reconcileErrors float64
	// claimPatches is claimwarden_claim_patches_total by result.
	claimPatches map[string]float64
	// throttle is rest_client_rate_limiter_duration_seconds, the time
	// requests waited in client-go's client-side rate limiter. It is opt-in
	// in controller-runtime (RegisterRESTClientMetrics); throttleKnown says
	// whether the controller exports it.
	throttleSum   float64
	throttleKnown bool
	// workers is controller_runtime_max_concurrent_reconciles.
	workers float64
	// queue and work are the controller's workqueue wait and reconcile time.
	queueSum, queueCount float64
	workSum, workCount   float64
	heapInuse            float64
	// cpuSeconds is process_cpu_seconds_total: user and system time.
	cpuSeconds float64
	proxy      proxyCounts
}

// scrape reads the controller's /metrics and the proxy's counters together.
func (r *runner) scrape(ctx context.Context) (*snapshot, error) {
	// /metrics is read first: every request rest_client has counted by then
	// has passed the proxy already, so at a busy instant the proxy can only
	// count more, never less (see crossCheck).
	fams, err := benchkit.Scrape(ctx, r.ctrl.metricsURL)
	if err != nil {
		return nil, err
	}
	proxy := r.proxy.snapshot()
	s := &snapshot{
		at:              time.Now(),
		restByMethod:    byLabel(fams["rest_client_requests_total"], "method", nil),
		reconciles:      byLabel(fams["controller_runtime_reconcile_total"], "result", isController),
		reconcileErrors: benchkit.Sum(fams["controller_runtime_reconcile_errors_total"], isController),
		claimPatches:    byLabel(fams["claimwarden_claim_patches_total"], "result", nil),
		heapInuse:       benchkit.Sum(fams["go_memstats_heap_inuse_bytes"], nil),
		cpuSeconds:      benchkit.Sum(fams["process_cpu_seconds_total"], nil),
		proxy:           proxy,
	}
	_, s.throttleKnown = fams["rest_client_rate_limiter_duration_seconds"]
	s.throttleSum, _ = histogram(fams["rest_client_rate_limiter_duration_seconds"], nil)
	s.workers = benchkit.Sum(fams["controller_runtime_max_concurrent_reconciles"], isController)
	s.queueSum, s.queueCount = histogram(fams["workqueue_queue_duration_seconds"], isQueue)
	s.workSum, s.workCount = histogram(fams["workqueue_work_duration_seconds"], isQueue)
	return s, nil
}

func (s *snapshot) reconcileTotal() float64 {
	var n float64
	for _, v := range s.reconciles {
		n += v
	}
	return n
}

// proxyRequests counts the requests seen by the proxy, leaving out watches:
// a watch is one long-running request that client-go re-opens every few
// minutes whatever the controller does, so it says nothing about activity.
func (s *snapshot) proxyRequests() int64 {
	var n int64
	for k, v := range s.proxy.arrived {
		if k.Verb != "WATCH" {
			n += v
		}
	}
	return n
}

func isController(m *dto.Metric) bool { return benchkit.Label(m, "controller") == controllerName }

// isQueue matches the rollout controller's workqueue, whichever of the
// labels "name" or "controller" this controller-runtime version sets.
func isQueue(m *dto.Metric) bool {
	return benchkit.Label(m, "name") == controllerName || benchkit.Label(m, "controller") == controllerName
}

func byLabel(f *dto.MetricFamily, name string, keep benchkit.Filter) map[string]float64 {
	out := map[string]float64{}
	for _, m := range f.GetMetric() {
		if keep == nil || keep(m) {
			out[benchkit.Label(m, name)] += benchkit.Value(m)
		}
	}
	return out
}

func histogram(f *dto.MetricFamily, keep benchkit.Filter) (sum, count float64) {
	for _, m := range f.GetMetric() {
		if h := m.GetHistogram(); h != nil && (keep == nil || keep(m)) {
			sum += h.GetSampleSum()
			count += float64(h.GetSampleCount())
		}
	}
	return sum, count
}

// window is what the controller did between two snapshots.
type window struct {
	Seconds float64 `json:"seconds"`
	// Reconciles by result (success, error, requeue, requeue_after).
	Reconciles      map[string]float64 `json:"reconciles"`
	ReconcilesTotal float64            `json:"reconcilesTotal"`
	ReconcileErrors float64            `json:"reconcileErrors"`
	// ByMethod is the controller's own rest_client_requests_total, by HTTP method.
	ByMethod map[string]float64 `json:"byMethod"`
	// ByVerbResource is what the proxy counted, keyed "VERB resource[.group][/subresource]".
	ByVerbResource map[string]int64 `json:"byVerbResource"`
	// Writes are the POST, PUT, PATCH and DELETE requests the proxy counted.
	Writes int64 `json:"writes"`
	// ClaimPatches is claimwarden_claim_patches_total by result.
	ClaimPatches map[string]float64 `json:"claimPatches"`
	// ThrottledSeconds is the total time requests waited in client-go's
	// client-side rate limiter (rest_client_rate_limiter_duration_seconds);
	// nil when the controller does not export that metric.
	ThrottledSeconds *float64 `json:"throttledSeconds"`
	// AvgQueueSeconds and AvgReconcileSeconds are the mean workqueue wait and
	// reconcile duration of the rollout controller.
	AvgQueueSeconds     float64 `json:"avgQueueSeconds"`
	AvgReconcileSeconds float64 `json:"avgReconcileSeconds"`
	// Workers is the rollout controller's number of reconcile workers, and
	// WorkerBusy the share of the window they spent reconciling.
	Workers    float64 `json:"workers"`
	WorkerBusy float64 `json:"workerBusy"`
	// MeanLatencyMs is, per "VERB resource", the mean time from the request's
	// arrival at the proxy to its response: the API server's share of the
	// time a request takes (client-side throttling happens before).
	MeanLatencyMs map[string]float64 `json:"meanLatencyMs"`
	// Failed counts responses other than 2xx, keyed "VERB resource code".
	Failed map[string]int64 `json:"failed"`
	// PeakRate10s is, per resource type (one controller-runtime REST client
	// and token bucket each), the most requests in any 10 s of the window
	// divided by 10.
	PeakRate10s map[string]float64 `json:"peakRate10s"`
	// PatchShapes counts PATCHes by resource and the fields they write,
	// keyed "resource: shape" (see patchShape).
	PatchShapes map[string]int64 `json:"patchShapes"`
	// CrossCheck compares the proxy's counts per HTTP method with the
	// controller's rest_client_requests_total.
	CrossCheck string `json:"crossCheck"`
	// CPUSeconds is the controller's CPU time (user + system) in the window.
	CPUSeconds float64 `json:"cpuSeconds"`

	proxyByMethod map[string]int64
}

func (r *runner) diff(a, b *snapshot) window {
	w := window{
		Seconds:         b.at.Sub(a.at).Seconds(),
		Reconciles:      diffMap(a.reconciles, b.reconciles),
		ReconcileErrors: b.reconcileErrors - a.reconcileErrors,
		ByMethod:        diffMap(a.restByMethod, b.restByMethod),
		ClaimPatches:    diffMap(a.claimPatches, b.claimPatches),
		ByVerbResource:  map[string]int64{},
		proxyByMethod:   map[string]int64{},
	}
	w.ReconcilesTotal = b.reconcileTotal() - a.reconcileTotal()
	w.CPUSeconds = b.cpuSeconds - a.cpuSeconds
	for k, v := range b.proxy.arrived {
		if d := v - a.proxy.arrived[k]; d > 0 {
			w.ByVerbResource[k.String()] += d
			w.proxyByMethod[k.Method] += d
			if k.write() {
				w.Writes += d
			}
		}
	}
	w.MeanLatencyMs, w.Failed = map[string]float64{}, map[string]int64{}
	for k, codes := range b.proxy.done {
		var n int64
		for code, v := range codes {
			d := v - a.proxy.done[k][code]
			n += d
			if d > 0 && (code < 200 || code > 299) {
				w.Failed[fmt.Sprintf("%s %d", k, code)] += d
			}
		}
		if n > 0 {
			w.MeanLatencyMs[k.String()] = (b.proxy.latency[k] - a.proxy.latency[k]) / float64(n) * 1000
		}
	}
	w.PatchShapes = map[string]int64{}
	for k, shapes := range b.proxy.shapes {
		for shape, n := range shapes {
			if d := n - a.proxy.shapes[k][shape]; d > 0 {
				w.PatchShapes[k.Resource+": "+shape] += d
			}
		}
	}
	w.PeakRate10s = r.proxy.peakRates(a.at, b.at, 10)
	if a.throttleKnown && b.throttleKnown {
		t := b.throttleSum - a.throttleSum
		w.ThrottledSeconds = &t
	}
	if n := b.queueCount - a.queueCount; n > 0 {
		w.AvgQueueSeconds = (b.queueSum - a.queueSum) / n
	}
	if n := b.workCount - a.workCount; n > 0 {
		w.AvgReconcileSeconds = (b.workSum - a.workSum) / n
	}
	w.Workers = b.workers
	if w.Seconds > 0 && b.workers > 0 {
		w.WorkerBusy = (b.workSum - a.workSum) / w.Seconds / b.workers
	}
	w.CrossCheck = crossCheck(w.proxyByMethod, w.ByMethod)
	return w
}

// crossCheck reports whether the proxy saw exactly the requests the controller
// says it sent. rest_client counts a request when its response (for a watch:
// its headers) arrives, the proxy when the request arrives, so the two agree
// exactly between snapshots taken while the controller is quiet.
func crossCheck(proxy map[string]int64, rest map[string]float64) string {
	methods := map[string]bool{}
	for m := range proxy {
		methods[m] = true
	}
	for m, v := range rest {
		if v != 0 {
			methods[m] = true
		}
	}
	var mismatches []string
	for _, m := range sortedKeys(methods) {
		if float64(proxy[m]) != rest[m] {
			mismatches = append(mismatches, fmt.Sprintf("%s proxy %d vs rest_client %.0f", m, proxy[m], rest[m]))
		}
	}
	if len(mismatches) == 0 {
		return "exact match"
	}
	return fmt.Sprintf("MISMATCH: %v", mismatches)
}

func diffMap(a, b map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range b {
		if d := v - a[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
