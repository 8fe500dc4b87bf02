package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"time"
)

// report is what the run measured.
type report struct {
	rest, proposing       window
	filling, pullRequests int
	toPullRequest         []time.Duration
	peakRSSKiB            int64
}

// print writes the report as Markdown tables.
func (r *report) print(w io.Writer, o options, bin string) {
	fmt.Fprintf(w, "\nclaimwarden %s; %d StatefulSets × %d claims (%s) in %d namespaces, one Flux Kustomization each, from %d repositories on Gitea; autoresize.interval %s; Prometheus scraping every 5s\n\n",
		bin, o.statefulSets, o.claims, claimSize, o.namespaces, o.repositories, o.interval)
	fmt.Fprintln(w, "| phase | rounds | Git host reads per round | Git host writes per round | Prometheus queries per round | API server GETs per round | API server writes per round | controller CPU (cores) |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	for _, p := range []struct {
		name string
		w    window
	}{{"at rest", r.rest}, {fmt.Sprintf("%d%% filling, until each has its pull request", o.fillingPercent), r.proposing}} {
		rounds := max(p.w.rounds, 1)
		fmt.Fprintf(w, "| %s | %.0f | %.1f | %.1f | %.1f | %.0f | %.0f | %.3f |\n", p.name, p.w.rounds,
			float64(p.w.git.Reads)/rounds, float64(p.w.git.Writes)/rounds, p.w.queries/rounds, p.w.apiGets/rounds, p.w.apiWrites/rounds, p.w.cpu/p.w.seconds)
	}
	fmt.Fprintf(w, "\n%d of %d filling StatefulSets got a pull request; from the fill to the pull request: median %s, max %s (%s per round)\n",
		r.pullRequests, r.filling, percentile(r.toPullRequest, 50), percentile(r.toPullRequest, 100), o.interval)
	fmt.Fprintf(w, "controller peak RSS %.1f MiB\n", float64(r.peakRSSKiB)/1024)
	fmt.Fprintln(w, "\nGit host requests while proposing, by endpoint:")
	for _, k := range slices.Sorted(maps.Keys(r.proposing.git.ByEndpoint)) {
		fmt.Fprintf(w, "  %5d %s\n", r.proposing.git.ByEndpoint[k], k)
	}
}

// percentile is the p-th percentile of sorted d (nearest rank).
func percentile(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	i := (p*len(d)+99)/100 - 1
	return d[max(i, 0)].Round(100 * time.Millisecond)
}
