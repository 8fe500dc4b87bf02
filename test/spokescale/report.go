package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
)

// simulation says, with every report, what was simulated and what the
// figures are therefore not.
func simulation(selector string) string {
	const spokes = `Simulated spokes: one spoke control plane (kube-apiserver, etcd, kwok, the storage
simulator) behind N TLS reverse proxies on ports of their own, each registered on the hub
by an Argo CD cluster Secret. claimwarden sees N distinct servers and builds N
cluster.Clusters (caches, watches, clients, a rollout controller each): its per-spoke
cost. The API server side is shared and is not what is measured. `
	if selector == measuredLabel+"=true" {
		return spokes + `The spoke's StatefulSets do
not match claimwarden's labelSelector: every simulated spoke caches them (and their
claims, Pods, namespaces), none reconciles them, since N rollout controllers on one real
cluster would each write the same VolumeClaimRollouts.`
	}
	return spokes + fmt.Sprintf(`With labelSelector %q every simulated spoke
reconciles the spoke's StatefulSets: N rollout controllers share one real cluster's
VolumeClaimRollouts, which no real hub does.`, selector)
}

// printTable writes the rows as a Markdown table, then each N's cost per
// spoke over N=0's, when there is a row with no spoke.
func printTable(w io.Writer, rows []row) {
	fmt.Fprintln(w, "| spokes | cache sync | peak RSS | RSS at rest | heap in use | goroutines | watches: hub | watches per spoke | spoke watches at its API server | TCP conns to spokes | spoke requests at start | 409s | load 1m before/after |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range rows {
		fmt.Fprintf(w, "| %d | %.1f s | %s | %s | %s | %.0f | %d | %s | %d | %d | %d | %d | %s/%s |\n",
			r.Spokes, r.CacheSync.Seconds(), kib(r.PeakRSS), kib(r.RestRSS), mib(r.HeapInuse), r.Goroutines,
			r.HubWatches, spread(r.SpokeWatches), r.APIServerWatches, r.SpokeConns, r.SpokeRequests, r.Conflicts,
			r.LoadBefore, r.LoadAfter)
	}
	i := slices.IndexFunc(rows, func(r row) bool { return r.Spokes == 0 })
	if i < 0 {
		return
	}
	base := rows[i]
	for _, r := range rows {
		if r.Spokes == 0 {
			continue
		}
		n := float64(r.Spokes)
		fmt.Fprintf(w, "per spoke at N=%d over N=0: RSS at rest %+.1f MiB, peak RSS %+.1f MiB, heap %+.1f MiB, %+.0f goroutines\n",
			r.Spokes, float64(r.RestRSS-base.RestRSS)/1024/n, float64(r.PeakRSS-base.PeakRSS)/1024/n,
			(r.HeapInuse-base.HeapInuse)/(1<<20)/n, (r.Goroutines-base.Goroutines)/n)
	}
}

// printLatency writes the first-step latencies on the hub and the spoke.
func printLatency(w io.Writer, l latencies) {
	fmt.Fprintln(w, "StatefulSet re-created with a bigger claim template -> claimwarden's first write to a claim (audit log):")
	for _, side := range []struct {
		name string
		d    []time.Duration
	}{{"in-cluster (hub)", l.Hub}, {"spoke", l.Spoke}} {
		fmt.Fprintf(w, "  %-16s %s\n", side.name, summary(side.d))
	}
}

// summary is n, min, median and max of ds, in milliseconds.
func summary(ds []time.Duration) string {
	if len(ds) == 0 {
		return "none"
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	ms := func(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }
	all := make([]string, len(ds))
	for i, d := range ds {
		all[i] = ms(d)
	}
	return fmt.Sprintf("n=%d min %s ms, median %s ms, max %s ms (rounds: %s)",
		len(s), ms(s[0]), ms(s[len(s)/2]), ms(s[len(s)-1]), strings.Join(all, ", "))
}

// spread is "-" for no spoke, the count when every spoke has the same,
// else min–max.
func spread(xs []int) string {
	if len(xs) == 0 {
		return "-"
	}
	lo, hi := slices.Min(xs), slices.Max(xs)
	if lo == hi {
		return strconv.Itoa(lo)
	}
	return fmt.Sprintf("%d–%d", lo, hi)
}

func kib(k int64) string   { return fmt.Sprintf("%.1f MiB", float64(k)/1024) }
func mib(b float64) string { return fmt.Sprintf("%.1f MiB", b/(1<<20)) }
