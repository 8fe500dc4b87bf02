package main

import (
	"errors"
	"fmt"
	"io"
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
		header += fmt.Sprintf("%d PVCs (%s)\t", t.statefulSets*t.replicas, t)
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
}
