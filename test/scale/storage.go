package main

import (
	"fmt"

	dto "github.com/prometheus/client_model/go"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/claimwarden/claimwarden/test/benchkit"
)

// simulatorClaims is the storage simulator's claim controller, whose
// controller-runtime metrics are in this process's registry.
const simulatorClaims = "storagesim-claims"

// storageReport is what the storage simulator's claim controller did in a
// window: whether the storage share of a resize step was its own queue
// (claims waiting for a worker) or the time its reconciles took (its
// requests to the API server).
type storageReport struct {
	Reconciles float64 `json:"reconciles"`
	// Workers are its concurrent reconciles; Busy is the share of their
	// time spent reconciling.
	Workers float64 `json:"workers"`
	Busy    float64 `json:"busy"`
	// QueueWaitMean and ReconcileMean are per claim reconcile, in seconds.
	QueueWaitMean float64 `json:"queueWaitMeanSeconds"`
	ReconcileMean float64 `json:"reconcileMeanSeconds"`
}

// storageCounters are the simulator's counters at one instant.
type storageCounters struct {
	queueSum, queueCount, workSum, workCount, workers float64
}

func isSimulatorClaims(m *dto.Metric) bool {
	return benchkit.Label(m, "name") == simulatorClaims || benchkit.Label(m, "controller") == simulatorClaims
}

// sampleStorage reads the simulator's counters from this process's registry.
func sampleStorage() (storageCounters, error) {
	got, err := metrics.Registry.Gather()
	if err != nil {
		return storageCounters{}, err
	}
	fams := map[string]*dto.MetricFamily{}
	for _, f := range got {
		fams[f.GetName()] = f
	}
	var c storageCounters
	c.queueSum, c.queueCount = histogram(fams["workqueue_queue_duration_seconds"], isSimulatorClaims)
	c.workSum, c.workCount = histogram(fams["workqueue_work_duration_seconds"], isSimulatorClaims)
	c.workers = benchkit.Sum(fams["controller_runtime_max_concurrent_reconciles"], isSimulatorClaims)
	return c, nil
}

// windowSample is the counters a measured window starts and ends with: the
// machine's and the processes' CPU, and the storage simulator's.
type windowSample struct {
	cpu     cpuSample
	storage storageCounters
}

// sampleWindow reads both kinds of counters now.
func (r *runner) sampleWindow() (windowSample, error) {
	c, err := r.sampleCPU()
	if err != nil {
		return windowSample{}, err
	}
	s, err := sampleStorage()
	return windowSample{cpu: c, storage: s}, err
}

// between is where the CPU went and what the storage did from w to end,
// seconds long.
func (w windowSample) between(end windowSample, seconds float64) (cpuReport, storageReport) {
	return cpuBetween(w.cpu, end.cpu, seconds), storageBetween(w.storage, end.storage, seconds)
}

// storageBetween is the simulator's report for the window from a to b.
func storageBetween(a, b storageCounters, seconds float64) storageReport {
	rep := storageReport{Reconciles: b.workCount - a.workCount, Workers: b.workers}
	if n := b.queueCount - a.queueCount; n > 0 {
		rep.QueueWaitMean = (b.queueSum - a.queueSum) / n
	}
	if rep.Reconciles > 0 {
		rep.ReconcileMean = (b.workSum - a.workSum) / rep.Reconciles
	}
	if seconds > 0 && b.workers > 0 {
		rep.Busy = (b.workSum - a.workSum) / (seconds * b.workers)
	}
	return rep
}

func (s storageReport) String() string {
	return fmt.Sprintf("%.0f claim reconciles; %.0f workers busy %.0f%%; mean queue wait %.2fs, mean reconcile %.3fs",
		s.Reconciles, s.Workers, 100*s.Busy, s.QueueWaitMean, s.ReconcileMean)
}
