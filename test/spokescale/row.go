package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/claimwarden/claimwarden/test/benchkit"
)

// row is claimwarden with a number of simulated spokes, at rest.
type row struct {
	Spokes int
	// CacheSync is from the process's start until every controller's
	// caches synced.
	CacheSync time.Duration
	// PeakRSS (VmHWM, start-up included) and RestRSS (VmRSS at rest), KiB.
	PeakRSS, RestRSS int64
	// HeapInuse (bytes) and Goroutines are the controller's own metrics at rest.
	HeapInuse, Goroutines float64
	// HubWatches and SpokeWatches (one per simulated spoke) are the watch
	// streams open at rest, counted at the proxies; SpokeConns the TCP
	// connections to the spokes' proxies.
	HubWatches   int
	SpokeWatches []int
	SpokeConns   int
	// APIServerWatches is the rise of the spoke's kube-apiserver's open
	// WATCH requests while claimwarden runs: the proxies' count, seen
	// from the server.
	APIServerWatches int
	// SpokeRequests is the API requests (watches left out) sent to all
	// spokes from the start until at rest; Conflicts the 409 answers
	// from any cluster.
	SpokeRequests, Conflicts int
	// LoadBefore and LoadAfter are the machine's 1-minute load average.
	LoadBefore, LoadAfter string
}

// measureRow starts claimwarden with n simulated spokes, waits until it
// is at rest, and measures it.
func (b *bench) measureRow(ctx context.Context, n int) (r row, err error) {
	r = row{Spokes: n, LoadBefore: loadAverage()}
	base, err := b.watchBaseline(ctx)
	if err != nil {
		return r, err
	}
	in, stop, err := b.startInstance(ctx, fmt.Sprintf("spokes-%02d", n), n, b.o.selector)
	defer func() {
		err = errors.Join(err, stop())
		r.LoadAfter = loadAverage()
	}()
	if err != nil {
		return r, err
	}
	if r.CacheSync, err = in.waitSynced(ctx); err != nil {
		return r, err
	}
	b.logf("  N=%d: caches synced after %.1fs; waiting until quiet", n, r.CacheSync.Seconds())
	if err := in.waitQuiet(ctx, b.o.settle, 5*time.Minute); err != nil {
		return r, err
	}
	if err := benchkit.Observe(ctx, in.proc, b.o.restWindow); err != nil {
		return r, err
	}
	mem, err := benchkit.ReadMemory(in.proc.Pid())
	if err != nil {
		return r, err
	}
	r.PeakRSS, r.RestRSS = mem.HWMKiB, mem.RSSKiB
	fams, err := benchkit.Scrape(ctx, "http://"+in.proc.MetricsAddr+"/metrics")
	if err != nil {
		return r, err
	}
	r.HeapInuse = benchkit.Sum(fams["go_memstats_heap_inuse_bytes"], nil)
	r.Goroutines = benchkit.Sum(fams["go_goroutines"], nil)
	hub := in.hub.counts()
	r.HubWatches, r.Conflicts = hub.Watches, hub.Conflicts
	for _, p := range in.spokes {
		c := p.counts()
		r.SpokeWatches = append(r.SpokeWatches, c.Watches)
		r.SpokeConns += c.Conns
		r.SpokeRequests += c.Requests
		r.Conflicts += c.Conflicts
	}
	served, err := apiServerWatches(ctx, b.spoke)
	if err != nil {
		return r, err
	}
	r.APIServerWatches = served - base
	return r, nil
}

// watchBaseline waits until the spoke's kube-apiserver no longer serves an
// earlier row's watches (its open WATCH requests are back to what they
// were before the first row) and returns the count. Other clients' watches
// may change meanwhile; after a minute the count is taken as it is.
func (b *bench) watchBaseline(ctx context.Context) (int, error) {
	var n int
	err := wait.PollUntilContextTimeout(ctx, time.Second, time.Minute, true, func(ctx context.Context) (bool, error) {
		var err error
		n, err = apiServerWatches(ctx, b.spoke)
		return err == nil && n <= b.idleWatches, err
	})
	if wait.Interrupted(err) && ctx.Err() == nil {
		b.logf("  the spoke's kube-apiserver serves %d watches, %d before the first row; measuring from %d", n, b.idleWatches, n)
		return n, nil
	}
	return n, err
}
