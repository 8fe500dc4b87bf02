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
	rest, proposing, open window
	filling, pullRequests int
	toPullRequest         []time.Duration
	peakRSSKiB            int64
}

// print writes the report as Markdown tables.
func (r *report) print(w io.Writer, o options, bin string) {
	fmt.Fprintf(w, "\nclaimwarden %s; %d StatefulSets × %d claims (%s) in %d namespaces, one Flux Kustomization each, from %d repositories on Gitea; autoresize.interval %s; Prometheus scraping every 5s\n\n",
		bin, o.statefulSets, o.claims, claimSize, o.namespaces, o.repositories, o.interval)
	fmt.Fprintln(w, "| phase | rounds | Git host reads per round (conditional, answered 304) | Git host writes per round | Prometheus queries per round | API server GETs per round | API server writes per round | controller CPU (cores) |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	for _, p := range []struct {
		name string
		w    window
	}{
		{"at rest", r.rest},
		{fmt.Sprintf("%d%% filling, until each has its pull request", o.fillingPercent), r.proposing},
		{"their pull requests open, awaiting review", r.open},
	} {
		rounds := max(p.w.rounds, 1)
		fmt.Fprintf(w, "| %s | %.0f | %.1f (%.1f, %.1f) | %.1f | %.1f | %.0f | %.0f | %.3f |\n", p.name, p.w.rounds,
			float64(p.w.git.Reads)/rounds, float64(p.w.git.Conditional)/rounds, float64(p.w.git.NotModified)/rounds,
			float64(p.w.git.Writes)/rounds, p.w.queries/rounds, p.w.apiGets/rounds, p.w.apiWrites/rounds, p.w.cpu/p.w.seconds)
	}
	fmt.Fprintf(w, "\n%d of %d filling StatefulSets got a pull request; from the fill to the pull request: median %s, max %s (%s per round)\n",
		r.pullRequests, r.filling, percentile(r.toPullRequest, 50), percentile(r.toPullRequest, 100), o.interval)
	fmt.Fprintf(w, "controller peak RSS %.1f MiB\n", float64(r.peakRSSKiB)/1024)
	for _, p := range []struct {
		name     string
		w        window
		perRound bool
	}{{"while proposing", r.proposing, false}, {"while their pull requests are open, per round", r.open, true}} {
		fmt.Fprintf(w, "\nGit host requests %s, by endpoint:\n", p.name)
		for _, k := range slices.Sorted(maps.Keys(p.w.git.ByEndpoint)) {
			n := float64(p.w.git.ByEndpoint[k])
			if p.perRound {
				n /= max(p.w.rounds, 1)
			}
			fmt.Fprintf(w, "  %7.1f %s\n", n, k)
		}
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
