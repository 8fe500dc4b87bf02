package main

import (
	"math"
	"strings"
	"testing"

	"github.com/prometheus/procfs"
)

func TestCPUBetween(t *testing.T) {
	a := cpuSample{
		machine: procfs.CPUStat{User: 100, System: 50, Idle: 800, Iowait: 50},
		procs:   map[string]float64{"kube-apiserver": 10, "claimwarden": 2, "etcd": 9, "gone": 1},
	}
	b := cpuSample{
		// 10 s on 2 cores: 20 CPU seconds, of which 5 idle or waiting.
		machine: procfs.CPUStat{User: 110, System: 55, Idle: 804, Iowait: 51},
		procs:   map[string]float64{"kube-apiserver": 22, "claimwarden": 3, "etcd": 1, "new": 4},
	}
	rep := cpuBetween(a, b, 10)
	if math.Abs(rep.Busy-0.75) > 1e-9 {
		t.Errorf("Busy = %v, want 0.75", rep.Busy)
	}
	// A process whose counter went back restarted, one in a single sample
	// was not there the whole window: neither has a figure for it.
	want := map[string]float64{"kube-apiserver": 12, "claimwarden": 1}
	if len(rep.ByComponent) != len(want) {
		t.Errorf("ByComponent = %v, want %v", rep.ByComponent, want)
	}
	for n, v := range want {
		if got := rep.ByComponent[n]; math.Abs(got-v) > 1e-9 {
			t.Errorf("ByComponent[%s] = %v, want %v", n, got, v)
		}
	}
	if got := rep.cores(apiComponents...); math.Abs(got-1.2) > 1e-9 {
		t.Errorf("API server + etcd cores = %v, want 1.2", got)
	}
	s := rep.String()
	if !strings.Contains(s, "75% busy") || strings.Index(s, "kube-apiserver") > strings.Index(s, "claimwarden") {
		t.Errorf("String() = %q: want the busy share and the busiest component first", s)
	}
}

func TestStorageBetween(t *testing.T) {
	a := storageCounters{queueSum: 10, queueCount: 100, workSum: 5, workCount: 100, workers: 4}
	b := storageCounters{queueSum: 70, queueCount: 130, workSum: 17, workCount: 130, workers: 4}
	rep := storageBetween(a, b, 10)
	if rep.Reconciles != 30 || rep.QueueWaitMean != 2 || rep.ReconcileMean != 0.4 || rep.Busy != 0.3 {
		t.Errorf("storageBetween = %+v, want 30 reconciles, queue wait 2 s, reconcile 0.4 s, busy 0.3", rep)
	}
	if empty := storageBetween(a, a, 10); empty.QueueWaitMean != 0 || empty.ReconcileMean != 0 {
		t.Errorf("an idle window = %+v, want zero means", empty)
	}
}
