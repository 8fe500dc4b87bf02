package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// tier is one scale run of a tiered bench: StatefulSets × replicas over
// namespaces, written "2000x3/20", optionally with the controller's
// --max-concurrent-patches, "200x3/10@3" (otherwise the flag's value), and
// in a big cluster's crowd of other objects, "200x3/10+crowd" (-crowd 1).
type tier struct {
	statefulSets, replicas, namespaces int
	concurrency                        int
	crowd                              bool
	// run of runs: the same tier run again (-runs) for a median, this
	// machine's speed drifting too much for one run to judge a ratio.
	run, runs int
}

func (t tier) String() string {
	s := fmt.Sprintf("%dx%d/%d", t.statefulSets, t.replicas, t.namespaces)
	if t.concurrency > 0 {
		s += fmt.Sprintf("@%d", t.concurrency)
	}
	if t.crowd {
		s += crowdSuffix
	}
	return s
}

// name is the tier and, when it runs several times, which run this is:
// "2000x3/20@3 run 2/3".
func (t tier) name() string {
	if t.runs <= 1 {
		return t.String()
	}
	return fmt.Sprintf("%s run %d/%d", t, t.run, t.runs)
}

// file is name as a file name's part: "2000x3ns20@3-run2".
func (t tier) file() string {
	s := strings.NewReplacer("/", "ns").Replace(t.String())
	if t.runs > 1 {
		s += fmt.Sprintf("-run%d", t.run)
	}
	return s
}

// repeated runs each tier runs times, one after the other.
func repeated(tiers []tier, runs int) []tier {
	out := make([]tier, 0, len(tiers)*runs)
	for _, t := range tiers {
		for i := 1; i <= runs; i++ {
			t.run, t.runs = i, runs
			out = append(out, t)
		}
	}
	return out
}

// crowdSuffix puts a tier in a big cluster's crowd (crowd.go).
const crowdSuffix = "+crowd"

// parseTiers reads a comma-separated list of tiers.
func parseTiers(s string) ([]tier, error) {
	var out []tier
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		body, crowd := strings.CutSuffix(f, crowdSuffix)
		spec, conc, hasConc := strings.Cut(body, "@")
		size, ns, ok := strings.Cut(spec, "/")
		sets, reps, ok2 := strings.Cut(size, "x")
		t := tier{crowd: crowd}
		var errs [4]error
		t.statefulSets, errs[0] = strconv.Atoi(sets)
		t.replicas, errs[1] = strconv.Atoi(reps)
		t.namespaces, errs[2] = strconv.Atoi(ns)
		if hasConc {
			if t.concurrency, errs[3] = strconv.Atoi(conc); t.concurrency < 1 {
				ok = false
			}
		}
		if !ok || !ok2 || errors.Join(errs[:]...) != nil ||
			t.statefulSets < 1 || t.replicas < 1 || t.namespaces < 1 || t.namespaces > t.statefulSets {
			return nil, fmt.Errorf("tier %q: want STATEFULSETSxREPLICAS/NAMESPACES[@MAXCONCURRENTPATCHES][+crowd], e.g. 2000x3/20, 200x3/10@3 or 200x3/10+crowd, with 1 ≤ namespaces ≤ StatefulSets", f)
		}
		out = append(out, t)
	}
	return out, nil
}

// printTiers is the side-by-side table of a tiered bench; a figure judged by
// a target is marked MISSED where it fails it.
func printTiers(w io.Writer, tiers []tier, reps []*Report) {
	fmt.Fprintln(w, "")
	fmt.Fprintln(w, "==== claimwarden scale tiers ====")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := "\t"
	for _, t := range tiers {
		header += fmt.Sprintf("%d PVCs (%s)\t", t.statefulSets*t.replicas, t.name())
	}
	fmt.Fprintln(tw, header)
	row := func(name string, cell func(*Report) string) {
		line := name + "\t"
		for _, r := range reps {
			if r == nil || r.Bump.AllReadySeconds == 0 {
				line += "failed\t"
				continue
			}
			line += cell(r) + "\t"
		}
		fmt.Fprintln(tw, line)
	}
	judged := func(r *Report, prefix, got string) string {
		for _, t := range r.Targets {
			if strings.HasPrefix(t.Name, prefix) && !t.Met {
				return got + " MISSED"
			}
		}
		return got
	}
	row("bump → all Ready", func(r *Report) string { return fmt.Sprintf("%.1fs", r.Bump.AllReadySeconds) })
	row("overhead (− lower bound), ≤ 30s", func(r *Report) string {
		return judged(r, "bump overhead", fmt.Sprintf("%.1fs", r.Bump.OverheadSeconds))
	})
	row("overhead per step p50", func(r *Report) string { return fmt.Sprintf("%.2fs", r.Bump.Steps.Overhead.P50) })
	row("overhead per step p90, ≤ 1s", func(r *Report) string {
		return judged(r, "overhead per resize step", fmt.Sprintf("%.2fs", r.Bump.Steps.Overhead.P90))
	})
	row("  of which controller p90", func(r *Report) string { return fmt.Sprintf("%.2fs", r.Bump.Steps.Controller.P90) })
	row("  of which storage p90", func(r *Report) string { return fmt.Sprintf("%.2fs", r.Bump.Steps.Storage.P90) })
	row("writes per PVC (floor), ≤ floor + 10%", func(r *Report) string {
		n := float64(max(r.Bump.PVCsChanged, 1))
		return judged(r, "writes per PVC changed", fmt.Sprintf("%.2f (%.2f)", float64(r.Bump.Requests.Writes)/n, float64(r.Bump.FloorWrites)/n))
	})
	row("PVC patches per PVC, = 1", func(r *Report) string {
		return judged(r, "PVC patches", fmt.Sprintf("%.2f", float64(r.Bump.ClaimPatches)/float64(max(r.Bump.PVCsChanged, 1))))
	})
	row("status writes per step (floor)", func(r *Report) string {
		floor := float64(r.Bump.Floor[floorStatus]) / float64(max(r.Bump.StepCount, 1))
		return judged(r, "VolumeClaimRollout status writes", fmt.Sprintf("%.2f (%.2f)", r.Bump.StatusWritesPerStep, floor))
	})
	row("controller CPU per PVC changed", func(r *Report) string { return fmt.Sprintf("%.1f ms", r.Bump.CPUSecondsPerPVC*1000) })
	row("peak RSS", func(r *Report) string {
		return judged(r, "controller peak RSS", fmt.Sprintf("%.0f MiB", r.Memory.PeakRSSMiB))
	})
	row("Go heap in use after the bump", func(r *Report) string { return fmt.Sprintf("%.0f MiB", r.Memory.HeapInuseMiB) })
	row("caches synced after start", func(r *Report) string {
		return judged(r, "caches synced", fmt.Sprintf("%.1fs", r.Setup.CacheSyncSeconds))
	})
	row("writes at rest, = 0", func(r *Report) string {
		return judged(r, "writes at rest", fmt.Sprint(r.Rest.Idle.Writes+r.Rest.NoOp.Writes))
	})
	row("Pods restarted, = 0", func(r *Report) string {
		return judged(r, "Pods restarted", fmt.Sprint(r.Bump.PodsRestarted))
	})
	row("manual procedure", func(r *Report) string { return fmt.Sprintf("%.1fs", r.Manual.Seconds) })
	row("time claimwarden / manual, ≤ 1.0", func(r *Report) string {
		return judged(r, "time against the manual", fmt.Sprintf("%.2f", r.Manual.TimeRatio))
	})
	row("requests claimwarden / manual", func(r *Report) string { return fmt.Sprintf("%.2f", r.Manual.RequestRatio) })
	row("machine busy, bump / manual", func(r *Report) string {
		return fmt.Sprintf("%.0f%% / %.0f%%", 100*r.Bump.CPU.Busy, 100*r.Manual.CPU.Busy)
	})
	row("  API server + etcd cores, bump / manual", func(r *Report) string {
		return fmt.Sprintf("%.2f / %.2f", r.Bump.CPU.cores(apiComponents...), r.Manual.CPU.cores(apiComponents...))
	})
	row("  claimwarden cores in the bump", func(r *Report) string { return fmt.Sprintf("%.2f", r.Bump.CPU.cores("claimwarden")) })
	row("storage queue wait / reconcile, bump", func(r *Report) string {
		return fmt.Sprintf("%.2fs / %.3fs", r.Bump.Storage.QueueWaitMean, r.Bump.Storage.ReconcileMean)
	})
	row("storage queue wait / reconcile, manual", func(r *Report) string {
		return fmt.Sprintf("%.2fs / %.3fs", r.Manual.Storage.QueueWaitMean, r.Manual.Storage.ReconcileMean)
	})
	row("setup (create → all Ready)", func(r *Report) string { return fmt.Sprintf("%.0fs", r.Setup.ReadySeconds) })
	tw.Flush()
	printMedians(w, tiers, reps)
}

// printMedians prints, for each tier run several times, the median of its
// runs' ratios to the manual procedure and each run's figure; a failed run
// has none.
func printMedians(w io.Writer, tiers []tier, reps []*Report) {
	type ratios struct{ time, requests []float64 }
	var order []string
	by := map[string]*ratios{}
	for i, t := range tiers {
		if t.runs <= 1 {
			continue
		}
		k := t.String()
		if by[k] == nil {
			by[k] = &ratios{}
			order = append(order, k)
		}
		if r := reps[i]; r != nil && r.Bump.AllReadySeconds > 0 && r.Manual.Seconds > 0 {
			by[k].time = append(by[k].time, r.Manual.TimeRatio)
			by[k].requests = append(by[k].requests, r.Manual.RequestRatio)
		}
	}
	for _, k := range order {
		r := by[k]
		fmt.Fprintf(w, "%s: claimwarden / manual, median of %d runs: time %s, requests %s\n",
			k, len(r.time), median(r.time), median(r.requests))
	}
}

// median renders the median of xs and, in brackets, xs in run order.
func median(xs []float64) string {
	if len(xs) == 0 {
		return "none (every run failed)"
	}
	s := slices.Sorted(slices.Values(xs))
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	each := make([]string, len(xs))
	for i, x := range xs {
		each[i] = fmt.Sprintf("%.2f", x)
	}
	return fmt.Sprintf("%.2f (%s)", m, strings.Join(each, ", "))
}
